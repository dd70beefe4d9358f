"""``paddle.jit.to_static``: a function or Layer turned into a traced Program that runs statically.

``to_static(layer, input_spec=[...])``, ``to_static(fn)`` and the decorator forms
(``@to_static``, ``@to_static(input_spec=[...])``, also on a Layer's ``forward``) return a
``StaticFunction``. It traces once per input signature: with an ``input_spec`` (symbolic dims
allowed) one program serves every matching input; without one, the first call's shapes fix it.
Calls run the program through the executor, with the layer's current weights.
"""

from __future__ import annotations

import functools

import numpy as np

from ..core.tensor import Tensor
from ..errors import ConversionError
from ..nn.layer.base import Layer
from ..static.executor import Executor
from ..static.input_spec import InputSpec, signatures
from ..static.ir import Program
from ..static.trace import param_names, trace


class StaticFunction:
    """A traced callable: ``.program`` (after the first trace), ``.input_spec``, ``__call__``."""

    def __init__(self, function, input_spec=None, layer=None) -> None:
        self._function = function
        self._layer = layer
        self.input_spec = list(input_spec) if input_spec is not None else None
        self._programs: dict = {}
        self._executors: dict[int, tuple[Executor, tuple]] = {}
        self.output_structure = "tensor"
        functools.update_wrapper(self, function)

    def __get__(self, instance, owner=None):
        """``@to_static`` on a method: bind to the instance (a Layer's forward)."""
        if instance is None:
            return self
        cache = instance.__dict__.setdefault("_static_functions", {})
        if id(self) not in cache:
            cache[id(self)] = StaticFunction(self._function.__get__(instance, owner), self.input_spec, instance)
        return cache[id(self)]

    @property
    def layer(self):
        return self._layer

    def _specs_for(self, args) -> list:
        if self.input_spec is not None:
            return self.input_spec
        return [InputSpec.from_tensor(a) if isinstance(a, Tensor) else np.asarray(a) for a in args]

    def concrete_program(self, *args) -> Program:
        """The program for these inputs (or for ``input_spec`` when given), tracing it if needed."""
        sigs = signatures(self._specs_for(args))
        key = tuple((s.name, s.shape, s.dtype.str) for s in sigs)
        if key not in self._programs:
            program, structure = trace(self._function, sigs, layer=self._layer)
            self.output_structure = structure
            self._programs[key] = program
        self._last = self._programs[key]
        return self._last

    @property
    def program(self) -> Program:
        """The program for ``input_spec``, or else the one traced by the latest call."""
        if self.input_spec is not None:
            return self.concrete_program()
        if not self._programs:
            raise ConversionError("to_static: no program yet; call the function once or give input_spec")
        return self._last

    def _executor(self, program: Program) -> Executor:
        """One executor per program, made again only when a weight array was replaced (an executor
        binds the arrays it was made with, and making one costs a compile of its steps)."""
        weights = tuple(map(id, program.weights.values()))
        made = self._executors.get(id(program))
        if made is None or made[1] != weights:
            made = self._executors[id(program)] = (Executor(program), weights)
        return made[0]

    def __call__(self, *args):
        arrays = [a._data if isinstance(a, Tensor) else np.asarray(a) for a in args]
        program = self.concrete_program(*args)
        if self._layer is not None:
            refresh_weights(program, self._layer)
        outs = [Tensor._wrap(o) for o in self._executor(program).run(arrays)]
        if self.output_structure == "tensor":
            return outs[0]
        return tuple(outs) if self.output_structure == "tuple" else outs


def refresh_weights(program: Program, layer) -> None:
    """Point the program's weights at the layer's current parameter arrays (after training steps)."""
    state = dict(param_names(layer).values())
    for name in program.weights:
        if name in state:
            program.weights[name] = state[name]._data


def to_static(function=None, input_spec=None, build_strategy=None, backend=None, full_graph=True, **kwargs):
    """Paddle's ``paddle.jit.to_static``: call form on a Layer or function, or a decorator."""
    if function is None:
        return lambda fn: to_static(fn, input_spec=input_spec)
    if isinstance(function, StaticFunction):
        return function
    if isinstance(function, Layer):
        layer = function
        forward = type(layer).forward
        if isinstance(forward, StaticFunction):
            forward = forward._function
        layer.forward = StaticFunction(functools.partial(forward, layer), input_spec, layer)
        return layer
    return StaticFunction(function, input_spec)
