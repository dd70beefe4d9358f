"""The single declaration of an op: kernel, vector-Jacobian product, shape rule and fusion kind.

Eager mode runs ``forward`` and keeps ``ctx`` for ``vjp``; tracing calls ``infer``
instead; the compiler reads ``kind``; the conformance sweep (tests/test_op_conformance.py) calls
``samples``. Nothing about an op is written twice.

A ``vjp`` works on Tensors through ops, so backward is itself recorded when
``paddle.grad(create_graph=True)`` asks for it: higher-order derivatives come for free. It reads
the op's inputs and outputs as graph-connected Tensors with ``ctx.input(i)``/``ctx.output(i)``;
arrays ``forward`` saved (``ctx.saved``) are constants, fit for integer indices and fast paths
whose own gradient is not needed.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from . import items as item_rules

# ``forward(ctx, ...)`` and ``vjp(ctx, ...)`` receive a Context (it lives with the tape it links to)
from .autograd import Context as Context
from .dispatch import apply

ELEMENTWISE = "elementwise"
BROADCAST = "broadcast"
REDUCE = "reduce"
OPAQUE = "opaque"
KINDS = (ELEMENTWISE, BROADCAST, REDUCE, OPAQUE)


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
        or ``expr(attrs)`` returning one or None) from which elementwise kernels are generated (a reduce
        op's is its accumulator rule for fused loops: ``(initial, combine(acc, v), finish(acc, n))``);
        ``flops(in_specs, out_specs, attrs)``; ``onnx_export`` its ONNX emitter; ``lower`` its lowering
        (core/lowering.py); ``fresh_output`` says its result is a new array nothing else holds, which a
    fused epilogue may overwrite; ``deterministic=False`` (dropout) keeps passes from merging, folding
    or fusing it. ``items`` says whether it computes each item along a batched axis from that item
    alone (``core.items``; elementwise, broadcasting and reducing kinds get theirs from the kind).
    ``samples(rng)`` lists the calls the conformance sweep checks the op on;
        ``exempt`` maps a sweep check (``"vjp"``, ``"vjp2"``, ``"infer"``, ``"trace"``, ``"compile"``,
        ``"onnx"``) the op cannot meet to the reason why."""

    name: str
    forward: Callable
    vjp: Callable | None
    infer: Callable
    kind: str = OPAQUE
    expr: str | Callable | tuple | None = None
    flops: Callable | None = None
    onnx_export: Callable | None = None
    lower: Callable | None = None
    fresh_output: bool = False
    deterministic: bool = True
    items: Callable | bool | None = None
    samples: Callable[[Any], Sequence[Sample]] | None = None
    exempt: dict[str, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise ValueError(f"op {self.name}: fusion kind must be one of {KINDS}, got {self.kind!r}")
        if self.items is None and self.kind != OPAQUE:
            self.items = item_rules.off_axis("axis") if self.kind == REDUCE else item_rules.aligned
        REGISTRY[self.name] = self

    def __call__(self, *inputs, **attrs):
        return apply(self, inputs, attrs)


REGISTRY: dict[str, OpDef] = {}
"""Every declared op by name: the tracer, the IR parser and the compiler look ops up here."""


def defop(name: str, *, infer: Callable, kind: str = OPAQUE, vjp: Callable | None = None, **record):
    """Decorator form: ``@defop("relu", infer=same_as_first, kind=ELEMENTWISE, vjp=relu_vjp)``."""

    def wrap(forward: Callable) -> OpDef:
        return OpDef(name, forward, vjp, infer, kind, **record)

    return wrap
