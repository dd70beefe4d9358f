"""Alpha dropout (SELU networks keep mean and variance: dropped units take SELU's negative
saturation, then an affine map restores the moments) and 1-D/3-D channel dropout, on the
``dropout`` record's mask (Paddle's draw, so ``paddle.seed`` repeats Paddle's units)."""

from __future__ import annotations

import math

from ..errors import ShapeError
from .dropout import dropout, dropout_op

_ALPHA_P = -1.6732632423543772 * 1.0507009873554805  # -alpha * scale of SELU


def _check_p(op: str, p) -> float:
    if not isinstance(p, int | float) or not 0 <= p <= 1:
        raise ValueError(f"{op}: p must be a number in [0, 1], got {p!r}")
    return float(p)


def _alpha(x, p: float, axis, training: bool):
    if not training or p == 0:
        return x
    kept, mask = dropout_op(x, p=p, axis=axis, upscale=False)
    if p == 1:
        return kept * 0.0
    a = 1.0 / math.sqrt((1 - p) * (1 + p * _ALPHA_P**2))
    b = -a * _ALPHA_P * p
    return (kept + (1.0 - mask) * _ALPHA_P) * a + b


def alpha_dropout(x, p=0.5, training=True, name=None):
    """``paddle.nn.functional.alpha_dropout``: each unit dropped to SELU's saturation with probability p."""
    return _alpha(x, _check_p("alpha_dropout", p), None, training)


def feature_alpha_dropout(x, p=0.5, training=True, name=None):
    """``paddle.nn.functional.feature_alpha_dropout``: alpha dropout of whole channels ([N, C, ...])."""
    if x.ndim < 2:
        raise ShapeError(f"feature_alpha_dropout: x must be [N, C, ...], got x{x.shape}")
    return _alpha(x, _check_p("feature_alpha_dropout", p), (0, 1), training)


def dropout1d(x, p=0.5, training=True, data_format="NCL", name=None):
    """``paddle.nn.functional.dropout1d``: whole channels of [N, C, L] (or [C, L]) inputs."""
    if data_format not in ("NCL", "NLC") or x.ndim not in (2, 3):
        raise ShapeError(
            f"dropout1d: x must be 2-D or 3-D with data_format 'NCL'/'NLC', got x{x.shape}, {data_format!r}"
        )
    channel = x.ndim - 1 if data_format == "NLC" else x.ndim - 2
    return dropout(x, p=p, axis=[0, channel] if x.ndim == 3 else [channel], training=training)


def dropout3d(x, p=0.5, training=True, data_format="NCDHW", name=None):
    """``paddle.nn.functional.dropout3d``: whole channels of [N, C, D, H, W] inputs."""
    if data_format not in ("NCDHW", "NDHWC") or x.ndim != 5:
        raise ShapeError(f"dropout3d: x must be 5-D with data_format 'NCDHW'/'NDHWC', got x{x.shape}, {data_format!r}")
    return dropout(x, p=p, axis=[0, 1] if data_format == "NCDHW" else [0, 4], training=training)


FUNCTIONAL = ["alpha_dropout", "feature_alpha_dropout", "dropout1d", "dropout3d"]
