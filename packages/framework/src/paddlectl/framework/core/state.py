"""Process-wide switches that every op call consults: gradient recording and the active tracer."""

from __future__ import annotations


class _State:
    __slots__ = ("grad_enabled", "tracer")

    def __init__(self) -> None:
        self.grad_enabled = True
        self.tracer = None


STATE = _State()
