"""``paddle.tensor(data, ...)`` / ``paddle.as_tensor``: ``to_tensor`` with Paddle 3's PyTorch-style
keywords (``device``, ``requires_grad``, ``pin_memory``)."""

from __future__ import annotations

from .creation import to_tensor


def as_tensor(data, dtype=None, device=None, requires_grad: bool = False, pin_memory: bool = False):
    """A new tensor holding a copy of ``data`` (a Tensor is copied too, with ``stop_gradient`` set
    from ``requires_grad``); ``pin_memory`` asks for page-locked host memory, which a CPU tensor
    needs no different."""
    return to_tensor(data, dtype=dtype, place=device, stop_gradient=not requires_grad)
