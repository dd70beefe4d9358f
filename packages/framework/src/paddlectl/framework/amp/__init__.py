"""``paddle.amp``: float16/bfloat16 mixed precision on the CPU.

``auto_cast`` decides each op's dtype at the dispatch point (policy.py), ``decorate`` casts O2
models and gives optimizers float32 master weights, ``GradScaler`` scales the loss and skips steps
whose gradients overflowed, ``debugging`` names the first op and layer to produce NaN/Inf. The
16-bit kernels compute in float32 and round their results (core/dtype.py ``forward_in_float32``).
"""

from . import debugging
from .decorate import decorate
from .grad_scaler import GradScaler
from .lists import paddle_lists
from .policy import amp_guard, auto_cast, get_amp_dtype, is_auto_cast_enabled

__all__ = [
    "GradScaler", "amp_guard", "auto_cast", "black_list", "debugging", "decorate", "get_amp_dtype",
    "is_auto_cast_enabled", "is_bfloat16_supported", "is_float16_supported", "white_list",
]  # fmt: skip


def white_list() -> dict:
    """Paddle's default white lists by dtype and level (``paddle.amp.white_list()``)."""
    return {d: {lvl: paddle_lists(lvl, d)[0] for lvl in ("OD", "O1", "O2")} for d in ("float16", "bfloat16")}


def black_list() -> dict:
    """Paddle's default black lists by dtype and level (``paddle.amp.black_list()``)."""
    return {d: {lvl: paddle_lists(lvl, d)[1] for lvl in ("OD", "O1", "O2")} for d in ("float16", "bfloat16")}


def is_float16_supported(device=None) -> bool:
    """True: float16 runs here (computed in float32 and rounded)."""
    return True


def is_bfloat16_supported(device=None) -> bool:
    """True: bfloat16 runs here (computed in float32 and rounded)."""
    return True
