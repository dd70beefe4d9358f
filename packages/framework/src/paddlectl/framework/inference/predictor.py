"""``create_predictor(config)`` -> ``Predictor``: Paddle's handle API and a plain ``run([arrays])``.

A predictor owns its input/output handles and nothing else mutable; the program and weights are
shared read-only, so ``clone()`` gives a cheap per-thread predictor. Feeds are checked against
the model's input specs before anything runs: an unknown name, a wrong rank, a dim that
contradicts the spec or a wrong dtype is refused with the expected value and the fix.
"""

from __future__ import annotations

import os
import threading

import numpy as np

from ..errors import DTypeError, ResourceError, ShapeError
from ..jit.saved_model import SavedModel, read_model_dir
from ..kernels.cores import free_cores, physical_cores
from ..static.passes import resolve
from .config import Config
from .optim_cache import content_key, file_key, worth_keeping
from .optim_cache import load as load_entry
from .optim_cache import store as store_entry
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


class _Source:
    """The model as saved (before the passes), shared by a predictor's clones: read on first use when
    the optimisation cache answered without it."""

    def __init__(self, path, saved: SavedModel | None) -> None:
        self._path = path
        self._saved = saved
        self._lock = threading.Lock()

    @property
    def program(self):
        with self._lock:
            if self._saved is None:
                self._saved = _load(self._path)
            return self._saved.program


def _optimized(config: Config, saved: SavedModel | None) -> tuple[OptimizedModel, int, dict, SavedModel | None]:
    """(the optimised model, its thread count, the model's meta, the saved model if it was read) for
    ``config``: from the optimisation cache when it holds this model with these settings, else by
    loading it (unless given) and running the passes, then stored."""
    threads_set = config.cpu_math_library_num_threads()
    folder, key = config.optim_cache_dir() if config.ir_optim() else None, None
    if folder is not None and worth_keeping(config.model_dir(), saved):
        disabled = sorted({resolve(name) for name in config.disabled_passes})
        settings = f"disabled {disabled} threads {threads_set or f'auto of {physical_cores()}'}"
        try:
            key = file_key(config.model_dir(), settings) if saved is None else content_key(saved, settings)
        except Exception:  # noqa: BLE001 - an unreadable model: the load below names the problem
            key = None
        hit = load_entry(folder, key) if key is not None else None
        if hit is not None:
            entry, result, threads = hit
            meta = saved.meta if saved is not None else entry.meta
            return OptimizedModel(result.program, result, config.memory_optim_enabled()), threads, meta, saved
    if saved is None:
        saved = _load(config.model_dir())
    threads = threads_set or default_threads(saved.program.weights)
    model = OptimizedModel.optimize(
        saved.program, config.ir_optim(), config.disabled_passes, config.memory_optim_enabled(), threads
    )
    if key is not None:
        store_entry(folder, key, model.result, saved.meta)
    return model, threads, saved.meta, saved


class Predictor:
    """Runs one saved model; not thread-safe itself, ``clone()`` one per thread."""

    def __init__(self, config: Config, saved: SavedModel | None = None) -> None:
        self._config = config
        self._model, self._threads, self._meta, saved = _optimized(config, saved)
        self._source = _Source(config.model_dir(), saved)
        self._make_handles()

    def _make_handles(self) -> None:
        self._inputs = {s["name"]: Tensor(s["name"], s, True) for s in self._meta["inputs"]}
        self._outputs = {s["name"]: Tensor(s["name"], s, False) for s in self._meta["outputs"]}

    @property
    def program(self):
        """The program as saved, before the passes."""
        return self._source.program

    def model_metadata(self) -> dict:
        """The model's free-form metadata (an imported ONNX model's ``metadata_props``)."""
        return dict(self._meta.get("metadata") or {})

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
        """The model's executor under the config's thread cap, or a batch in parts, one per thread; a new
        input shape is checked and planned (memory) before its first run, by the executor."""
        try:
            threads = min(self._threads, free_cores()) if self._threads > 1 else 1
            parts = self._model.batch_split.parts(arrays, threads)
            if parts > 1:  # each part a whole run on one core (inference.batch_split)
                outs = self._model.batch_split.run(arrays, parts)
                if outs is not None:
                    return outs
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
        twin = object.__new__(Predictor)
        twin.__dict__.update(
            _config=self._config, _model=self._model, _threads=self._threads, _meta=self._meta, _source=self._source
        )
        twin._make_handles()
        return twin

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
