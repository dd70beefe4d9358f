"""Deformable convolution (``paddle.vision.ops.deform_conv2d``, DCN v1 and v2 with a mask).

The record is the deformable sampling, ``deform_sample`` ([N, C, kh * kw, Ho, Wo] columns, the
im2col of a convolution whose taps move); ``deform_conv2d`` multiplies them with the weight through
``matmul``, so the weight's and bias's gradients are the matmul's and only the sampling has kernels
of its own (kernels/deform_conv.py). Its image gradient is linear in the columns' gradient (a record
whose own gradient is the sampling again); the offsets' and mask's gradient is a third record.
"""

from __future__ import annotations

import numpy as np

from ..core.op import OPAQUE, OpDef, Sample, Spec
from ..errors import ShapeError
from ..kernels import deform_conv as kernels
from .linalg import matmul
from .shape import reshape


def _mask(mask: np.ndarray | None, offset: np.ndarray, dtype) -> np.ndarray:
    """DCN v1 (no mask) is v2 with a mask of ones."""
    if mask is None:
        n, c2, ho, wo = offset.shape
        return np.ones((n, c2 // 2, ho, wo), dtype)
    return np.ascontiguousarray(mask, dtype=dtype)


def _geometry(stride, padding, dilation) -> tuple:
    return (*map(int, stride), *map(int, padding), *map(int, dilation))


def _sample_forward(ctx, x, offset, mask=None, *, kernel_size, stride, padding, dilation, deformable_groups):
    kh, kw = kernel_size
    dg = int(deformable_groups)
    if offset.shape[1] != 2 * dg * kh * kw or (mask is not None and mask.shape[1] != dg * kh * kw):
        raise ShapeError(
            f"deform_conv2d: offset must have 2 * deformable_groups * kh * kw = {2 * dg * kh * kw} channels and mask "
            f"{dg * kh * kw}, got {offset.shape[1]} and {None if mask is None else mask.shape[1]}"
        )
    offset = np.ascontiguousarray(offset, dtype=x.dtype)
    return kernels.deform_sample(
        np.ascontiguousarray(x), offset, _mask(mask, offset, x.dtype), kh, kw, _geometry(stride, padding, dilation), dg
    )


def _sample_vjp(ctx, g):
    x, offset, mask = ctx.input(0), ctx.input(1), ctx.input(2)
    attrs = ctx.attrs
    gx = (
        deform_sample_grad_op(g, offset, mask, image_size=tuple(x.shape[2:]), **attrs)
        if ctx.needs_input_grad[0]
        else None
    )
    g_off = g_mask = None
    if ctx.needs_input_grad[1] or (mask is not None and ctx.needs_input_grad[2]):
        g_off, g_mask = deform_sample_coord_grad_op(g, x, offset, mask, **attrs)
    return gx, g_off, None if mask is None else g_mask


def _sample_infer(x: Spec, offset: Spec, mask: Spec | None = None, *, kernel_size, **attrs) -> Spec:
    return Spec((x.shape[0], x.shape[1], kernel_size[0] * kernel_size[1], *offset.shape[2:]), x.dtype)


def _deform_inputs(rng, masked: bool):
    x = rng.standard_normal((1, 4, 5, 6))
    offset = rng.uniform(-1.5, 1.5, (1, 2 * 2 * 4, 4, 5))
    mask = rng.uniform(0, 1, (1, 2 * 4, 4, 5)) if masked else None
    return x, offset, mask


_SAMPLE_ATTRS = {"kernel_size": (2, 2), "stride": (1, 1), "padding": (0, 0), "dilation": (1, 1), "deformable_groups": 2}


def _sample_samples(rng):
    return [Sample(_deform_inputs(rng, True), _SAMPLE_ATTRS), Sample(_deform_inputs(rng, False), _SAMPLE_ATTRS)]


deform_sample_op = OpDef(
    "deform_sample",
    _sample_forward,
    _sample_vjp,
    _sample_infer,
    OPAQUE,
    samples=_sample_samples,
    exempt={"vjp2": "the offsets' gradient (deform_sample_coord_grad) has no derivative of its own"},
)
"""The deformable im2col: [N, C, kh * kw, Ho, Wo] bilinear samples at the moved taps, times the mask."""


def _grad_forward(ctx, g, offset, mask=None, *, image_size, kernel_size, stride, padding, dilation, deformable_groups):
    offset = np.ascontiguousarray(offset, dtype=g.dtype)
    return kernels.deform_sample_adjoint(
        np.ascontiguousarray(g), offset, _mask(mask, offset, g.dtype), *image_size, *kernel_size,
        _geometry(stride, padding, dilation), int(deformable_groups),
    )  # fmt: skip


def _grad_vjp(ctx, gg):
    attrs = {k: v for k, v in ctx.attrs.items() if k != "image_size"}
    return deform_sample_op(gg, ctx.input(1), ctx.input(2), **attrs), None, None


def _grad_infer(g: Spec, offset: Spec, mask: Spec | None = None, *, image_size, **attrs) -> Spec:
    return Spec((g.shape[0], g.shape[1], *image_size), g.dtype)


def _grad_samples(rng):
    x, offset, mask = _deform_inputs(rng, True)
    g = rng.standard_normal((1, 4, 4, 4, 5))
    return [Sample((g, offset, mask), {**_SAMPLE_ATTRS, "image_size": (5, 6)})]


deform_sample_grad_op = OpDef(
    "deform_sample_grad", _grad_forward, _grad_vjp, _grad_infer, OPAQUE, samples=_grad_samples
)
"""The adjoint of ``deform_sample`` in its image: the image's gradient [N, C, H, W]."""


def _coord_forward(ctx, g, x, offset, mask=None, *, kernel_size, stride, padding, dilation, deformable_groups):
    offset = np.ascontiguousarray(offset, dtype=x.dtype)
    g_off, g_mask = kernels.deform_sample_coord_grad(
        np.ascontiguousarray(g, dtype=x.dtype), np.ascontiguousarray(x), offset, _mask(mask, offset, x.dtype),
        *kernel_size, _geometry(stride, padding, dilation), int(deformable_groups),
    )  # fmt: skip
    return g_off, g_mask


def _coord_infer(g: Spec, x: Spec, offset: Spec, mask: Spec | None = None, **attrs):
    n, c2, ho, wo = offset.shape
    return Spec(tuple(offset.shape), x.dtype), Spec((n, c2 // 2 if isinstance(c2, int) else c2, ho, wo), x.dtype)


deform_sample_coord_grad_op = OpDef(
    "deform_sample_coord_grad",
    _coord_forward,
    None,
    _coord_infer,
    OPAQUE,
    samples=lambda rng: [Sample((rng.standard_normal((1, 4, 4, 4, 5)), *_deform_inputs(rng, True)), _SAMPLE_ATTRS)],
)
"""The gradients of ``deform_sample`` in its offsets and its mask (the mask's is ignored for v1)."""


def deform_conv2d_columns(x, offset, weight, mask, *, stride, padding, dilation, deformable_groups, groups):
    """The convolution itself: ``weight`` [O, C / groups, kh, kw] times the deformable columns, per
    group, as one batched ``matmul``; [N, O, Ho, Wo] without bias."""
    out_channels, per_group, kh, kw = weight.shape
    cols = deform_sample_op(
        x, offset, mask, kernel_size=(kh, kw), stride=stride, padding=padding, dilation=dilation,
        deformable_groups=deformable_groups,
    )  # fmt: skip
    n, ho, wo = x.shape[0], offset.shape[2], offset.shape[3]
    cols = reshape(cols, [n, groups, per_group * kh * kw, ho * wo])
    w = reshape(weight, [groups, out_channels // groups, per_group * kh * kw])
    return reshape(matmul(w, cols), [n, out_channels, ho, wo])
