"""paddlectl as an ONNX backend (``onnx.backend.base.Backend``), so ONNX's own conformance suite
(``onnx.backend.test.BackendTest``) and any tool written against that interface can drive the
importer and the executor: ``prepare`` imports the model once, ``rep.run(inputs)`` executes it.

A paddlectl program has static ranks and never reads a size from data, so a graph input that a
node needs as a constant (a Reshape target, TopK's ``k``, Slice bounds fed at run time), or that
such a constant is computed from (a window function's size), cannot be imported as an input. The
rep binds such integer inputs per call instead: it imports the model with their values fixed (as
initializers) and keeps one program per distinct set of values. Only ``"CPU"`` is
supported: the executor runs the ops' NumPy/Numba kernels.
"""

from __future__ import annotations

import importlib
from collections import namedtuple

import numpy as np

from ..errors import OnnxImportError, ShapeError
from ..static.executor import Executor
from .builder import DataDependentError
from .converters import RULES
from .dependency import onnx
from .functions import expand_functions
from .importer import load_onnx_model, onnx_to_program
from .validate import DTYPES, opset_of

_base = importlib.import_module("onnx.backend.base")  # after .dependency, which names the missing extra
Backend, BackendRep, Device, DeviceType = _base.Backend, _base.BackendRep, _base.Device, _base.DeviceType
MAX_BINDINGS = 64
"""Distinct values of the bound inputs kept per rep (each is one imported program)."""


def _bound_model(model, values: dict):
    """``model`` with the graph inputs in ``values`` turned into initializers of those values."""
    bound = onnx.ModelProto()
    bound.CopyFrom(model)
    keep = [i for i in bound.graph.input if i.name not in values]
    del bound.graph.input[:]
    bound.graph.input.extend(keep)
    bound.graph.initializer.extend(onnx.numpy_helper.from_array(np.asarray(v), n) for n, v in values.items())
    return bound


def _inputs_behind(model, name: str, inputs: list) -> list:
    """``name`` itself where it is a graph input, else the integer/bool graph inputs it is computed
    from (in the graph with function ops expanded, as the importer sees it), not counting those
    only read for their shape or size."""
    if name in inputs:
        return [name]
    graph, _ = expand_functions(model, opset_of(model), RULES)
    producer = {out: node for node in graph.node for out in node.output}
    kinds = {i.name: i.type.tensor_type.elem_type for i in model.graph.input}
    integer = {t for t, d in DTYPES.items() if np.dtype(d).kind in "iub"}
    found, seen, stack = [], set(), [name]
    while stack:
        value = stack.pop()
        if not value or value in seen:
            continue
        seen.add(value)
        if value in inputs:
            found += [value] if kinds.get(value) in integer else []
            continue
        node = producer.get(value)
        if node is not None and node.op_type not in ("Shape", "Size"):
            stack.extend(node.input)
    return found


class PaddlectlRep(BackendRep):
    """An imported model: ``run`` feeds the graph inputs (a list in graph order, or a dict by name)
    and returns the graph outputs as a named tuple, as onnx's reference backends do."""

    def __init__(self, model) -> None:
        self._model = model
        initializers = {t.name for t in model.graph.initializer}
        self._inputs = [i.name for i in model.graph.input if i.name not in initializers]
        self._outputs = namedtuple("Outputs", [f"o{i}" for i in range(len(model.graph.output))])
        self._bound: tuple = ()  # graph inputs imported as constants, per call
        self._programs: dict = {}
        try:
            self._programs[()] = self._import({})
        except _Rebind:
            pass  # imported on each run with new values of the bound inputs

    def _import(self, values: dict):
        """(Executor, the names it is fed) for the model with ``values`` bound; a new data-dependent
        input found on the way is bound too."""
        model = _bound_model(self._model, values) if values else self._model
        try:
            program, meta = onnx_to_program(model)
        except DataDependentError as exc:
            new = [n for n in _inputs_behind(self._model, exc.name, self._inputs) if n not in self._bound]
            if not new:
                raise
            self._bound += tuple(new)
            raise _Rebind from None
        return Executor(program), [i["name"] for i in meta["inputs"]]

    def run(self, inputs, **kwargs):
        if isinstance(inputs, dict):
            missing = sorted(set(self._inputs) - set(inputs))
            if missing:
                raise ShapeError(f"onnx backend: inputs {missing} are not fed; the model takes {self._inputs}")
            feeds = {n: np.asarray(inputs[n]) for n in self._inputs}
        else:
            inputs = [inputs] if isinstance(inputs, np.ndarray) else list(inputs)
            if len(inputs) != len(self._inputs):
                raise ShapeError(f"onnx backend: the model takes {len(self._inputs)} inputs {self._inputs}, "
                                 f"got {len(inputs)}")  # fmt: skip
            feeds = {n: np.asarray(x) for n, x in zip(self._inputs, inputs, strict=True)}
        executor, names = self._program(feeds)
        outs = executor.run([feeds[n] for n in names])
        return self._outputs(*(np.asarray(o) for o in outs))

    def _program(self, feeds: dict):
        while True:
            values = {n: feeds[n] for n in self._bound}
            key = tuple((n, v.dtype.str, v.shape, v.tobytes()) for n, v in values.items())
            if key in self._programs:
                return self._programs[key]
            if len(self._programs) >= MAX_BINDINGS:
                raise OnnxImportError(f"onnx backend: more than {MAX_BINDINGS} distinct values of the inputs "
                                      f"{list(self._bound)} that size the program; fix them in the model")  # fmt: skip
            try:
                self._programs[key] = self._import(values)
            except _Rebind:
                continue
            return self._programs[key]


class _Rebind(Exception):
    """Internal: one more graph input must be bound; import again."""


class PaddlectlBackend(Backend):
    """``prepare(model)`` -> PaddlectlRep; ``model`` is an ``onnx.ModelProto`` or a path."""

    @classmethod
    def prepare(cls, model, device: str = "CPU", **kwargs) -> PaddlectlRep:
        if not cls.supports_device(device):
            raise OnnxImportError(f"onnx backend: device {device!r} is not supported; paddlectl runs on 'CPU'")
        if not isinstance(model, onnx.ModelProto):
            model = load_onnx_model(model)
        return PaddlectlRep(model)

    @classmethod
    def run_model(cls, model, inputs, device: str = "CPU", **kwargs):
        return cls.prepare(model, device, **kwargs).run(inputs)

    @classmethod
    def supports_device(cls, device: str) -> bool:
        return Device(device).type == DeviceType.CPU


prepare = PaddlectlBackend.prepare
run_model = PaddlectlBackend.run_model
supports_device = PaddlectlBackend.supports_device
