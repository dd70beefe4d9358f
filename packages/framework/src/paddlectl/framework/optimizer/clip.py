"""Gradient clipping (Paddle: ``paddle.nn.ClipGradBy*``), applied by the optimizer before the update.

Each clip maps a list of ``(param, grad)`` pairs to a new list; parameters with
``need_clip=False`` pass through untouched, as in Paddle.
"""

from __future__ import annotations

import numpy as np

from ..core.tensor import Tensor

__all__ = ["ClipGradBase", "ClipGradByValue", "ClipGradByNorm", "ClipGradByGlobalNorm"]


def _array(grad) -> np.ndarray:
    return grad._data if isinstance(grad, Tensor) else np.asarray(grad)


def _squared_norm(array: np.ndarray) -> np.ndarray:
    flat = array.reshape(-1)
    return np.dot(flat, flat)


class ClipGradBase:
    """Base: subclasses define ``_clip(array) -> array`` or override ``__call__``."""

    def __call__(self, params_grads):
        out = []
        for param, grad in params_grads:
            if grad is None:
                continue
            if getattr(param, "need_clip", True) is False:
                out.append((param, grad))
            else:
                out.append((param, Tensor._wrap(self._clip(_array(grad)))))
        return out

    def _clip(self, array: np.ndarray) -> np.ndarray:
        raise TypeError(f"{type(self).__name__} must define _clip(); ClipGradBase is a base class")


class ClipGradByValue(ClipGradBase):
    """Clamp every gradient element into ``[min, max]`` (``min`` defaults to ``-max``)."""

    def __init__(self, max: float, min: float | None = None) -> None:  # noqa: A002 - Paddle's names
        if min is None:
            if not max > 0.0:
                raise ValueError(f"ClipGradByValue: max must be positive when min is omitted, got {max}")
            min = -max  # noqa: A001
        self.max, self.min = float(max), float(min)

    def _clip(self, array: np.ndarray) -> np.ndarray:
        kind = array.dtype.type
        return np.clip(array, kind(self.min), kind(self.max))

    def __str__(self) -> str:
        return f"Clip Gradient By Value, min = {self.min:f}, max={self.max:f}"


class ClipGradByNorm(ClipGradBase):
    """Rescale each gradient whose L2 norm exceeds ``clip_norm`` down to that norm."""

    def __init__(self, clip_norm: float) -> None:
        self.clip_norm = float(clip_norm)

    def _clip(self, array: np.ndarray) -> np.ndarray:
        kind = array.dtype.type
        norm = np.sqrt(_squared_norm(array))
        if norm > kind(self.clip_norm):
            return array * (kind(self.clip_norm) / norm)
        return array

    def __str__(self) -> str:
        return f"Gradient Clip By Norm, clip_norm={self.clip_norm:f}"


class ClipGradByGlobalNorm(ClipGradBase):
    """Scale all gradients by ``clip_norm / max(global_norm, clip_norm)``, the global norm taken over
    every gradient whose parameter has ``need_clip``; ``auto_skip_clip`` skips the multiply when the
    norm is already small."""

    def __init__(self, clip_norm: float, group_name: str = "default_group", auto_skip_clip: bool = False) -> None:
        if not isinstance(auto_skip_clip, bool):
            raise TypeError(f"ClipGradByGlobalNorm: auto_skip_clip must be a bool, got {auto_skip_clip!r}")
        self.clip_norm = float(clip_norm)
        self.group_name = group_name
        self.auto_skip_clip = auto_skip_clip

    def __call__(self, params_grads):
        clipped = [(p, _array(g)) for p, g in params_grads if g is not None and getattr(p, "need_clip", True)]
        if not clipped:
            return list(params_grads)
        sum_dtype = np.float64 if any(g.dtype == np.float64 for _, g in clipped) else np.float32
        total = np.sum(np.array([_squared_norm(g) for _, g in clipped], dtype=sum_dtype), dtype=sum_dtype)
        global_norm = np.sqrt(total)
        max_norm = sum_dtype(self.clip_norm)
        if self.auto_skip_clip and not global_norm > max_norm:
            return [(p, g) for p, g in params_grads if g is not None]
        scale = max_norm / max(global_norm, max_norm)
        out = []
        for param, grad in params_grads:
            if grad is None:
                continue
            if getattr(param, "need_clip", True) is False:
                out.append((param, grad))
                continue
            array = _array(grad)
            out.append((param, Tensor._wrap(array * array.dtype.type(scale))))
        return out

    def __str__(self) -> str:
        return f"Gradient Clip By GlobalNorm, global_norm={self.clip_norm:f}"


GradientClipBase = ClipGradBase
GradientClipByValue = ClipGradByValue
GradientClipByNorm = ClipGradByNorm
GradientClipByGlobalNorm = ClipGradByGlobalNorm
