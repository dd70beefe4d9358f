"""Complex tensors: building them (``complex``, ``as_complex``), taking them apart (``real``,
``imag``, ``angle``, ``as_real``) and conjugating (``conj``).

Gradients follow Paddle's convention: for a real loss L of ``z = x + iy`` the gradient handed back
for ``z`` is ``dL/dx + i dL/dy``, so each vjp here maps that pair through the op's real Jacobian
(``real``'s is ``g + 0i``, ``imag``'s ``0 + ig``, ``conj``'s ``conj(g)``)."""

from __future__ import annotations

import numpy as np

from ..core.dtype import complex_of, is_floating, real_of
from ..core.op import OPAQUE, OpDef, Sample, Spec
from ..core.shapes import broadcast_shapes
from ..errors import DTypeError, ShapeError
from .broadcast import sum_to
from .elementwise import cast_op, conj_op, cos, sin, where_op


def _complex_sample(rng, shape=(3, 4)):
    return rng.uniform(-2, 2, shape) + 1j * rng.uniform(-2, 2, shape)


def _parts_infer(x: Spec) -> Spec:
    return Spec(x.shape, real_of(np.dtype(x.dtype)))


def _as_complex_grad(g, like):
    """``g`` as the gradient of ``like``: the real gradient ``g + 0i`` for a complex input."""
    return cast_op(g, dtype=like.dtype.name) if like.dtype.kind == "c" else g


real_op = OpDef(
    "real",
    lambda ctx, x: np.real(x).copy(),
    lambda ctx, g: _as_complex_grad(g, ctx.input(0)),
    _parts_infer,
    OPAQUE,  # complex values: the fused kernels compute in one float type
    samples=lambda rng: [Sample((_complex_sample(rng),))],
)


def _imag_vjp(ctx, g):
    x = ctx.input(0)
    return cast_op(g, dtype=x.dtype.name) * 1j if x.dtype.kind == "c" else g * 0


imag_op = OpDef(
    "imag",
    lambda ctx, x: np.imag(x).copy(),
    _imag_vjp,
    _parts_infer,
    OPAQUE,  # complex values: the fused kernels compute in one float type
    samples=lambda rng: [Sample((_complex_sample(rng),))],
)


def _angle_vjp(ctx, g):
    """``d angle / dx = -y / |z|^2``, ``d angle / dy = x / |z|^2`` (0 at the origin; 0 for a real input)."""
    z = ctx.input(0)
    if z.dtype.kind != "c":
        return g * 0
    x, y = real_op(z), imag_op(z)
    r2 = x * x + y * y
    safe = where_op(r2 == 0, r2 + 1, r2)
    return complex_op(-y * g / safe, x * g / safe)


angle_op = OpDef(
    "angle",
    lambda ctx, x: np.angle(x).astype(real_of(x.dtype) if x.dtype.kind == "c" else x.dtype),
    _angle_vjp,
    _parts_infer,
    OPAQUE,  # complex values: the fused kernels compute in one float type
    samples=lambda rng: [Sample((_complex_sample(rng),))],
)


def _complex_forward(ctx, re, im):
    out = np.empty(np.broadcast_shapes(re.shape, im.shape), dtype=complex_of(np.result_type(re, im)))
    out.real, out.imag = re, im
    return out


def _complex_vjp(ctx, g):
    return sum_to(real_op(g), ctx.input(0)), sum_to(imag_op(g), ctx.input(1))


def _complex_infer(re: Spec, im: Spec) -> Spec:
    dtype = complex_of(np.result_type(np.dtype(re.dtype), np.dtype(im.dtype)))
    return Spec(broadcast_shapes("complex", re.shape, im.shape), dtype)


complex_op = OpDef(
    "complex",
    _complex_forward,
    _complex_vjp,
    _complex_infer,
    OPAQUE,
    samples=lambda rng: [Sample((rng.uniform(-2, 2, (3, 4)), rng.uniform(-2, 2, (4,))))],
)


def _as_complex_infer(x: Spec) -> Spec:
    return Spec(tuple(x.shape[:-1]), complex_of(np.dtype(x.dtype)))


def _as_real_infer(x: Spec) -> Spec:
    return Spec((*x.shape, 2), real_of(np.dtype(x.dtype)))


as_complex_op = OpDef(
    "as_complex",
    lambda ctx, x: _complex_forward(ctx, x[..., 0], x[..., 1]),
    lambda ctx, g: as_real_op(g),
    _as_complex_infer,
    OPAQUE,
    samples=lambda rng: [Sample((rng.uniform(-2, 2, (3, 4, 2)),))],
)
as_real_op = OpDef(
    "as_real",
    lambda ctx, x: np.stack([x.real, x.imag], axis=-1),
    lambda ctx, g: as_complex_op(g),
    _as_real_infer,
    OPAQUE,
    samples=lambda rng: [Sample((_complex_sample(rng),))],
)


def _need_complex(op: str, x) -> None:
    if x.dtype.kind != "c":
        raise DTypeError(f"{op}: x must be complex64 or complex128, got {x.dtype.name}; build one with paddle.complex")


def _need_float(op: str, x, what: str = "x") -> None:
    if not is_floating(x.dtype) or x.dtype.itemsize < 4:
        raise DTypeError(f"{op}: {what} must be float32 or float64, got {x.dtype.name}; cast it first")


def real(x, name=None):
    return real_op(x)


def imag(x, name=None):
    return imag_op(x)


def conj(x, name=None):
    return conj_op(x)


def angle(x, name=None):
    """The argument of each element: ``atan2(imag, real)``; 0 or pi for a real tensor, as a float tensor."""
    if x.dtype.kind in "iub":
        x = cast_op(x, dtype="float32")
    return angle_op(x)


def complex(real, imag, name=None):  # noqa: A001 - Paddle's name
    """``real + i imag`` (broadcast), complex64 from float32 parts and complex128 from float64 ones."""
    _need_float("complex", real, "real")
    _need_float("complex", imag, "imag")
    if real.dtype != imag.dtype:
        raise DTypeError(f"complex: real ({real.dtype.name}) and imag ({imag.dtype.name}) must share a dtype")
    return complex_op(real, imag)


def polar(abs, angle, name=None):  # noqa: A002 - Paddle's names
    """``abs * (cos(angle) + i sin(angle))``: the complex numbers of given magnitudes and arguments."""
    _need_float("polar", abs, "abs")
    _need_float("polar", angle, "angle")
    if abs.dtype != angle.dtype:
        raise DTypeError(f"polar: abs ({abs.dtype.name}) and angle ({angle.dtype.name}) must share a dtype")
    return complex_op(abs * cos(angle), abs * sin(angle))


def as_complex(x, name=None):
    """A float tensor whose last axis holds (real, imag) pairs as the complex tensor they stand for."""
    _need_float("as_complex", x)
    if x.ndim == 0 or x.shape[-1] != 2:
        raise ShapeError(f"as_complex: the last axis of x must have size 2 (real, imag), got shape {x.shape}")
    return as_complex_op(x)


def as_real(x, name=None):
    """A complex tensor as float pairs on a new last axis (``as_complex``'s inverse)."""
    _need_complex("as_real", x)
    return as_real_op(x)


TENSOR_METHODS = ["real", "imag", "conj", "angle", "as_complex", "as_real", "polar"]
TOP_LEVEL = [*TENSOR_METHODS, "complex"]
