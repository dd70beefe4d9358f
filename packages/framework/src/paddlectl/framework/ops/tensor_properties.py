"""Layout questions Paddle's Tensor answers: ``is_dense`` (no sparse or distributed storage here,
so always True), ``is_dist`` (always False: a tensor here lives in one process), and ``stride``/
``get_strides``, the row-major element strides of the tensor's logical layout (the layout every
tensor here has: views are materialised)."""

from __future__ import annotations

from ..core.shapes import normalize_axis


def is_dense(x) -> bool:
    """``Tensor.is_dense``: True (dense storage is the only kind here)."""
    return True


def is_dist(x) -> bool:
    """``Tensor.is_dist``: False (no tensor here is sharded across processes)."""
    return False


def get_strides(x) -> list[int]:
    """``Tensor.get_strides``: elements to step per dim, row-major."""
    strides, step = [], 1
    for dim in reversed(x.shape):
        strides.append(step)
        step *= max(int(dim), 1)
    return strides[::-1]


def stride(x, dim=None):
    """``Tensor.stride``: all strides, or dim ``dim``'s."""
    strides = get_strides(x)
    return strides if dim is None else strides[normalize_axis("stride", int(dim), x.ndim)]


TENSOR_METHODS = ["is_dense", "is_dist", "get_strides", "stride"]
