"""The single declaration of an op: kernel, vector-Jacobian product, shape rule and fusion kind.

Eager mode runs ``forward`` and keeps ``ctx`` for ``vjp``; tracing calls ``infer``
instead; the compiler reads ``kind``. Nothing about an op is written twice.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

ELEMENTWISE = "elementwise"
BROADCAST = "broadcast"
REDUCE = "reduce"
OPAQUE = "opaque"
KINDS = (ELEMENTWISE, BROADCAST, REDUCE, OPAQUE)


class Context:
    """What ``forward`` leaves for ``vjp``; ``needs_input_grad`` lets both skip needless work."""

    __slots__ = ("needs_input_grad", "saved", "attrs", "__dict__")

    def __init__(self, needs_input_grad: tuple[bool, ...], attrs: dict[str, Any]) -> None:
        self.needs_input_grad = needs_input_grad
        self.attrs = attrs
        self.saved = ()

    def save(self, *values) -> None:
        self.saved = values


@dataclass(frozen=True)
class Spec:
    """A value's static description: shape entries are ints or symbol names (``'N'``), and a dtype."""

    shape: tuple
    dtype: Any


@dataclass(eq=False)
class OpDef:
    """An op: ``forward(ctx, *arrays, **attrs)`` returns an array or a tuple of arrays;
    ``vjp(ctx, *output_grads)`` returns one gradient (or None) per input;
    ``infer(*specs, **attrs)`` returns the output Spec (or a tuple of them)."""

    name: str
    forward: Callable
    vjp: Callable | None
    infer: Callable
    kind: str = OPAQUE

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise ValueError(f"op {self.name}: fusion kind must be one of {KINDS}, got {self.kind!r}")
        REGISTRY[self.name] = self

    def __call__(self, *inputs, **attrs):
        from .dispatch import apply

        return apply(self, inputs, attrs)


REGISTRY: dict[str, OpDef] = {}
"""Every declared op by name: the tracer, the IR parser and the compiler look ops up here."""


def defop(name: str, *, infer: Callable, kind: str = OPAQUE, vjp: Callable | None = None):
    """Decorator form: ``@defop("relu", infer=same_as_first, kind=ELEMENTWISE, vjp=relu_vjp)``."""

    def wrap(forward: Callable) -> OpDef:
        return OpDef(name, forward, vjp, infer, kind)

    return wrap
