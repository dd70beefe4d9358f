"""``paddle.autograd.backward``: ``Tensor.backward`` for several roots at once, so shared parts of
the graph are walked once and each leaf's ``.grad`` receives the sum over the roots."""

from __future__ import annotations

from ..core.autograd import run_backward
from ..core.tensor import Tensor
from ..errors import ShapeError
from ..ops.creation import ones_like

__all__ = ["backward"]


def backward(tensors, grad_tensors=None, retain_graph: bool = False, *, dump_backward_graph_path=None) -> None:
    """Accumulate the gradients of ``tensors`` (seeded with ``grad_tensors``, ones where None)
    into every leaf's ``.grad``. ``dump_backward_graph_path`` is Paddle's debugging dump: refused."""
    if dump_backward_graph_path is not None:
        raise ValueError("backward: dump_backward_graph_path (Paddle's C++ graph dump) is not supported; leave it None")
    roots = [tensors] if isinstance(tensors, Tensor) else list(tensors) if isinstance(tensors, list | tuple) else None
    if not roots or not all(isinstance(t, Tensor) for t in roots):
        raise TypeError("backward: tensors must be a Tensor or a non-empty list/tuple of Tensors")
    if len({id(t) for t in roots}) != len(roots):
        raise ValueError("backward: the tensors must not contain the same tensor twice")
    if grad_tensors is None:
        seeds = [None] * len(roots)
    else:
        seeds = [grad_tensors] if isinstance(grad_tensors, Tensor) else list(grad_tensors)
    if len(seeds) != len(roots):
        raise ValueError(f"backward: {len(seeds)} grad_tensors for {len(roots)} tensors; give one per tensor (or None)")
    live, grads = [], []
    for i, (t, g) in enumerate(zip(roots, seeds, strict=True)):
        if t.stop_gradient:
            raise RuntimeError(
                f"backward: tensor {i} has stop_gradient=True, so nothing it depends on requires a gradient"
            )
        if g is None:
            g = ones_like(t)  # an op, so a traced seed follows the root's symbolic shape
        elif not isinstance(g, Tensor):
            raise TypeError(f"backward: grad_tensors[{i}] must be a Tensor or None, got {type(g).__name__}")
        elif tuple(g.shape) != tuple(t.shape):
            raise ShapeError(f"backward: grad_tensors[{i}] has shape {g.shape}, its tensor {t.shape}")
        live.append(t)
        grads.append(g.astype(t.dtype) if g.dtype != t.dtype else g)
    run_backward(live, grads, bool(retain_graph))
