"""Paddle's alternative spellings and small compositions scripts use: clamp/mul/div/sub, comparison
short names, permute/swapaxes/ravel, stacking and splitting helpers, hyperbolic inverses, logaddexp,
hypot, nan_to_num, tensordot, rot90, narrow, ``*_like`` samplers and dtype predicates."""

from __future__ import annotations

import numpy as np

from ..core.dtype import convert_dtype
from ..core.op import BROADCAST, ELEMENTWISE, OPAQUE, OpDef, Spec
from ..core.shapes import broadcast_shapes, compare
from ..core.tensor import Tensor
from ..errors import ShapeError
from . import creation
from . import elementwise as ew
from . import random as _random
from ._util import constant, tensor_args
from .index import nonzero, take_along_axis
from .linalg import matmul
from .shape import concat, expand, flip, reshape, split, stack, transpose, unbind, unsqueeze

B, U = ew.BINARY, ew.UNARY


def _op(fn):
    def alias(x, y, name=None, *, out=None):
        return fn(x, y)

    return alias


mul = _op(B["multiply"])
ge, gt, le, lt = _op(B["greater_equal"]), _op(B["greater_than"]), _op(B["less_equal"]), _op(B["less_than"])
eq, ne = _op(B["equal"]), _op(B["not_equal"])
greater, less = gt, lt


def clamp(x, min=None, max=None, name=None, *, out=None):  # noqa: A002 - Paddle's names
    return ew.clip(x, min, max)


def sub(x, y, name=None, *, alpha=1, out=None):
    return B["subtract"](x, y if alpha == 1 else y * alpha)


def _int_divide_forward(ctx, a, b, *, rounding_mode):
    out = np.floor_divide(a, b) if rounding_mode == "floor" else np.trunc(a / b)
    return out.astype(a.dtype)


int_divide_op = OpDef(
    "int_divide",
    _int_divide_forward,
    None,
    lambda a, b, rounding_mode: Spec(broadcast_shapes("div", a.shape, b.shape), a.dtype),
    BROADCAST,
)
"""Integer division rounded 'floor' or 'trunc' in the dividend's dtype (no gradient: ints have none)."""


def div(x, y, name=None, *, rounding_mode=None, out=None):
    """True division; ``rounding_mode`` 'trunc' or 'floor' rounds the quotient."""
    if rounding_mode is None:
        return B["divide"](x, y)
    if rounding_mode not in ("trunc", "floor"):
        raise ValueError(f"div: rounding_mode must be None, 'trunc' or 'floor', got {rounding_mode!r}")
    if isinstance(x, Tensor) and x.dtype.kind in "iu" and (not isinstance(y, Tensor) or y.dtype.kind in "iu"):
        return int_divide_op(*tensor_args(x, y), rounding_mode=rounding_mode)
    q = B["divide"](x, y)
    return U["floor"](q) if rounding_mode == "floor" else U["trunc"](q)


def true_divide(input, other, *, out=None):  # noqa: A002
    return B["divide"](input, other)


def negative(x, name=None):
    return U["neg"](x)


def positive(x, name=None):
    return x


def permute(input, *dims):  # noqa: A002
    """``transpose`` taking the order as a list or as separate ints (``x.permute(0, 2, 1)``)."""
    perm = list(dims[0]) if len(dims) == 1 and isinstance(dims[0], list | tuple) else list(dims)
    return transpose(input, perm)


def swapaxes(x, axis0, axis1, name=None):
    perm = list(range(x.ndim))
    perm[axis0], perm[axis1] = perm[axis1], perm[axis0]
    return transpose(x, perm)


swapdims = swapaxes


def ravel(input):  # noqa: A002
    return reshape(input, [-1])


def deg2rad(x, name=None):
    return x * (np.pi / 180.0) if x.dtype.kind == "f" else x.astype("float32") * (np.pi / 180.0)


def rad2deg(x, name=None):
    return x * (180.0 / np.pi) if x.dtype.kind == "f" else x.astype("float32") * (180.0 / np.pi)


def acosh(x, name=None, *, out=None):
    return U["log"](x + U["sqrt"](x * x - 1.0))


def asinh(x, name=None, *, out=None):
    """``sign(x) * log(|x| + sqrt(x^2 + 1))`` (stable for negative x)."""
    a = U["abs"](x)
    return U["sign"](x) * U["log"](a + U["sqrt"](a * a + 1.0))


def atanh(x, name=None, *, out=None):
    return (U["log1p"](x) - U["log1p"](-x)) * 0.5


