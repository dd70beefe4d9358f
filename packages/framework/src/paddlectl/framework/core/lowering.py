"""Lowerings: ops the executor runs through a callable prepared once per input shape.

When the executor specialises a program to one feed signature every value's shape is known, so
an op whose ``forward`` spends its time working layouts out from shapes (a fused kernel's
iteration space, reshape's 0 and -1 rules) can do that work once. ``lower(attrs,
in_types, out_types)`` (lists of ``(shape, dtype)``; None for an absent optional input, and for an
output nothing reads, which ``run`` may return as None) returns ``run(*arrays)`` for those types, or None to keep
``forward``. The types follow from the feed shapes alone; the executor checks them on a feed signature's first run
(an op whose arrays differ keeps ``forward`` from then on), so a lowering may rely on them. A lowering computes what
``forward`` computes: same kernels, same results.
"""

from __future__ import annotations

from collections.abc import Callable

from .op import REGISTRY


def lowering(name: str):
    """Decorator storing ``lower(attrs, in_types, out_types)`` in the record of the op ``name``,
    written beside the op (``ops/``, the compiler's ``fused_elementwise``)."""

    def register(lower: Callable) -> Callable:
        REGISTRY[name].lower = lower
        return lower

    return register
