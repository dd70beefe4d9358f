"""Paddle's tensor constructors beside ``to_tensor``: ``paddle.tensor(data, ...)`` /
``paddle.as_tensor`` / ``paddle.asarray`` with Paddle 3's PyTorch-style keywords, and
``paddle.tensor.create_tensor``."""

from __future__ import annotations

import itertools

import numpy as np

from ..core.dtype import convert_dtype
from .creation import to_tensor

_created = itertools.count()


def as_tensor(data, dtype=None, device=None, requires_grad: bool = False, pin_memory: bool = False):
    """A new tensor holding a copy of ``data`` (a Tensor is copied too, with ``stop_gradient`` set
    from ``requires_grad``); ``pin_memory`` asks for page-locked host memory, which a CPU tensor
    needs no different."""
    return to_tensor(data, dtype=dtype, place=device, stop_gradient=not requires_grad)


def create_tensor(dtype, name=None, persistable: bool = False):
    """A named 0-d tensor of ``dtype`` to assign into later (Paddle's holds no value yet; this one
    holds zero)."""
    t = to_tensor(np.zeros((), dtype=convert_dtype(dtype)))
    t.name, t.persistable = name if name is not None else f"create_tensor_{next(_created)}", persistable
    return t


asarray = as_tensor  # Paddle's other name for it

TOP_LEVEL = ["create_tensor", "asarray"]
