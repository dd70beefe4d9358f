"""``paddle.linalg``: the matrix functions (ops/lapack.py), norms (ops/norms.py) and products
(ops/products.py) Paddle lists here, plus matmul, diagonal and matrix_transpose."""

from .ops import eig as _eig
from .ops import lapack as _lapack
from .ops import lu as _lu
from .ops import matrix_functions as _matrix_functions
from .ops import norms as _norms
from .ops import products as _products
from .ops.diagonal import diagonal  # noqa: F401
from .ops.linalg import matmul  # noqa: F401
from .ops.numeric_api import matrix_transpose  # noqa: F401

globals().update(
    {
        _n: getattr(_family, _n)
        for _family in (_eig, _lapack, _lu, _matrix_functions, _norms, _products)
        for _n in _family.LINALG
    }
)


__all__ = [
    *_eig.LINALG,
    *_lapack.LINALG,
    *_lu.LINALG,
    *_matrix_functions.LINALG,
    *_norms.LINALG,
    *_products.LINALG,
    "matmul",
    "diagonal",
    "matrix_transpose",
]
