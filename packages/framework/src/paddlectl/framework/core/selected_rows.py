"""A row-sparse gradient (Paddle's SelectedRows): the rows of a [height, dim] table an op touched
and one value row per entry, so a lookup into a huge table never allocates a table-sized gradient.

It is a Tensor whose data is the values, as Paddle's ``param.grad`` of a ``sparse=True`` Embedding
is: ``shape``/``numpy()`` give the values, ``rows()`` the row ids (repeated where an id was looked
up more than once, until the gradient is accumulated or merged), ``height()`` the table's rows.
``to_dense()`` gives the table-shaped gradient (Paddle has no dense view of it in dygraph).
"""

from __future__ import annotations

import numpy as np

from .tensor import Tensor, _apply_hooks

_rows_add = np.add.at
"""``out[index] += values``, repeated rows accumulating: NumPy's until ``kernels.index`` (a layer above
this one) installs its compiled scatter with ``use_rows_add`` when it is imported."""


def use_rows_add(rows_add) -> None:
    global _rows_add
    _rows_add = rows_add


class SelectedRows(Tensor):
    __slots__ = ("_rows", "_height")

    def __init__(self, rows, values, height: int) -> None:
        super().__init__(values, dtype=np.asarray(values).dtype)
        self._rows = np.asarray(rows, dtype=np.int64).reshape(-1)
        self._height = int(height)
        if self._data.ndim != 2 or self._data.shape[0] != self._rows.size:
            raise ValueError(
                f"SelectedRows: values must be [len(rows), dim], got {list(self._data.shape)} for "
                f"{self._rows.size} rows"
            )

    @classmethod
    def _of(cls, rows: np.ndarray, values: np.ndarray, height: int) -> SelectedRows:
        """Wrap arrays already in shape, without copying (backward's hot path)."""
        out = cls._wrap(values)
        out._rows, out._height = rows, int(height)
        return out

    def is_selected_rows(self) -> bool:
        return True

    def rows(self) -> list[int]:
        return self._rows.tolist()

    def height(self) -> int:
        return self._height

    def value(self) -> Tensor:
        return Tensor._wrap(self._data)

    values = value

    def with_values(self, values: np.ndarray) -> SelectedRows:
        """The same rows carrying new values (a clip or a scale rewrote them)."""
        return SelectedRows._of(self._rows, np.asarray(values), self._height)

    def merged(self) -> SelectedRows:
        """One entry per distinct row, in ascending order, duplicates summed (Paddle's
        ``merge_selected_rows``): what norms and per-row optimizer updates need."""
        rows, inverse = _distinct(self._rows, self._height)
        if rows.size == self._rows.size and np.array_equal(rows, self._rows):
            return self
        values = np.zeros((rows.size, self._data.shape[1]), dtype=self._data.dtype)
        _rows_add(values, inverse.reshape(-1), self._data)
        return SelectedRows._of(rows, values, self._height)

    def to_dense(self) -> Tensor:
        dense = np.zeros((self._height, self._data.shape[1]), dtype=self._data.dtype)
        _rows_add(dense, self._rows, self._data)
        return Tensor._wrap(dense)

    def __repr__(self) -> str:
        return f"SelectedRows(height={self._height}, rows={self.rows()}, values=\n{super().__repr__()})"


def _distinct(rows: np.ndarray, height: int) -> tuple[np.ndarray, np.ndarray]:
    """``np.unique(rows, return_inverse=True)``. When the table is not much taller than the entries
    are many, a mark per table row replaces the sort: a CTR batch's 3,584 lookups into a 2,667-row
    table, 390 -> 70 us (a million-row table, or rows outside it, keep NumPy's sort)."""
    if rows.size and height <= 8 * rows.size and rows.min() >= 0 and rows.max() < height:
        seen = np.zeros(height, dtype=bool)
        seen[rows] = True
        return np.flatnonzero(seen), (np.cumsum(seen) - 1)[rows]
    return np.unique(rows, return_inverse=True)


def is_sparse(grad) -> bool:
    return isinstance(grad, SelectedRows)


def dense(grad) -> Tensor:
    """``grad`` as a table-shaped Tensor (unchanged when it is one already)."""
    return grad.to_dense() if is_sparse(grad) else grad


def accumulate(param: Tensor, grad: Tensor) -> None:
    """Add ``grad`` into ``param.grad``, as Paddle does: sparse + sparse concatenates and merges the
    rows, sparse + dense gives a dense gradient. A parameter with gradient hooks (DataParallel
    installs one to all-reduce into its bucket) receives a dense gradient: hooks are written for
    table-shaped gradients."""
    held = param._grad
    if param._hooks and is_sparse(grad):
        grad = grad.to_dense()
    if not is_sparse(grad) and not is_sparse(held):
        param._accumulate_grad(grad)
    elif held is None:
        param._grad = SelectedRows._of(grad._rows.copy(), np.array(grad._data, dtype=param.dtype), grad._height)
    elif is_sparse(held) and is_sparse(grad):
        rows = np.concatenate([held._rows, grad._rows])
        values = np.concatenate([held._data, grad._data.astype(param.dtype, copy=False)])
        param._grad = SelectedRows._of(rows, values, held._height).merged()
    elif is_sparse(grad):  # into a dense gradient: only the touched rows change
        _rows_add(held._data, grad._rows, grad._data.astype(held.dtype, copy=False))
    else:  # a dense gradient meets a sparse one: the sum is dense
        grad = _apply_hooks(param._hooks, grad) if param._hooks else grad
        param._grad = Tensor._wrap(np.array(held.to_dense()._data + grad._data, dtype=param.dtype))