def logaddexp(x, y, name=None):
    """``log(exp(x) + exp(y))`` computed as ``max + log1p(exp(-|x - y|))``."""
    return B["maximum"](x, y) + U["log1p"](U["exp"](-U["abs"](x - y)))


def hypot(x, y, name=None):
    return U["sqrt"](x * x + y * y)


def nan_to_num(x, nan=0.0, posinf=None, neginf=None, name=None):
    """NaN -> ``nan``, +inf -> ``posinf`` (default the dtype's max), -inf -> ``neginf`` (its min)."""
    info = np.finfo(x.dtype)
    hi = info.max if posinf is None else posinf
    lo = info.min if neginf is None else neginf
    out = ew.where(U["isnan"](x), constant(nan, x.dtype), x)
    out = ew.where(out == np.inf, constant(hi, x.dtype), out)
    return ew.where(out == -np.inf, constant(lo, x.dtype), out)


def sgn(x, name=None):
    return U["sign"](x)


def _predicate(name: str, fn):
    """An elementwise bool op: declared, so a traced program computes it instead of capturing it."""
    op = OpDef(name, lambda ctx, x: fn(x), None, compare(name), ELEMENTWISE)

    def pred(x, name=None):
        return op(x)

    return pred


signbit = _predicate("signbit", np.signbit)
isneginf = _predicate("isneginf", np.isneginf)
isposinf = _predicate("isposinf", np.isposinf)
isreal = _predicate("isreal", np.isreal)


def heaviside(x, y, name=None):
    """0 where x < 0, ``y`` where x == 0, 1 where x > 0 (no gradient into x, as in Paddle)."""
    x, y = (x, y) if isinstance(y, Tensor) else (x, constant(y, x.dtype))
    zero, one = constant(0, x.dtype), constant(1, x.dtype)
    return ew.where(x.detach() == 0, y, ew.where(x.detach() > 0, one, zero))


def copysign(x, y, name=None):
    """``|x|`` with the sign bit of ``y`` (so -0.0 counts as negative); the gradient flows to x."""
    y = y if isinstance(y, Tensor) else constant(y)
    return U["abs"](x) * ew.where(signbit(y), constant(-1, x.dtype), constant(1, x.dtype))


isin_op = OpDef(
    "isin",
    lambda ctx, x, test_x, assume_unique, invert: np.isin(x, test_x, assume_unique=assume_unique, invert=invert),
    None,
    lambda x, test_x, **attrs: Spec(x.shape, np.dtype(bool)),
    OPAQUE,
)


def isin(x, test_x, assume_unique=False, invert=False, name=None):
    return isin_op(x, test_x, assume_unique=bool(assume_unique), invert=bool(invert))


# ----- stacking, splitting, reshaping ---------------------------------------------------------


def cat(x, axis=0, name=None, *, out=None):
    return concat(x, axis)


concatenate = cat


def _atleast(n):
    def fn(*inputs, name=None):
        tensors = list(inputs[0]) if len(inputs) == 1 and isinstance(inputs[0], list | tuple) else list(inputs)
        out = []
        for t in tensors:
            if n >= 1 and t.ndim == 0:
                t = reshape(t, [1])
            if n >= 2 and t.ndim == 1:
                t = unsqueeze(t, 0)
            if n >= 3 and t.ndim == 2:
                t = unsqueeze(t, -1)
            out.append(t)
        return out[0] if len(out) == 1 else out

    return fn


atleast_1d, atleast_2d, atleast_3d = _atleast(1), _atleast(2), _atleast(3)


def hstack(x, name=None):
    x = atleast_1d(*x)
    x = [x] if isinstance(x, Tensor) else x
    return concat(x, 0 if x[0].ndim == 1 else 1)


def vstack(x, name=None):
    x = atleast_2d(*x)
    return concat([x] if isinstance(x, Tensor) else x, 0)


row_stack = vstack


def dstack(x, name=None):
    x = atleast_3d(*x)
    return concat([x] if isinstance(x, Tensor) else x, 2)


def column_stack(x, name=None):
    return concat([reshape(t, [-1, 1]) if t.ndim <= 1 else t for t in x], 1)


def unstack(x, axis=0, num=None):
    return unbind(x, axis)


