"""``paddle.sparse``: COO and CSR tensors, their math, and ``paddle.sparse.nn``.

A sparse tensor is a ``Tensor`` whose values are a dense Tensor on the tape and whose indices are
NumPy integers (``sparse/tensor.py``); dense ops refuse it with a ``LayoutError``."""

from . import methods as _methods  # noqa: F401 - attaches Tensor.to_sparse_coo and the sparse conversions
from . import nn
from .binary import add, addmm, divide, is_same_shape, mask_as, masked_matmul, matmul, multiply, mv, subtract
from .convert import coalesce
from .creation import sparse_coo_tensor, sparse_csr_tensor
from .pca import pca_lowrank
from .structure import reshape, slice, sum, transpose  # noqa: A004 - Paddle's names
from .unary import UNARY as _UNARY
from .unary import cast, pow  # noqa: A004

globals().update(_UNARY)

__all__ = [
    "sparse_coo_tensor", "sparse_csr_tensor", "coalesce", "add", "subtract", "multiply", "divide", "matmul",
    "masked_matmul", "mv", "addmm", "mask_as", "is_same_shape", "reshape", "transpose", "slice", "sum", "cast",
    "pow", "pca_lowrank", "nn", *_UNARY,
]  # fmt: skip
