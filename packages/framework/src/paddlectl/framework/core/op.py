"""The single declaration of an op: kernel, vector-Jacobian product, shape rule and fusion kind.

Eager mode runs ``forward`` and keeps ``ctx`` for ``vjp``; tracing calls ``infer``
instead; the compiler reads ``kind``; the conformance sweep (tests/test_op_conformance.py) calls
``samples``. Nothing about an op is written twice.

A ``vjp`` works on Tensors through ops (``tensor_vjp=True``), so backward is itself recorded when
``paddle.grad(create_graph=True)`` asks for it: higher-order derivatives come for free. It reads
the op's inputs and outputs as graph-connected Tensors with ``ctx.input(i)``/``ctx.output(i)``;
arrays ``forward`` saved (``ctx.saved``) are constants, fit for integer indices and fast paths
whose own gradient is not needed.
"""

from __future__ import annotations

import weakref
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

ELEMENTWISE = "elementwise"
BROADCAST = "broadcast"
REDUCE = "reduce"
OPAQUE = "opaque"
KINDS = (ELEMENTWISE, BROADCAST, REDUCE, OPAQUE)


class Context:
    """What ``forward`` leaves for ``vjp``; ``needs_input_grad`` lets both skip needless work."""

    __slots__ = ("needs_input_grad", "saved", "attrs", "outputs", "_arrays", "_node", "_results", "__dict__")

    def __init__(self, needs_input_grad: tuple[bool, ...], attrs: dict[str, Any]) -> None:
        self.needs_input_grad = needs_input_grad
        self.attrs = attrs
        self.saved = ()

    def save(self, *values) -> None:
        self.saved = values

    def link(self, node, arrays: tuple, outputs: tuple, results: tuple) -> None:
        """Dispatch records where the op sits in the graph, for ``input``/``output``."""
        self._node = weakref.ref(node)
        self._arrays = arrays
        self.outputs = outputs
        self._results = tuple(weakref.ref(r) for r in results)

    def input(self, i: int):
        """Input ``i`` as the op read it: graph-connected where it needs a gradient, else a constant."""
        from .tensor import Tensor

        array = self._arrays[i]
        if array is None:
            return None
        node = self._node()
        tensor = node.inputs[i]
        if tensor is None:
            return Tensor._wrap(array)
        source, index = node.edges[i]
        if source is None or (tensor._data is array and tensor._node is source and tensor._out_index == index):
            return tensor
        view = Tensor._wrap(array)  # rebound in place since: the value this op read, where it was
        view.stop_gradient = False
        view._node, view._out_index = source, index
        return view

    def output(self, i: int = 0):
        """Output ``i`` as a Tensor connected to this op, so a vjp built on it is differentiable."""
        from .tensor import Tensor

        node, array = self._node(), self.outputs[i]
        live = self._results[i]()  # the very Tensor the op returned, if still unchanged (a tracer knows it)
        if live is not None and live._data is array and live._node is node and live._out_index == i:
            return live
        view = Tensor._wrap(array)
        view.stop_gradient = False
        view._node, view._out_index = node, i
        return view


@dataclass(frozen=True)
class Spec:
    """A value's static description: shape entries are ints or symbol names (``'N'``), and a dtype."""

    shape: tuple
    dtype: Any


@dataclass(frozen=True)
class Sample:
    """One call the conformance sweep makes: input arrays (None for an absent optional input) and attrs."""

    inputs: tuple
    attrs: dict = field(default_factory=dict)


@dataclass(eq=False)
class OpDef:
    """An op: ``forward(ctx, *arrays, **attrs)`` returns an array or a tuple of arrays;
    ``vjp(ctx, *output_grads)`` returns one gradient (or None) per input;
    ``infer(*specs, **attrs)`` returns the output Spec (or a tuple of them).

    The optional fields are everything else the system asks about the op, so no module keeps a
    table keyed by op names: ``expr`` its scalar expression over ``{x}``/``{y}``/``{z}`` (a string,
    or ``expr(attrs)`` returning one or None) from which elementwise kernels are generated;
    ``flops(in_specs, out_specs, attrs)``; ``onnx_export`` its ONNX emitter; ``lower`` its lowering
    (core/lowering.py). ``samples(rng)`` lists the calls the conformance sweep checks the op on;
    ``exempt`` maps a sweep check (``"vjp"``, ``"vjp2"``, ``"infer"``, ``"trace"``, ``"compile"``,
    ``"onnx"``) the op cannot meet to the reason why."""

    name: str
    forward: Callable
    vjp: Callable | None
    infer: Callable
    kind: str = OPAQUE
    tensor_vjp: bool = False
    expr: str | Callable | None = None
    flops: Callable | None = None
    onnx_export: Callable | None = None
    lower: Callable | None = None
    samples: Callable[[Any], Sequence[Sample]] | None = None
    exempt: dict[str, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise ValueError(f"op {self.name}: fusion kind must be one of {KINDS}, got {self.kind!r}")
        REGISTRY[self.name] = self

    def __call__(self, *inputs, **attrs):
        from .dispatch import apply

        return apply(self, inputs, attrs)


REGISTRY: dict[str, OpDef] = {}
"""Every declared op by name: the tracer, the IR parser and the compiler look ops up here."""


def defop(name: str, *, infer: Callable, kind: str = OPAQUE, vjp: Callable | None = None, **record):
    """Decorator form: ``@defop("relu", infer=same_as_first, kind=ELEMENTWISE, vjp=relu_vjp)``."""

    def wrap(forward: Callable) -> OpDef:
        return OpDef(name, forward, vjp, infer, kind, **record)

    return wrap