def tensor_split(x, num_or_indices, axis=0, name=None):
    """Split into ``n`` near-equal parts (the first ``size % n`` one longer), or at the given indices."""
    axis = int(axis.item()) if isinstance(axis, Tensor) else int(axis)
    size = x.shape[axis]
    if isinstance(num_or_indices, int):
        n = num_or_indices
        if n <= 0:
            raise ValueError(f"tensor_split: the number of sections must be positive, got {n}")
        sections = [size // n + 1] * (size % n) + [size // n] * (n - size % n)
    else:
        bounds = [0] + [min(max(int(i), 0), size) for i in num_or_indices] + [size]
        sections = [max(b - a, 0) for a, b in zip(bounds[:-1], bounds[1:], strict=True)]
    return split(x, sections, axis)


def hsplit(x, num_or_indices, name=None):
    return tensor_split(x, num_or_indices, 0 if x.ndim == 1 else 1)


def vsplit(x, num_or_indices, name=None):
    if x.ndim < 2:
        raise ShapeError(f"vsplit: x must have at least 2 dims, got shape {x.shape}")
    return tensor_split(x, num_or_indices, 0)


def dsplit(x, num_or_indices, name=None):
    if x.ndim < 3:
        raise ShapeError(f"dsplit: x must have at least 3 dims, got shape {x.shape}")
    return tensor_split(x, num_or_indices, 2)


def narrow(input, dim, start, length):  # noqa: A002
    """``length`` entries of dim ``dim`` from ``start``."""
    start = int(start.item()) if isinstance(start, Tensor) else int(start)
    size = input.shape[dim]
    start = start + size if start < 0 else start
    if start < 0 or length < 0 or start + length > size:
        raise ShapeError(f"narrow: [{start}, {start + length}) is out of range for dim {dim} of size {size}")
    index = [slice(None)] * input.ndim
    index[dim] = slice(start, start + length)
    return input[tuple(index)]


def take_along_dim(arr, indices, axis, broadcast=True, *, out=None):
    return take_along_axis(arr, indices, axis, broadcast)


def argwhere(input):  # noqa: A002
    return nonzero(input)


def broadcast_shape(x_shape, y_shape):
    return list(np.broadcast_shapes(tuple(x_shape), tuple(y_shape)))


def broadcast_tensors(input, name=None):  # noqa: A002
    shape = list(np.broadcast_shapes(*[tuple(t.shape) for t in input]))
    return [expand(t, shape) for t in input]


def tensordot(x, y, axes=2, name=None):
    """Contract ``axes`` (the last n of x with the first n of y, or explicit lists) by one matmul."""
    if isinstance(axes, Tensor):
        axes = axes.tolist()
    if isinstance(axes, int):
        ax_x, ax_y = list(range(x.ndim - axes, x.ndim)), list(range(axes))
    else:
        ax_x, ax_y = (
            ([axes[0]] if isinstance(axes[0], int) else list(axes[0])),
            ([axes[1]] if len(axes) > 1 and isinstance(axes[1], int) else list(axes[1] if len(axes) > 1 else axes[0])),
        )
    ax_x = [a % x.ndim for a in ax_x]
    ax_y = [a % y.ndim for a in ax_y]
    free_x = [a for a in range(x.ndim) if a not in ax_x]
    free_y = [a for a in range(y.ndim) if a not in ax_y]
    k = int(np.prod([x.shape[a] for a in ax_x]))
    if k != int(np.prod([y.shape[a] for a in ax_y])):
        raise ShapeError(f"tensordot: contracted dims of x{x.shape} {ax_x} and y{y.shape} {ax_y} differ in size")
    xm = reshape(transpose(x, free_x + ax_x), [-1, k])
    ym = reshape(transpose(y, ax_y + free_y), [k, -1])
    return reshape(matmul(xm, ym), [x.shape[a] for a in free_x] + [y.shape[a] for a in free_y])


def rot90(x, k=1, axes=(0, 1), name=None):
    """Rotate by 90 degrees ``k`` times in the plane of ``axes`` (from the first toward the second)."""
    a0, a1 = axes
    k %= 4
    if k == 0:
        return x
    if k == 2:
        return flip(x, [a0, a1])
    perm = list(range(x.ndim))
    perm[a0], perm[a1] = perm[a1], perm[a0]
    return transpose(flip(x, [a1]), perm) if k == 1 else flip(transpose(x, perm), [a1])


def diag_embed(input, offset=0, dim1=-2, dim2=-1):  # noqa: A002
    """Put the last dim of ``input`` on diagonal ``offset`` of new (dim1, dim2) planes."""
    n = input.shape[-1] + abs(offset)
    eye = np.zeros((input.shape[-1], n, n), dtype=input.dtype)
    idx = np.arange(input.shape[-1])
    eye[idx, idx + max(-offset, 0), idx + max(offset, 0)] = 1
    out = matmul(reshape(input, [-1, input.shape[-1]]), reshape(constant(eye), [input.shape[-1], n * n]))
    out = reshape(out, input.shape[:-1] + [n, n])
    nd = out.ndim
    d1, d2 = dim1 % nd, dim2 % nd
    if (d1, d2) == (nd - 2, nd - 1):
        return out
    rest = [i for i in range(nd - 2)]
    perm = [None] * nd
    for slot, src in zip((d1, d2), (nd - 2, nd - 1), strict=True):
        perm[slot] = src
    it = iter(rest)
    perm = [p if p is not None else next(it) for p in perm]
    return transpose(out, perm)


def block_diag(inputs, name=None):
    mats = [reshape(t, [1, -1]) if t.ndim < 2 else t for t in inputs]
    cols = sum(m.shape[1] for m in mats)
    rows, left = [], 0
    for m in mats:
        right = cols - left - m.shape[1]
        rows.append(concat([t for t in (creation.zeros([m.shape[0], left], m.dtype), m,
                                        creation.zeros([m.shape[0], right], m.dtype)) if t.shape[1]], 1))  # fmt: skip
        left += m.shape[1]
    return concat(rows, 0)


def cartesian_prod(x, name=None):
    from .math_extra import meshgrid

    grids = meshgrid(*x)
    return stack([reshape(g, [-1]) for g in grids], 1) if len(x) > 1 else x[0]


def tril_indices(row, col, offset=0, dtype="int64"):
    return constant(np.stack(np.tril_indices(row, offset, col)), convert_dtype(dtype))


def triu_indices(row, col=None, offset=0, dtype="int64"):
    return constant(np.stack(np.triu_indices(row, offset, row if col is None else col)), convert_dtype(dtype))


def logspace(start, stop, num, base=10.0, dtype=None, name=None):
    vals = [v.item() if isinstance(v, Tensor) else v for v in (start, stop, num, base)]
    return constant(np.logspace(vals[0], vals[1], int(vals[2]), base=vals[3]), convert_dtype(dtype))


# ----- samplers and predicates ----------------------------------------------------------------


def rand_like(input, name=None, *, dtype=None, device=None, requires_grad=False):  # noqa: A002
    out = creation.rand(input.shape, dtype or input.dtype)
    out.stop_gradient = not requires_grad
    return out


def randn_like(input, name=None, *, dtype=None, device=None, requires_grad=False):  # noqa: A002
    out = creation.randn(input.shape, dtype or input.dtype)
    out.stop_gradient = not requires_grad
    return out


def randint_like(x, low=0, high=None, dtype=None, name=None):
    return creation.randint(low, high, x.shape, dtype or x.dtype)


def manual_seed(seed):
    return _random.seed(seed)


def is_floating_point(x) -> bool:
    return x.dtype.kind == "f"


def is_integer(x) -> bool:
    return x.dtype.kind in "iu"


def is_complex(x) -> bool:
    return x.dtype.kind == "c"


def is_empty(x, name=None):
    return constant(x.size == 0)


def _install() -> None:
    """Tensor-only conveniences: ``requires_grad`` (the inverse of stop_gradient), ``ndimension``."""

    def requires_grad_(self, requires_grad=True):
        self.stop_gradient = not requires_grad
        return self

    Tensor.requires_grad = property(
        lambda self: not self.stop_gradient, lambda self, value: setattr(self, "stop_gradient", not value)
    )
    Tensor.requires_grad_ = requires_grad_
    Tensor.ndimension = lambda self: self.ndim


_install()

TENSOR_METHODS = [
    "clamp", "mul", "div", "sub", "ge", "gt", "le", "lt", "eq", "ne", "greater", "less", "negative", "true_divide",
    "permute", "swapaxes", "swapdims", "ravel", "deg2rad", "rad2deg", "acosh", "asinh", "atanh", "logaddexp", "hypot",
    "nan_to_num", "sgn", "signbit", "isneginf", "isposinf", "isreal", "heaviside", "copysign", "isin", "atleast_1d",
    "atleast_2d", "atleast_3d", "unstack", "tensor_split", "hsplit", "vsplit", "dsplit", "narrow", "take_along_dim",
    "argwhere", "broadcast_tensors", "tensordot", "rot90", "diag_embed", "block_diag", "is_floating_point",
    "is_integer", "is_complex", "is_empty",
]  # fmt: skip
TOP_LEVEL = [n for n in TENSOR_METHODS if n not in ("eq", "ne", "ge", "gt", "le", "lt", "greater", "less")] + [
    "eq", "ne", "ge", "gt", "le", "lt", "greater", "less", "positive", "cat", "concatenate", "hstack", "vstack",
    "row_stack", "dstack", "column_stack", "broadcast_shape", "cartesian_prod", "tril_indices", "triu_indices",
    "logspace", "rand_like", "randn_like", "randint_like", "manual_seed",
]  # fmt: skip
