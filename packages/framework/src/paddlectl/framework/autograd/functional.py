"""``paddle.autograd.jacobian`` / ``hessian``: Jacobian and Hessian matrices evaluated lazily.

Reverse mode gives one row of a Jacobian per backward pass, so a ``Jacobian`` computes a row
only when an index asks for it (``J[2]``, ``J[1:4]``, ``J[:, :, 0]`` evaluates every row) and
caches it. Rows are computed with ``create_graph=True``, so a Jacobian is differentiable again:
a Hessian is the Jacobian of the gradient.

Shapes follow Paddle: ``batch_axis=None`` takes 0-D or 1-D ``ys``/``xs`` and gives ``[M, N]`` (a
0-D side drops its axis); ``batch_axis=0`` takes ``[B]`` or ``[B, n]`` and gives ``[B, M, N]``
with row ``i`` the gradient of ``ys[:, i]`` (the batch elements are taken to be independent).
"""

from __future__ import annotations

from collections.abc import Sequence

from ..core.autograd import grad
from ..core.tensor import Tensor
from ..ops.creation import zeros_like
from ..ops.shape import stack

__all__ = ["Hessian", "Jacobian", "hessian", "jacobian"]


class Jacobian:
    """The Jacobian of ``ys`` with respect to ``xs`` (one Tensor each); index it like a Tensor."""

    def __init__(self, ys: Tensor, xs: Tensor, is_batched: bool = False) -> None:
        _check_tensor(ys, "ys")
        _check_tensor(xs, "xs")
        low, high, what = (1, 2, "is_batched=True") if is_batched else (0, 1, "is_batched=False")
        for name, t in (("xs", xs), ("ys", ys)):
            if not low <= t.ndim <= high:
                raise ValueError(f"{name}.ndim should be {low} or {high} when {what} but got {t.ndim}")
        self.is_batched = is_batched
        self._xs, self._ys_shape, self._xs_shape = xs, list(ys.shape), list(xs.shape)
        if is_batched:
            self._ys = ys.reshape([ys.shape[0], -1])
            self.shape = [xs.shape[0], *ys.shape[1:2], *xs.shape[1:2]]
        else:
            self._ys = ys.reshape([-1])
            self.shape = [*ys.shape[0:1], *xs.shape[0:1]]
        self._rows: dict[int, Tensor] = {}

    @property
    def _n_rows(self) -> int:
        return self._ys.shape[-1]

    def _row(self, i: int) -> Tensor:
        """d ys[i] / d xs flattened (``[N]``; batched ``[B, N]``), computed once."""
        row = self._rows.get(i)
        if row is None:
            y = self._ys[:, i] if self.is_batched else self._ys[i]
            (g,) = grad(y, self._xs, create_graph=True, allow_unused=True)
            g = zeros_like(self._xs) if g is None else g
            row = self._rows[i] = g.reshape([g.shape[0], -1] if self.is_batched else [-1])
        return row

    def __getitem__(self, index):
        """Evaluate only the rows the index selects, then index them."""
        full = self._full_index(index)
        lazy = 1 if self.is_batched else 0
        rows = full[lazy]
        picked = [rows] if isinstance(rows, int) else range(*rows.indices(self._n_rows))
        if not picked:
            raise IndexError(f"Jacobian index {index!r} selects no rows of a Jacobian of shape {self.shape}")
        block = stack([self._row(i) for i in picked], axis=lazy)
        inner = (*full[:lazy], 0 if isinstance(rows, int) else slice(None), *full[lazy + 1 :])
        result = block[inner]
        while result.ndim > len(self.shape):
            result = result.squeeze(-1)
        return result

    def _full_index(self, index) -> tuple:
        """The index on the public shape as one on the inner ``[M, N]`` / ``[B, M, N]`` matrix."""
        if not self.shape:
            raise IndexError("0-D tensor can not be indexed.")
        parts = index if isinstance(index, tuple) else (index,)
        if any(p is Ellipsis for p in parts):
            raise IndexError("Ellipsis index currently is not supported.")
        bad = [p for p in parts if not isinstance(p, int | slice) or isinstance(p, bool)]
        if bad:
            raise TypeError(f"Not supported index type {type(bad[0]).__name__}; index a Jacobian with ints and slices")
        if len(parts) > len(self.shape):
            raise IndexError(f"too many indices ({len(parts)}) for a Jacobian of shape {self.shape}")
        parts = parts + (slice(None),) * (len(self.shape) - len(parts))
        if self.is_batched and len(self._ys_shape) == 1:  # ys [B]: its single row axis is implicit
            parts = (parts[0], 0, *parts[1:])
        if self.is_batched and len(self._xs_shape) == 1:
            parts = (*parts, 0)
        if not self.is_batched and len(self._ys_shape) == 0:
            parts = (0, *parts)
        if not self.is_batched and len(self._xs_shape) == 0:
            parts = (*parts, 0)
        sizes = (
            [self._xs.shape[0], self._n_rows, self._row_width] if self.is_batched else [self._n_rows, self._row_width]
        )
        return tuple(_positive(p, n) for p, n in zip(parts, sizes, strict=True))

    @property
    def _row_width(self) -> int:
        size = 1
        for d in self._xs_shape[1 if self.is_batched else 0 :]:
            size *= d
        return size

    def _evaluate_all(self) -> Tensor:
        if not self.shape:
            return self._row(0).reshape([])
        return self[:]

    def __getattr__(self, name: str):
        """Anything else a Tensor has (``numpy``, ``sum``, ``dtype``...) acts on the whole matrix."""
        if name.startswith("_"):
            raise AttributeError(name)
        return getattr(self._evaluate_all(), name)


