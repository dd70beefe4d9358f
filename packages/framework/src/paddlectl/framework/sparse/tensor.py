"""COO and CSR tensors: index arrays plus a dense ``values`` Tensor that lives on the tape.

A sparse tensor is a ``Tensor`` (Paddle's ``paddle.Tensor`` with ``is_sparse()``), but it has no
dense array: reading ``_data`` raises ``LayoutError``, so every dense op (they all read their
inputs' arrays in ``core.dispatch``) refuses it with the fix, at no cost to dense calls. Sparse ops
compute the index pattern with NumPy (integer constants, as in Paddle) and the values with the
framework's ops, so gradients reach ``values`` (and through it the sparse leaf's ``.grad``) by the
ordinary tape.
"""

from __future__ import annotations

import numpy as np

from ..core.printing import array_options
from ..core.tensor import Tensor
from ..errors import LayoutError

INDEX = np.int64


def _refuse(self):
    raise LayoutError(
        f"a sparse {self.layout} tensor reached an op that takes dense tensors only: convert it with "
        ".to_dense(), or call the paddle.sparse function of the same name"
    )


def _refuse_set(self, value):
    _refuse(self)


def _print(label: str, array: np.ndarray) -> str:
    text = f"{label}="
    return text + np.array2string(array, separator=", ", prefix="       " + text, **array_options(array))


def require_sparse(x) -> None:
    """Refuse a dense tensor where a ``paddle.sparse`` function needs a sparse one, with the fix."""
    if not isinstance(x, SparseTensor):
        shape = x.shape if isinstance(x, Tensor) else type(x).__name__
        raise LayoutError(
            f"expected a sparse tensor (COO or CSR), got {shape}: convert it with .to_sparse_coo(sparse_dim) "
            "or .to_sparse_csr()"
        )


class SparseTensor(Tensor):
    """What COO and CSR share: the values Tensor, the dense shape, and the Tensor facts that a
    dense Tensor reads from its array."""

    __slots__ = ("_values", "_dense_shape")
    layout = "sparse"
    _data = property(_refuse, _refuse_set)

    def _init(self, values: Tensor, shape) -> None:
        self._values = values
        self._dense_shape = [int(d) for d in shape]
        # the slots Tensor's own methods read (the gradient itself lives on the values)
        self._grad = None
        self._node = None
        self._out_index = 0
        self._hooks = None
        self.name = None
        self.persistable = False

    # ----- facts -----------------------------------------------------------------
    @property
    def shape(self) -> list[int]:
        return list(self._dense_shape)

    @property
    def dtype(self):
        return self._values.dtype

    @property
    def ndim(self) -> int:
        return len(self._dense_shape)

    def dim(self) -> int:
        return len(self._dense_shape)

    @property
    def size(self) -> int:
        return int(np.prod(self._dense_shape, dtype=np.int64))

    def numel(self) -> int:
        return self.size

    @property
    def stop_gradient(self) -> bool:
        return self._values.stop_gradient

    @stop_gradient.setter
    def stop_gradient(self, value: bool) -> None:
        self._values.stop_gradient = bool(value)

    @property
    def is_leaf(self) -> bool:
        return self._values.is_leaf

    def is_sparse(self) -> bool:
        return True

    def is_dense(self) -> bool:
        return False

    def values(self) -> Tensor:
        return self._values

    def nnz(self) -> int:
        return int(self._values.shape[0]) if self._values.ndim else 1

    def __len__(self) -> int:
        return self._dense_shape[0]

    # ----- autograd: the values carry it ----------------------------------------------
    @property
    def grad(self):
        g = self._values.grad
        return None if g is None else self.with_values(g)

    @grad.setter
    def grad(self, value) -> None:
        self._values.grad = None if value is None else value.values()

    def clear_gradient(self, set_to_zero: bool = True) -> None:
        self._values.clear_gradient(set_to_zero)

    clear_grad = clear_gradient

    def backward(self, grad_tensor=None, retain_graph: bool = False) -> None:
        """Backward from the values (Paddle's sparse backward seeds the stored entries only)."""
        seed = None if grad_tensor is None else grad_tensor.values()
        self._values.backward(seed, retain_graph=retain_graph)

    def detach(self):
        return self.with_values(self._values.detach())

    def __repr__(self) -> str:
        head = (
            f"Tensor(shape={self.shape}, dtype={self.dtype.name}, place={self.place}, "
            f"stop_gradient={self.stop_gradient}, \n"
        )
        parts = [_print(label, array) for label, array in self._printed()]
        parts.append(_print("values", self._values.numpy()))
        return head + "".join(f"       {p}, \n" for p in parts[:-1]) + f"       {parts[-1]})"

    __str__ = __repr__


class SparseCooTensor(SparseTensor):
    """``indices`` [sparse_dim, nnz] (int64) and ``values`` [nnz, *dense dims]."""

    __slots__ = ("_indices", "_coalesced")
    layout = "COO"

    def __init__(self, indices: np.ndarray, values: Tensor, shape, coalesced: bool = False) -> None:
        self._indices = np.ascontiguousarray(indices, dtype=INDEX)  # [sparse_dim, nnz] from every caller
        self._coalesced = coalesced
        self._init(values, shape)

    def with_values(self, values: Tensor) -> SparseCooTensor:
        """This pattern holding ``values`` (what every value-wise sparse op returns)."""
        return SparseCooTensor(self._indices, values, self._dense_shape, coalesced=self._coalesced)

    def _printed(self):
        return [("indices", self._indices)]

    def is_sparse_coo(self) -> bool:
        return True

    def is_sparse_csr(self) -> bool:
        return False

    def indices(self) -> Tensor:
        return Tensor(self._indices)

    def sparse_dim(self) -> int:
        return int(self._indices.shape[0])

    def dense_dim(self) -> int:
        return self.ndim - self.sparse_dim()


class SparseCsrTensor(SparseTensor):
    """2-D ([M, N]) or batched 3-D ([B, M, N]) CSR: ``crows`` (B * (M + 1)), ``cols`` and ``values``
    (nnz) in row-major order, as Paddle stores them."""

    __slots__ = ("_crows", "_cols")
    layout = "CSR"

    def __init__(self, crows: np.ndarray, cols: np.ndarray, values: Tensor, shape) -> None:
        self._crows = np.ascontiguousarray(crows, dtype=INDEX).ravel()
        self._cols = np.ascontiguousarray(cols, dtype=INDEX).ravel()
        self._init(values, shape)

    def with_values(self, values: Tensor) -> SparseCsrTensor:
        return SparseCsrTensor(self._crows, self._cols, values, self._dense_shape)

    def _printed(self):
        return [("crows", self._crows), ("cols", self._cols)]

    def is_sparse_coo(self) -> bool:
        return False

    def is_sparse_csr(self) -> bool:
        return True

    def crows(self) -> Tensor:
        return Tensor(self._crows)

    def cols(self) -> Tensor:
        return Tensor(self._cols)

    def coo_indices(self) -> np.ndarray:
        """[ndim, nnz] coordinates of the stored entries, in storage order."""
        rows_per_batch = self._dense_shape[-2]
        counts = np.diff(self._crows.reshape(-1, rows_per_batch + 1), axis=1).ravel()
        flat_rows = np.repeat(np.arange(counts.size, dtype=INDEX), counts)
        batch, row = np.divmod(flat_rows, rows_per_batch)
        coords = [row, self._cols] if self.ndim == 2 else [batch, row, self._cols]
        return np.stack(coords).astype(INDEX)
