"""Small helpers the op families share: turning arguments into tensors and undoing broadcasting."""

from __future__ import annotations

import numpy as np

from ..core.dtype import as_array, complex_of, is_floating
from ..core.tensor import Tensor
from ..errors import DTypeError


def unbroadcast(grad: np.ndarray, shape: tuple) -> np.ndarray:
    """Sum a broadcast gradient back down to the input's ``shape``."""
    if grad.shape == shape:
        return grad
    extra = grad.ndim - len(shape)
    if extra:
        grad = grad.sum(axis=tuple(range(extra)))
    axes = tuple(i for i, (g, s) in enumerate(zip(grad.shape, shape, strict=True)) if s == 1 and g != 1)
    if axes:
        grad = grad.sum(axis=axes, keepdims=True)
    return grad


def refuse_complex(op: str, *arrays) -> None:
    """A typed error for a complex input to an op that orders or rounds values (max, sort, clip,
    floor, remainder...): complex numbers have no order, and Paddle has no complex kernel for these."""
    for a in arrays:
        if a is not None and a.dtype.kind == "c":
            raise DTypeError(
                f"{op} does not take complex tensors (got {a.dtype.name}): complex numbers have no order; "
                "apply it to paddle.abs(x), paddle.real(x) or paddle.imag(x)"
            )


def real_only(op: str, fn):
    """``fn`` on arrays, refusing complex ones (``refuse_complex``)."""

    def run(*arrays, **kwargs):
        refuse_complex(op, *arrays)
        return fn(*arrays, **kwargs)

    return run


def constant(value, dtype=None) -> Tensor:
    """A Python value, or an array computed from Python values and shapes, as a constant tensor.

    The one way ops/ wraps an array outside an op's ``forward``: a tracer records it as a constant,
    which is right only because it never derives from a tensor's data (compute on data in an op)."""
    return Tensor._wrap(as_array(value, dtype))


def to_tensor_like(value, like: Tensor | None = None) -> Tensor:
    """A Python scalar or array as a constant tensor; a float scalar next to a tensor takes its float dtype."""
    if isinstance(value, Tensor):
        return value
    if like is not None and isinstance(value, int | float | bool | np.number) and not isinstance(value, np.ndarray):
        dtype = like.dtype
        if isinstance(value, float) and not (dtype.kind == "c" or is_floating(dtype)):
            dtype = None  # int tensor * 0.5 promotes to the default float dtype, as in Paddle
        elif isinstance(value, bool) or (isinstance(value, int) and dtype.kind == "b"):
            dtype = dtype if dtype.kind != "b" else np.dtype("int64")
        return constant(value, dtype)
    if like is not None and isinstance(value, complex):  # x * 1j: complex at x's precision, as in Paddle
        return constant(value, complex_of(like.dtype))
    return constant(value)


def tensor_args(*values):
    """Tensors for a binary op: scalars take their dtype from the tensor beside them, and integer
    tensors meeting a float tensor become that float dtype (Paddle's promotion, not NumPy's float64)."""
    if all(isinstance(v, Tensor) for v in values) and len({v.dtype for v in values}) == 1:
        return values  # nothing to convert or promote: the common case, and a third of a small op's cost
    like = next((v for v in values if isinstance(v, Tensor)), None)
    tensors = tuple(to_tensor_like(v, like) for v in values)
    floats = [t.dtype for t in tensors if is_floating(t.dtype) or t.dtype.kind == "c"]
    if floats and len(floats) < len(tensors):
        target = np.result_type(*floats)
        tensors = tuple(t if is_floating(t.dtype) or t.dtype.kind == "c" else t.astype(target) for t in tensors)
    return tensors
