"""``paddle.linalg``: matrix functions (ops/linalg_ext.py) plus the products and helpers Paddle
also lists here."""

from .ops.linalg import matmul  # noqa: F401
from .ops.linalg_ext import LINALG as _LINALG
from .ops.linalg_ext import (  # noqa: F401
    cholesky,
    cond,
    det,
    eigh,
    eigvalsh,
    inv,
    matrix_norm,
    matrix_power,
    multi_dot,
    norm,
    pinv,
    qr,
    slogdet,
    solve,
    svd,
    vector_norm,
)  # fmt: skip
from .ops.math_extra import cross, diagonal  # noqa: F401


def matrix_transpose(x, name=None):
    """Swap the last two dims."""
    return x.mT


__all__ = [*_LINALG, "matmul", "cross", "diagonal", "matrix_transpose"]
