"""Paddle 3.3's auto_cast op lists, by Paddle op name, and the op records each name means here.

The lists are Paddle's (``paddle/amp/amp_lists.py``) so a ``custom_white_list``/``custom_black_list``
written for Paddle means the same here; ``PADDLE_TO_OPS`` maps each Paddle name to the records of
this framework that compute it (``linear_v2`` is ``fc``, ``lookup_table_v2`` is ``embedding``).
"""

from __future__ import annotations

import warnings

from ..core.op import REGISTRY
from ..errors import ConfigError

WHITE_LIST = frozenset(
    {
        "conv2d", "einsum", "matmul", "matmul_v2", "linear_v2", "max_pool2d_with_index", "mul",
        "fused_gemm_epilogue", "fused_rotary_position_embedding", "flash_attn",
    }
)  # fmt: skip
ONLY_FP16_WHITE_LIST = frozenset(
    {
        "fake_quantize_dequantize_abs_max", "fake_quantize_dequantize_moving_average_abs_max",
        "fused_attention", "fused_feedforward",
    }
)  # fmt: skip
FP16_BLACK_LIST = frozenset(
    {
        "tan", "acos", "asin", "sinh", "cosh", "atanh", "tanh_shrink", "erfinv", "exp", "expm1", "log",
        "log10", "log2", "reciprocal", "rsqrt", "pow", "square", "reduce_sum", "mean", "reduce_mean",
        "reduce_prod", "cumprod", "cumsum", "dist", "pnorm", "frobenius_norm", "renorm", "group_norm",
        "layer_norm", "softmax", "softmin", "softplus", "log_softmax", "softmax_with_cross_entropy",
        "sigmoid_cross_entropy_with_logits", "c_softmax_with_cross_entropy",
        "c_softmax_with_multi_label_cross_entropy", "cross_entropy", "cross_entropy2", "nll_loss",
        "huber_loss", "triplet_margin_loss", "log_loss", "hsigmoid_loss", "margin_cross_entropy",
    }
)  # fmt: skip
EXTRA_BLACK_LIST = frozenset(
    {
        "linear_interp_v2", "nearest_interp_v2", "bilinear_interp_v2", "bicubic_interp_v2",
        "trilinear_interp_v2", "lookup_table", "lookup_table_v2", "scatter",
    }
)  # fmt: skip

PADDLE_TO_OPS = {
    "conv2d": ("conv2d", "conv2d_winograd", "conv2d_scaled"),
    "matmul_v2": ("matmul",),
    "mul": ("matmul",),
    "linear_v2": ("fc",),
    "fused_gemm_epilogue": ("fc",),
    "max_pool2d_with_index": ("max_pool2d",),
    "flash_attn": ("attention",),
    "pow": ("elementwise_pow",),
    "reduce_sum": ("sum",),
    "reduce_mean": ("mean",),
    "reduce_prod": ("prod",),
    "pnorm": ("p_norm",),
    "frobenius_norm": ("p_norm",),
    "softmax_with_cross_entropy": ("softmax_cross_entropy",),
    "cross_entropy": ("softmax_cross_entropy",),
    "cross_entropy2": ("softmax_cross_entropy",),
    "sigmoid_cross_entropy_with_logits": ("binary_cross_entropy_with_logits",),
    "huber_loss": ("smooth_l1_loss",),
    "log_loss": ("binary_cross_entropy",),
    **{f"{mode}_interp_v2": ("interpolate",) for mode in ("linear", "nearest", "bilinear", "bicubic", "trilinear")},
    "lookup_table": ("embedding",),
    "lookup_table_v2": ("embedding",),
    "elementwise_add": ("add",),
    "elementwise_sub": ("subtract",),
    "elementwise_mul": ("multiply",),
    "elementwise_div": ("divide",),
}
LEVELS = ("O0", "O1", "O2", "OD")
DTYPES = ("float16", "bfloat16")


def paddle_lists(level: str, dtype: str) -> tuple[set[str], set[str]]:
    """Paddle's default (white, black) lists by Paddle op name, as ``paddle.amp.white_list()`` gives them."""
    if level == "O0":
        return set(), set()
    white = set(WHITE_LIST | ONLY_FP16_WHITE_LIST) if dtype == "float16" else set(WHITE_LIST)
    black = {"O1": FP16_BLACK_LIST | EXTRA_BLACK_LIST, "O2": EXTRA_BLACK_LIST, "OD": frozenset()}[level]
    return white, set(black)


def resolve(custom_white_list, custom_black_list, level: str, dtype: str) -> tuple[set[str], set[str]]:
    """The (white, black) Paddle-name lists an auto_cast call runs with: Paddle's ``_update_list``."""
    if level not in LEVELS:
        raise ConfigError(f"auto_cast: level must be one of {', '.join(LEVELS)}, got {level!r}")
    if dtype not in DTYPES:
        raise ConfigError(f"auto_cast: dtype must be 'float16' or 'bfloat16', got {dtype!r}")
    custom_white, custom_black = (
        _names(custom_white_list, "custom_white_list"),
        _names(custom_black_list, "custom_black_list"),
    )
    if level == "O0":
        return set(), set()
    overlap = sorted(set(custom_white) & set(custom_black))
    if overlap:
        raise ConfigError(f"auto_cast: {overlap} are in both custom_white_list and custom_black_list; keep each in one")
    white, black = paddle_lists(level, dtype)
    for name in custom_white:
        black.discard(name)
        white.add(name)
    for name in custom_black:
        white.discard(name)
        black.add(name)
    return white, black


def op_names(paddle_names: set[str]) -> frozenset[str]:
    """The op records a set of Paddle op names covers (a name that is also a record is that record)."""
    ops = set()
    for name in paddle_names:
        ops.update(PADDLE_TO_OPS.get(name, (name,)))
    return frozenset(ops & REGISTRY.keys())


def _names(names, what: str) -> list[str]:
    if names is None:
        return []
    if isinstance(names, str) or not all(isinstance(n, str) for n in names):
        raise ConfigError(f"auto_cast: {what} must be a list or set of op names (strings), got {names!r}")
    unknown = sorted(n for n in names if n not in PADDLE_TO_OPS and n not in REGISTRY)
    if unknown:
        warnings.warn(
            f"auto_cast: {what} names ops this framework does not have ({unknown}); they change nothing", stacklevel=3
        )
    return list(names)
