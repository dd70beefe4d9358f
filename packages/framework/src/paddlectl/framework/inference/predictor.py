"""``create_predictor(config)`` -> ``Predictor``: Paddle's handle API and a plain ``run([arrays])``.

A predictor owns its input/output handles and nothing else mutable; the program and weights are
shared read-only, so ``clone()`` gives a cheap per-thread predictor. Feeds are checked against
the model's input specs before anything runs: an unknown name, a wrong rank, a dim that
contradicts the spec or a wrong dtype is refused with the expected value and the fix.
"""

from __future__ import annotations

import os

import numpy as np

from ..errors import DTypeError, ResourceError, ShapeError
from ..jit.saved_model import SavedModel, read_model_dir
from .config import Config
from .optimized import OptimizedModel
from .threads import call_limited, default_threads


def _load(path) -> SavedModel:
    """A saved model directory, or an ``.onnx`` file imported on the fly."""
    if os.path.isfile(path) and path.lower().endswith(".onnx"):
        from ..onnx.importer import import_onnx

        return import_onnx(path)
    return read_model_dir(path)


class Tensor:
    """An input or output handle (Paddle's ``paddle.inference.Tensor``)."""

    def __init__(self, name: str, spec: dict, is_input: bool) -> None:
        self._name = name
        self._spec = spec
        self._is_input = is_input
        self._shape: tuple | None = None
        self._data: np.ndarray | None = None

    @property
    def name(self) -> str:
        return self._name

    def type(self) -> np.dtype:
        return np.dtype(self._spec["dtype"])

    def reshape(self, shape) -> None:
        """Declare the next input's shape (checked against the spec now, and against the data later)."""
        if not self._is_input:
            raise ValueError(f"reshape: {self._name!r} is an output handle; only inputs are reshaped")
        shape = tuple(int(d) for d in shape)
        spec = self._spec["shape"]
        if len(shape) != len(spec) or any(isinstance(d, int) and d != n for d, n in zip(spec, shape, strict=False)):
            raise ShapeError(f"input {self._name!r}: shape {list(shape)} does not fit the model's {spec}")
        self._shape = shape

    def copy_from_cpu(self, data) -> None:
        if not self._is_input:
            raise ValueError(f"copy_from_cpu: {self._name!r} is an output handle; read it with copy_to_cpu()")
        array = np.asarray(data)
        want = np.dtype(self._spec["dtype"])
        if array.dtype != want:
            raise DTypeError(
                f"input {self._name!r}: expected {want.name} data, got {array.dtype.name}; convert it with "
                f".astype('{want.name}')"
            )
        if self._shape is not None and array.shape != self._shape:
            raise ShapeError(
                f"input {self._name!r}: reshape() declared {list(self._shape)}, data is {list(array.shape)}"
            )
        self._data = np.ascontiguousarray(array)

    def copy_to_cpu(self) -> np.ndarray:
        if self._data is None:
            raise ValueError(f"{self._name!r} holds no data yet; call predictor.run() first")
        return np.array(self._data, copy=True)

    def shape(self) -> list[int]:
        if self._data is not None:
            return list(self._data.shape)
        return list(self._shape) if self._shape is not None else list(self._spec["shape"])


