"""``paddle.amp.auto_cast``: which dtype each op runs in, decided at the one dispatch point.

While auto_cast (or the tensor checker of ``amp.debugging``) is on, ``core.dispatch.POLICY`` is
``_around_op``: it casts an op's float inputs as Paddle's lists say (white: the low dtype; black:
float32; any other op: float32 when it mixes float32 with 16-bit inputs, Paddle's promotion, unless
the float32 ones are all parameters, as in Linear's bias add), runs
the op, and hands its outputs to the checker. The casts are ``cast`` ops, so the tape carries the
gradient back to each input in its own dtype. Off, the dispatch point costs one ``is None`` test.
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass

from ..core import dispatch
from ..core.dtype import LOW_PRECISION, bfloat16, float16, float32
from ..core.state import STATE
from ..core.tensor import Parameter
from ..errors import ConfigError
from ..ops.elementwise import cast_op
from . import lists


@dataclass(frozen=True)
class AmpFrame:
    """One active ``auto_cast`` block: its level, low dtype and op-record lists."""

    level: str
    dtype: object
    white: frozenset
    black: frozenset
    use_promote: bool

    def target(self, op_name: str, inputs: list) -> object | None:
        """The dtype this op's float32/16-bit inputs are cast to, or None to leave them."""
        if op_name in self.black:
            return float32
        if op_name in self.white:
            return self.dtype
        if self.level == "O2" and not self.use_promote:
            return self.dtype
        wide = [t for t in inputs if t.dtype == float32]
        if not wide or not any(t.dtype in LOW_PRECISION for t in inputs):
            return None
        # a 16-bit activation meeting float32 parameters only (Linear's bias add: Paddle's linear is
        # one white-list op, two ops here) stays 16-bit; meeting a float32 activation, it promotes
        return self.dtype if all(isinstance(t, Parameter) for t in wide) else float32


class _Amp:
    """The active auto_cast blocks (innermost last) and the tensor checker, if any."""

    def __init__(self) -> None:
        self.frames: list[AmpFrame | None] = []
        self.checker = None

    def refresh(self) -> None:
        on = (self.frames and self.frames[-1] is not None) or self.checker is not None
        dispatch.POLICY = _around_op if on else None


AMP = _Amp()


def _around_op(op, inputs, attrs):
    frame = AMP.frames[-1] if AMP.frames else None
    if frame is not None and op is not cast_op:
        present = [t for t in inputs if t is not None]
        target = frame.target(op.name, present)
        if target is not None and any(
            t.dtype != target and (t.dtype == float32 or t.dtype in LOW_PRECISION) for t in present
        ):
            inputs = tuple(_cast(t, target) for t in inputs)
    if STATE.tracer is not None:  # jit.to_static under auto_cast: the casts are part of the program
        return STATE.tracer.record(op, inputs, attrs)
    out = dispatch.run(op, inputs, attrs)
    if AMP.checker is not None:
        AMP.checker.check(op.name, out)
    return out


def _cast(t, target):
    if t is None or t.dtype == target or not (t.dtype == float32 or t.dtype in LOW_PRECISION):
        return t
    return cast_op(t, dtype=target.name)


def low_dtype(dtype) -> object:
    """``'float16'``/``'bfloat16'`` (or the dtype objects) as the dtype, else a ConfigError."""
    name = getattr(dtype, "name", dtype)
    if name not in lists.DTYPES:
        raise ConfigError(f"amp: dtype must be 'float16' or 'bfloat16', got {dtype!r}")
    return float16 if name == "float16" else bfloat16


@contextlib.contextmanager
def auto_cast(
    enable=True, custom_white_list=None, custom_black_list=None, level="O1", dtype="float16", use_promote=True
):
    """Run the ops inside in mixed precision (Paddle's ``paddle.amp.auto_cast``)."""
    if not isinstance(enable, bool):
        raise ConfigError(f"auto_cast: enable must be True or False, got {enable!r}")
    low = low_dtype(dtype)
    white, black = lists.resolve(custom_white_list, custom_black_list, level, low.name)
    frame = None
    if enable and level != "O0":
        frame = AmpFrame(level, low, lists.op_names(white), lists.op_names(black), bool(use_promote))
    AMP.frames.append(frame)
    AMP.refresh()
    try:
        yield
    finally:
        AMP.frames.pop()
        AMP.refresh()


amp_guard = auto_cast


def is_auto_cast_enabled() -> bool:
    """Whether the innermost auto_cast block casts (Paddle's ``paddle.amp.is_auto_cast_enabled``)."""
    return bool(AMP.frames) and AMP.frames[-1] is not None


def get_amp_dtype() -> str:
    """The innermost auto_cast block's low dtype, or ``'float32'`` outside one."""
    return AMP.frames[-1].dtype.name if is_auto_cast_enabled() else "float32"
