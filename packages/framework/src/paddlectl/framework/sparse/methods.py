"""The sparse methods of ``Tensor`` (``to_sparse_coo``, ``to_sparse_csr``, ``to_dense``, ``is_sparse*``)
and the conversions of COO/CSR tensors, attached here as ``ops`` attaches the dense methods."""

from __future__ import annotations

from ..core.tensor import Tensor
from . import convert
from .binary import is_same_shape
from .tensor import SparseCooTensor, SparseCsrTensor


def _false(self) -> bool:
    return False


def _install() -> None:
    dense = {
        "to_sparse_coo": convert.dense_to_coo,
        "to_sparse_csr": convert.dense_to_csr,
        "to_dense": lambda self: self,
        "is_sparse": _false,
        "is_sparse_coo": _false,
        "is_sparse_csr": _false,
        "is_same_shape": is_same_shape,
        "sparse_dim": lambda self: 0,
        "dense_dim": lambda self: self.ndim,
    }
    for name, fn in dense.items():
        setattr(Tensor, name, fn)
    coo = {
        "to_dense": convert.coo_to_dense,
        "to_sparse_coo": convert.coo_with_sparse_dim,
        "to_sparse_csr": convert.coo_to_csr,
        "coalesce": convert.coalesce,
        "is_coalesced": lambda self: self._coalesced,
    }
    for name, fn in coo.items():
        setattr(SparseCooTensor, name, fn)
    csr = {
        "to_dense": lambda self: convert.coo_to_dense(convert.csr_to_coo(self)),
        "to_sparse_coo": convert.csr_to_coo,
        "to_sparse_csr": lambda self: self,
        "sparse_dim": lambda self: self.ndim,
        "dense_dim": lambda self: 0,
    }
    for name, fn in csr.items():
        setattr(SparseCsrTensor, name, fn)


_install()
