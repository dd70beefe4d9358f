"""``paddle.jit.to_static``: a function or Layer turned into a traced Program that runs statically.

``to_static(layer, input_spec=[...])``, ``to_static(fn)`` and the decorator forms
(``@to_static``, ``@to_static(input_spec=[...])``, also on a Layer's ``forward``) return a
``StaticFunction``. It traces once per input signature: with an ``input_spec`` (symbolic dims
allowed) one program serves every matching input; without one, the first call's shapes fix it.
Calls run the program through the executor, with the layer's current weights. Where a gradient
is wanted (the tape is on and an input or a parameter of the layer takes one), the call is one
``run_program`` op (``program_op.py``), so ``loss.backward()`` reaches the inputs and parameters as
Paddle's dynamic-to-static training does. Called while another function is traced, the function's
Python runs under that tracer (inlined).
"""

from __future__ import annotations

import functools

import numpy as np

from ..core import symbolic
from ..core.autograd import is_grad_enabled
from ..core.op import Sample, Spec
from ..core.state import STATE
from ..core.tensor import Tensor
from ..errors import ConversionError
from ..nn.layer.base import Layer
from ..ops.random import get_rng_state, set_rng_state
from ..static.executor import Executor, bind_inputs
from ..static.input_spec import InputSpec, signatures
from ..static.ir import Program
from ..static.trace import param_names, trace
from .program_op import program_op
from .switches import to_static_enabled


class StaticFunction:
    """A traced callable: ``.program`` (after the first trace), ``.input_spec``, ``__call__``."""

    def __init__(self, function, input_spec=None, layer=None) -> None:
        self._function = function
        self._layer = layer
        self.input_spec = list(input_spec) if input_spec is not None else None
        self._programs: dict = {}
        self._executors: dict[int, tuple[Executor, tuple]] = {}
        self.backward_programs: dict = {}  # run_program's backward, by input shapes and needs
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
            state = get_rng_state()  # tracing runs the function; it must not move the user's random stream
            try:
                program, structure = trace(self._function, sigs, layer=self._layer)
            finally:
                set_rng_state(state)
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

    def trainable_parameters(self) -> list:
        """The layer's parameters that take a gradient (run_program's inputs after the arguments)."""
        if self._layer is None:
            return []
        return [p for p in self._layer.parameters() if not p.stop_gradient]

    def call_python(self, *args):
        """The function itself, as written (what the programs are traced from)."""
        return self._function(*args)

    def run_program(self, program: Program, arrays: list) -> list:
        if self._layer is not None:
            refresh_weights(program, self._layer)
        return self._executor(program).run(arrays)

    def run_arrays(self, arrays: list) -> list:
        """The forward program on these arrays (traced first if their signature is new)."""
        return self.run_program(self.concrete_program(*arrays), arrays)

    def output_specs(self, specs) -> tuple | Spec:
        """The outputs' shapes and dtypes for inputs of these specs (run_program's shape rule)."""
        arrays = [np.empty(s.shape, s.dtype) for s in specs]
        program = self.concrete_program(*arrays)
        sizes = bind_inputs(program, arrays)
        out = tuple(
            Spec(tuple(symbolic.evaluate(d, sizes) if isinstance(d, str) else d for d in v.shape), v.dtype)
            for v in program.outputs
        )
        return out if len(out) > 1 else out[0]

    def __call__(self, *args):
        if STATE.tracer is not None or not to_static_enabled():
            return self._function(*args)
        tensors = [a if isinstance(a, Tensor) else Tensor._wrap(np.asarray(a)) for a in args]
        params = self.trainable_parameters() if is_grad_enabled() else None
        if params is not None and (params or any(not t.stop_gradient for t in tensors)):
            outs = program_op(*tensors, *params, fn=self, n_args=len(tensors))
            outs = list(outs) if isinstance(outs, tuple) else [outs]
        else:
            outs = [Tensor._wrap(o) for o in self.run_arrays([t._data for t in tensors])]
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


def _program_samples(rng) -> list[Sample]:
    """The conformance sweep's call of ``run_program``: two outputs, one of them 0-d."""
    fn = StaticFunction(lambda x, w: (x.matmul(w).tanh(), (x * x).sum()))
    return [Sample((rng.standard_normal((3, 4)), rng.standard_normal((4, 2))), {"fn": fn, "n_args": 2})]


program_op.samples = _program_samples  # the record's samples need a StaticFunction, defined here