def _binary(name: str):
    def method(self, other):
        rhs = other._evaluate_all() if isinstance(other, Jacobian) else other
        return getattr(self._evaluate_all(), name)(rhs)

    method.__name__ = name
    return method


for _name in (
    "__add__", "__sub__", "__mul__", "__truediv__", "__pow__", "__mod__", "__floordiv__", "__matmul__",
    "__eq__", "__ne__", "__lt__", "__le__", "__gt__", "__ge__",
):  # fmt: skip
    setattr(Jacobian, _name, _binary(_name))
Jacobian.__hash__ = object.__hash__


class Hessian(Jacobian):
    """A Jacobian of a gradient: ``hessian`` returns these."""


def _positive(index, size: int):
    if isinstance(index, int):
        if not -size <= index < size:
            raise IndexError(f"index {index} is out of bounds for a Jacobian axis of size {size}")
        return index + size if index < 0 else index
    return index


def _check_tensor(value, name: str) -> None:
    if not isinstance(value, Tensor):
        raise TypeError(f"{name} must be a Tensor or a tuple of Tensors, got {type(value).__name__}")


def _batched(batch_axis) -> bool:
    if batch_axis is not None and (isinstance(batch_axis, bool) or batch_axis != 0):
        raise ValueError(f"batch_axis should be None or 0, but got {batch_axis}.")
    return batch_axis is not None


def jacobian(ys, xs, batch_axis=None):
    """``Jacobian`` of ``ys`` w.r.t. ``xs``; a tuple on either side gives a tuple (of tuples)."""
    batched = _batched(batch_axis)
    multi_y, multi_x = isinstance(ys, Sequence), isinstance(xs, Sequence)
    if multi_y and multi_x:
        return tuple(tuple(Jacobian(y, x, batched) for x in xs) for y in ys)
    if multi_y:
        return tuple(Jacobian(y, xs, batched) for y in ys)
    if multi_x:
        return tuple(Jacobian(ys, x, batched) for x in xs)
    return Jacobian(ys, xs, batched)


def hessian(ys, xs, batch_axis=None):
    """``Hessian`` of a single-element ``ys`` (batched: one element per batch entry) w.r.t. ``xs``;
    a tuple ``xs`` gives the tuple of tuples of blocks ``H[i][j] = d2 ys / dxs[i] dxs[j]``."""
    batched = _batched(batch_axis)
    _check_tensor(ys, "ys")
    if batched:
        if ys.ndim == 0 or ys[0].size > 1:
            raise ValueError(f"Only support ys[0].numel()==1 when batch_axis is int, got ys of shape {ys.shape}")
        ys = ys.reshape([-1])
    else:
        if ys.size > 1:
            raise ValueError(f"Only support ys.numel()({ys.size})==1 when batch_axis is None.")
        ys = ys.reshape([])
    if isinstance(xs, Sequence):
        gradients = [Jacobian(ys, x, batched)._evaluate_all() for x in xs]
        return tuple(tuple(Hessian(g, x, batched) for x in xs) for g in gradients)
    return Hessian(Jacobian(ys, xs, batched)._evaluate_all(), xs, batched)
