"""Creation functions: they make new leaf tensors, so they are plain functions rather than ops,
except ``zeros_like``/``ones_like``/``full_like``: their shape is another tensor's, so as an op
(``full_like``, no gradient) they trace with that tensor's symbolic dims."""

from __future__ import annotations

import numpy as np

from ..core.dtype import as_array, convert_dtype, get_default_dtype
from ..core.op import OPAQUE, OpDef, Sample, Spec
from ..core.tensor import Tensor
from ..errors import ShapeError
from . import random as _random
from ._util import constant


def to_tensor(data, dtype=None, place=None, stop_gradient: bool = True) -> Tensor:
    """A new tensor holding a copy of ``data`` (Python scalars, lists, ndarrays or tensors)."""
    if isinstance(data, Tensor):  # a recorded copy: a traced program keeps computing it
        t = data.detach().clone()
        t = t if dtype is None else t.astype(dtype)
    else:
        array = np.array(as_array(data, dtype), copy=True)
        if array.dtype == np.float64 and dtype is None and not (isinstance(data, np.ndarray)):
            array = array.astype(get_default_dtype())
        if array.dtype.kind in "OUS":
            raise TypeError(f"to_tensor: cannot make a tensor from {type(data).__name__} holding {array.dtype} values")
        t = constant(array)
    t.stop_gradient = stop_gradient
    return t


def _shape(shape) -> tuple[int, ...]:
    if isinstance(shape, Tensor):
        shape = shape.tolist()
    if isinstance(shape, int | np.integer):
        shape = [shape]
    dims = tuple(int(d.item()) if isinstance(d, Tensor) else int(d) for d in shape)
    if any(d < 0 for d in dims):
        raise ShapeError(f"shape {list(dims)} has a negative dimension; every dimension must be >= 0")
    return dims


def zeros(shape, dtype=None, name=None) -> Tensor:
    return constant(np.zeros(_shape(shape), dtype=convert_dtype(dtype)))


def ones(shape, dtype=None, name=None) -> Tensor:
    return constant(np.ones(_shape(shape), dtype=convert_dtype(dtype)))


def full(shape, fill_value, dtype=None, name=None) -> Tensor:
    if isinstance(fill_value, Tensor):
        fill_value = fill_value.item()
    if dtype is None and isinstance(fill_value, bool):
        dtype = "bool"
    elif dtype is None and isinstance(fill_value, int):
        dtype = "int64"
    return constant(np.full(_shape(shape), fill_value, dtype=convert_dtype(dtype)))


def empty(shape, dtype=None, name=None) -> Tensor:
    return constant(np.empty(_shape(shape), dtype=convert_dtype(dtype)))


def _like(x: Tensor, dtype):
    return x.shape, convert_dtype(dtype) if dtype is not None else x.dtype


def _full_like_forward(ctx, x, value, dtype):
    return np.full(x.shape, value, dtype=dtype)


def _full_like_infer(x: Spec, value, dtype) -> Spec:
    return Spec(tuple(x.shape), np.dtype(dtype))


full_like_op = OpDef(
    "full_like",
    _full_like_forward,
    None,
    _full_like_infer,
    OPAQUE,
    samples=lambda rng: [
        Sample((rng.standard_normal((3, 4)),), {"value": 1.5, "dtype": np.dtype(np.float64)}),
        Sample((rng.standard_normal((2,)),), {"value": 7, "dtype": np.dtype(np.int64)}),
    ],
    items=True,
)


def full_like(x, fill_value, dtype=None, name=None) -> Tensor:
    _, dt = _like(x, dtype)
    value = _scalar(fill_value)
    value = bool(value) if dt.kind == "b" else int(value) if dt.kind in "iu" else float(value)
    return full_like_op(x, value=value, dtype=dt)


def zeros_like(x, dtype=None, name=None) -> Tensor:
    return full_like(x, 0, dtype)


def ones_like(x, dtype=None, name=None) -> Tensor:
    return full_like(x, 1, dtype)


def empty_like(x, dtype=None, name=None) -> Tensor:
    shape, dt = _like(x, dtype)
    return constant(np.empty(shape, dtype=dt))


def _scalar(v):
    return v.item() if isinstance(v, Tensor) else v


def arange(start=0, end=None, step=1, dtype=None, name=None) -> Tensor:
    start, end, step = _scalar(start), _scalar(end), _scalar(step)
    if end is None:
        start, end = 0, start
    if step == 0:
        raise ValueError("arange: step must not be 0")
    if dtype is None:
        dtype = "int64" if all(isinstance(v, int | np.integer) for v in (start, end, step)) else get_default_dtype()
    return constant(np.arange(start, end, step, dtype=convert_dtype(dtype)))


def linspace(start, stop, num, dtype=None, name=None, *, device=None, requires_grad=False) -> Tensor:
    """``num`` evenly spaced values; ``device`` is accepted for Paddle 3.3's signature (CPU only here)."""
    out = constant(np.linspace(_scalar(start), _scalar(stop), int(_scalar(num)), dtype=convert_dtype(dtype)))
    out.stop_gradient = not requires_grad
    return out


def eye(num_rows, num_columns=None, dtype=None, name=None) -> Tensor:
    return constant(
        np.eye(int(num_rows), None if num_columns is None else int(num_columns), dtype=convert_dtype(dtype))
    )


def rand(shape, dtype=None, name=None) -> Tensor:
    return uniform(shape, dtype, 0.0, 1.0)


def randn(shape, dtype=None, name=None) -> Tensor:
    return normal(0.0, 1.0, shape, dtype)


def standard_normal(shape, dtype=None, name=None) -> Tensor:
    return normal(0.0, 1.0, shape, dtype)


def uniform(shape, dtype=None, min=-1.0, max=1.0, seed=0, name=None) -> Tensor:  # noqa: A002
    """Paddle's uniform kernel; a non-zero ``seed`` draws from a fresh engine seeded with it, as Paddle's does."""
    dt = convert_dtype(dtype)
    if seed:
        with _random.fresh_engine(seed):
            return constant(_random.uniform(_shape(shape), min, max, dt))
    return constant(_random.uniform(_shape(shape), min, max, dt))


def normal(mean=0.0, std=1.0, shape=None, dtype=None, name=None) -> Tensor:
    """Scalar mean and std: Paddle's gaussian kernel; a Tensor mean or std: standard normals in its
    shape, scaled and shifted, as Paddle composes it."""
    if isinstance(mean, Tensor) or isinstance(std, Tensor):
        m, sd = (as_array(v) if isinstance(v, Tensor) else v for v in (mean, std))
        like = m if isinstance(mean, Tensor) else sd
        return constant(
            (_random.normal(np.broadcast_shapes(np.shape(m), np.shape(sd)), 0.0, 1.0, like.dtype) * sd + m).astype(
                like.dtype
            )
        )
    dt = convert_dtype(dtype)
    return constant(_random.normal(_shape(shape if shape is not None else [1]), mean, std, dt))


def randint(low=0, high=None, shape=(1,), dtype=None, name=None) -> Tensor:
    if high is None:
        low, high = 0, low
    if high <= low:
        raise ValueError(f"randint: high ({high}) must be greater than low ({low})")
    return constant(_random.integers(_shape(shape), low, high, convert_dtype(dtype or "int64")))


def randperm(n, dtype="int64", name=None) -> Tensor:
    return constant(_random.permutation(int(n), convert_dtype(dtype)))
