"""Tensors made from shapes, ranges and the random generator rather than computed from data:
the ``*_like`` samplers, ``manual_seed``, ``logspace`` and the triangle index grids."""

from __future__ import annotations

import numpy as np

from ..core.dtype import convert_dtype
from ..core.tensor import Tensor
from . import creation
from . import random as _random
from ._util import constant


def tril_indices(row, col, offset=0, dtype="int64"):
    return constant(np.stack(np.tril_indices(row, offset, col)), convert_dtype(dtype))


def triu_indices(row, col=None, offset=0, dtype="int64"):
    return constant(np.stack(np.triu_indices(row, offset, row if col is None else col)), convert_dtype(dtype))


def logspace(start, stop, num, base=10.0, dtype=None, name=None):
    vals = [v.item() if isinstance(v, Tensor) else v for v in (start, stop, num, base)]
    return constant(np.logspace(vals[0], vals[1], int(vals[2]), base=vals[3]), convert_dtype(dtype))


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


TOP_LEVEL = [
    "rand_like", "randn_like", "randint_like", "manual_seed", "logspace", "tril_indices", "triu_indices",
]  # fmt: skip
