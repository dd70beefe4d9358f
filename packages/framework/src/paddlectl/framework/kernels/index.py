"""Scatter-add kernels: the gradients of gathers. ``np.add.at`` is ~30x slower on rows of floats
(an embedding-sized gather backward: 80 ms against 3 ms), and these run every training step."""

import numpy as np

from ..core.selected_rows import use_rows_add
from . import njit


@njit(cache=True)
def _scatter_add_axis(out, index, grad):
    """out[p, index[k], q] += grad[p, k, q] for out (P, N, Q), index (K,), grad (P, K, Q)."""
    for p in range(grad.shape[0]):
        for k in range(index.shape[0]):
            row = index[k]
            for q in range(grad.shape[2]):
                out[p, row, q] += grad[p, k, q]


@njit(cache=True)
def _put_add_along(out, index, grad):
    """out[p, index[p, k, q], q] += grad[p, k, q] for out (P, N, Q) and index, grad (P, K, Q)."""
    for p in range(grad.shape[0]):
        for k in range(grad.shape[1]):
            for q in range(grad.shape[2]):
                out[p, index[p, k, q], q] += grad[p, k, q]


@njit(cache=True)
def _rows_add(out, index, values):
    """out[index[k]] += values[k] for out (N, Q), index (K,), values (K, Q)."""
    for k in range(index.shape[0]):
        row = out[index[k]]
        value = values[k]
        for q in range(row.shape[0]):
            row[q] += value[q]


_COMPILED = (np.dtype(np.float32), np.dtype(np.float64))


def rows_add(out: np.ndarray, index: np.ndarray, values: np.ndarray) -> None:
    """``np.add.at(out, index, values)`` for a 2-D ``out`` and a 1-D ``index`` (repeated rows
    accumulate; a negative index counts from the end): compiled for float32 and float64, NumPy's
    for the other dtypes (float16, bfloat16) Numba has no arithmetic for, and where an index is out
    of range (NumPy raises its IndexError; the compiled loop does not check)."""
    n = out.shape[0]
    inside = index.size == 0 or (index.min() >= -n and index.max() < n)
    if out.dtype in _COMPILED and values.dtype == out.dtype and out.flags.c_contiguous and inside:
        _rows_add(
            out, index.astype(np.int64, copy=False), np.ascontiguousarray(values).reshape(index.size, out.shape[1])
        )
    else:
        np.add.at(out, index, values)


use_rows_add(rows_add)  # SelectedRows (in core, below this layer) scatters rows with it


def _three_d(shape: tuple, axis: int) -> tuple[int, int, int]:
    return int(np.prod(shape[:axis])), shape[axis], int(np.prod(shape[axis + 1 :]))


def _nonnegative(index: np.ndarray, n: int) -> np.ndarray:
    index = index.astype(np.int64, copy=False)
    return np.where(index < 0, index + n, index) if index.size and index.min() < 0 else index


def scatter_add_axis(shape: tuple, axis: int, index: np.ndarray, grad: np.ndarray) -> np.ndarray:
    """The gradient of ``np.take(x, index, axis)`` for a 1-D ``index``: zeros of ``shape`` plus ``grad``
    added at ``index`` along ``axis`` (duplicates accumulate)."""
    p, n, q = _three_d(shape, axis)
    out = np.zeros((p, n, q), dtype=grad.dtype)
    index = _nonnegative(index.reshape(-1), n)
    _scatter_add_axis(out, index, np.ascontiguousarray(grad).reshape(p, index.shape[0], q))
    return out.reshape(shape)


def put_add_along(shape: tuple, axis: int, index: np.ndarray, grad: np.ndarray) -> np.ndarray:
    """The gradient of ``np.take_along_axis(x, index, axis)``: ``grad`` added back at ``index``."""
    p, n, q = _three_d(shape, axis)
    k = index.shape[axis]
    out = np.zeros((p, n, q), dtype=grad.dtype)
    index = np.ascontiguousarray(_nonnegative(index, n)).reshape(p, k, q)
    _put_add_along(out, index, np.ascontiguousarray(grad).reshape(p, k, q))
    return out.reshape(shape)
