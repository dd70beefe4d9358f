"""Sparse functions that act on each stored value alone: the pattern is kept and the values go
through the dense op (so f(0) is never computed: ``sparse.cos`` would not be sparse, and Paddle has
none). The layout is kept too: CSR in, CSR out."""

from __future__ import annotations

from ..core.dtype import convert_dtype
from ..errors import DTypeError
from ..ops import elementwise as ew
from ..ops import pointwise
from .tensor import require_sparse


def on_values(x, fn):
    """``x``'s pattern with ``fn(values)``: a sparse tensor of either layout; a dense one is refused."""
    require_sparse(x)
    return x.with_values(fn(x.values()))


def _unary(name: str, fn):
    def sparse_fn(x, name=None):
        return on_values(x, fn)

    sparse_fn.__name__ = name
    sparse_fn.__doc__ = f"``paddle.sparse.{name}``: ``{name}`` of each stored value (COO or CSR)."
    return sparse_fn


_DENSE = {
    **{n: ew.UNARY[n] for n in ("sin", "tan", "asin", "atan", "sinh", "tanh", "sqrt", "square", "log1p", "abs",
                                "expm1", "neg", "isnan")},
    **{n: getattr(pointwise, n) for n in ("asinh", "atanh", "deg2rad", "rad2deg")},
}  # fmt: skip
UNARY = {name: _unary(name, fn) for name, fn in _DENSE.items()}


def pow(x, factor, name=None):  # noqa: A001 - Paddle's name
    """``paddle.sparse.pow``: each stored value to the power ``factor`` (a Python number)."""
    return on_values(x, lambda v: ew.pow(v, factor))


def cast(x, index_dtype=None, value_dtype=None, name=None):
    """``paddle.sparse.cast``: the values to ``value_dtype``; indices are int64 here whatever
    ``index_dtype`` (an integer dtype) asks, as they never leave NumPy."""
    if index_dtype is not None and convert_dtype(index_dtype).kind not in "iu":
        raise DTypeError(f"sparse.cast: index_dtype must be an integer dtype, got {index_dtype!r}")
    return on_values(x, lambda v: v if value_dtype is None else ew.cast(v, value_dtype))