class Predictor:
    """Runs one saved model; not thread-safe itself, ``clone()`` one per thread."""

    def __init__(self, config: Config, saved: SavedModel | None = None, _model: OptimizedModel | None = None) -> None:
        self._config = config
        self._saved = saved if saved is not None else _load(config.model_dir())
        self._threads = config.cpu_math_library_num_threads() or default_threads(self._saved.program.weights)
        self._model = _model or OptimizedModel(
            self._saved.program,
            config.ir_optim(),
            config.disabled_passes,
            config.memory_optim_enabled(),
            self._threads,
        )
        meta = self._saved.meta
        self._inputs = {s["name"]: Tensor(s["name"], s, True) for s in meta["inputs"]}
        self._outputs = {s["name"]: Tensor(s["name"], s, False) for s in meta["outputs"]}

    @property
    def program(self):
        return self._saved.program

    def model_metadata(self) -> dict:
        """The model's free-form metadata (an imported ONNX model's ``metadata_props``)."""
        return dict(self._saved.meta.get("metadata") or {})

    @property
    def optimized_program(self):
        """The program the predictor runs: the saved one after the pass pipeline."""
        return self._model.program

    def compile_report(self):
        """Fusion groups, ops fused, kernel compile/cache-load times, intermediate bytes saved (printable)."""
        return self._model.compile_report()

    def pass_report(self) -> str:
        """One line per pass: ran or switched off, ops changed, time."""
        result = self._model.result
        return result.summary() if result is not None else "passes: off (switch_ir_optim(False))"

    def memory_plan(self, shapes=None):
        """The buffer plan for input ``shapes`` (list in input order or {name: shape}), made before any run;
        a fixed-shape model needs no shapes. None when the memory_plan pass is off."""
        if shapes is None:
            planner = self._model.planner
            if planner is not None and planner.static is None:
                raise ValueError(f"memory_plan: the model has symbolic dims {planner.symbols}; pass the input shapes")
            return planner.static if planner is not None else None
        return self._model.plan(self._model.bindings_for(shapes))

    def planned_bytes(self, shapes=None) -> int | None:
        """Intermediate bytes one run needs, by the plan (see memory_plan)."""
        plan = self.memory_plan(shapes)
        return None if plan is None else plan.planned_bytes

    def get_input_names(self) -> list[str]:
        return list(self._inputs)

    def get_output_names(self) -> list[str]:
        return list(self._outputs)

    def get_input_handle(self, name: str) -> Tensor:
        return self._handle(self._inputs, name, "input")

    def get_output_handle(self, name: str) -> Tensor:
        return self._handle(self._outputs, name, "output")

    @staticmethod
    def _handle(handles: dict, name: str, what: str) -> Tensor:
        if name not in handles:
            raise KeyError(f"the model has no {what} named {name!r}; its {what}s are {list(handles)}")
        return handles[name]

    def run(self, inputs=None):
        """``run()`` reads the input handles and fills the output handles (returns True);
        ``run([arrays])`` takes the inputs in ``get_input_names()`` order and returns the outputs."""
        if inputs is None:
            missing = [n for n, h in self._inputs.items() if h._data is None]
            if missing:
                raise ValueError(
                    f"run(): inputs {missing} have no data; call get_input_handle(name).copy_from_cpu(array)"
                )
            outs = self._execute([h._data for h in self._inputs.values()])
            for handle, out in zip(self._outputs.values(), outs, strict=True):
                handle._data = out
            return True
        if isinstance(inputs, np.ndarray) or not isinstance(inputs, list | tuple):
            raise TypeError("run: pass a list of arrays, one per input in get_input_names() order")
        if len(inputs) != len(self._inputs):
            raise ShapeError(f"run: the model takes {len(self._inputs)} inputs {list(self._inputs)}, got {len(inputs)}")
        for handle, array in zip(self._inputs.values(), inputs, strict=True):
            handle._shape = None
            handle.copy_from_cpu(array)
        return self._execute([h._data for h in self._inputs.values()])

    def _execute(self, arrays: list) -> list[np.ndarray]:
        """The model's executor under the config's thread cap; a new input shape is checked and planned
        (memory) before its first run, by the executor."""
        try:
            return call_limited(self._threads, self._model.executor.run, arrays)
        except MemoryError as exc:
            raise ResourceError(
                f"run: the model ran out of memory on inputs of shapes {[list(a.shape) for a in arrays]} ({exc}); "
                "give smaller inputs (a smaller batch or image) or run it on a machine with more memory"
            ) from None

    def profile(self, inputs: list) -> dict[str, float]:
        """Seconds per op type over one run of ``inputs`` (arrays in input order), under the thread cap."""
        arrays = [np.ascontiguousarray(a) for a in inputs]
        return call_limited(self._threads, self._model.executor.profile, arrays)

    def clone(self) -> Predictor:
        """A predictor over the same (shared, read-only) program and weights, with its own handles."""
        return Predictor(self._config, self._saved, self._model)

    def clear_intermediate_tensor(self) -> None:
        """Nothing is kept between runs besides the handles' data."""

    def try_shrink_memory(self) -> None:
        for handle in [*self._inputs.values(), *self._outputs.values()]:
            handle._data = None


def create_predictor(config: Config) -> Predictor:
    """Load ``config.model_dir()`` (refusing a corrupted/newer-format directory) and return a Predictor."""
    if config.model_dir() is None:
        raise ValueError("create_predictor: the Config has no model directory; Config(model_dir) or set_model(dir)")
    return Predictor(config)
