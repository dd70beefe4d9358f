"""Region-of-interest pooling records: ``roi_align`` (Paddle's, and ONNX's ``RoiAlign`` with its
``max`` mode), RoIPool's ``roi_pool_argmax`` and ``psroi_pool``.

Every record takes the RoIs' image indices (``batch_index`` [R] int64, ONNX's ``batch_indices``);
``paddle.vision.ops`` derives them from ``boxes_num``. Averaging pools are linear in the image, so
each one's gradient is a record of its own (the kernel's adjoint) whose gradient is the pool again:
derivatives of any order run on the two kernels. RoIPool is a gather at the argmax, so
``vision.ops.roi_pool`` gathers with ops and only the argmax (no gradient) is a record here. The
boxes get no gradient, as in Paddle.
"""

from __future__ import annotations

import numpy as np

from ..core.op import OPAQUE, OpDef, Sample, Spec
from ..errors import ShapeError
from ..kernels import roi as roi_kernels


def _batch(op: str, batch_index: np.ndarray, images: int) -> np.ndarray:
    """The RoIs' image indices, checked against the batch (a traced program checks its own)."""
    batch = np.ascontiguousarray(batch_index, dtype=np.int64).reshape(-1)
    if batch.size and (batch.min() < 0 or batch.max() >= images):
        raise ShapeError(
            f"{op}: RoI image indices must lie in [0, {images}) (the batch), got {batch.min()}..{batch.max()}; "
            "boxes_num must sum to the number of boxes"
        )
    return batch


def _scale(spatial_scale) -> float:
    """The scale as the kernels see it: Paddle's and ONNX's ``spatial_scale`` attribute is a float32
    (0.7 is 0.69999998...), which decides where a bin edge lands on a pixel boundary."""
    return float(np.float32(spatial_scale))


def _boxes(boxes: np.ndarray) -> np.ndarray:
    return np.ascontiguousarray(boxes, dtype=np.float64)


def _align_forward(ctx, x, boxes, batch_index, *, output_size, spatial_scale, sampling_ratio, aligned, mode):
    batch = _batch("roi_align", batch_index, x.shape[0])
    out = roi_kernels.roi_align(
        np.ascontiguousarray(x), _boxes(boxes), batch, *output_size, _scale(spatial_scale), int(sampling_ratio),
        bool(aligned), mode == "max",
    )  # fmt: skip
    return out.astype(x.dtype, copy=False)


def _align_vjp(ctx, g):
    if ctx.attrs["mode"] == "max":
        raise ShapeError("roi_align: mode='max' (ONNX's) has no gradient here; train with the average (mode='avg')")
    x = ctx.input(0)
    shape = (x.shape[0], x.shape[2], x.shape[3])
    attrs = {k: v for k, v in ctx.attrs.items() if k != "mode"}
    return roi_align_grad_op(g, ctx.input(1), ctx.input(2), image_shape=shape, **attrs), None, None


def _align_infer(x: Spec, boxes: Spec, batch_index: Spec, *, output_size, **attrs) -> Spec:
    return Spec((boxes.shape[0], x.shape[1], *output_size), x.dtype)


def _rois(rng, images: int, size: float, count: int = 5):
    corner = rng.uniform(-1, size * 0.6, (count, 2))
    boxes = np.concatenate([corner, corner + rng.uniform(0.5, size * 0.6, (count, 2))], axis=1)
    return boxes, rng.integers(0, images, count).astype(np.int64)


def _align_samples(rng):
    boxes, batch = _rois(rng, 2, 16.0)
    x = rng.standard_normal((2, 3, 8, 8))
    attrs = {"output_size": (2, 3), "spatial_scale": 0.5, "sampling_ratio": -1, "aligned": True, "mode": "avg"}
    return [
        Sample((x, boxes, batch), attrs),
        Sample((x, boxes, batch), {**attrs, "sampling_ratio": 2, "aligned": False}),
    ]


roi_align_op = OpDef("roi_align", _align_forward, _align_vjp, _align_infer, OPAQUE, samples=_align_samples)
"""[R, C, ph, pw]: each bin the average of ``sampling_ratio``^2 bilinear samples (adaptive where
<= 0); ``aligned`` shifts the box by half a pixel (ONNX's ``half_pixel``)."""


def _align_grad_forward(
    ctx, g, boxes, batch_index, *, image_shape, output_size, spatial_scale, sampling_ratio, aligned
):
    n, h, w = image_shape
    batch = _batch("roi_align", batch_index, n)
    out = roi_kernels.roi_align_adjoint(
        np.ascontiguousarray(g),
        _boxes(boxes),
        batch,
        n,
        h,
        w,
        _scale(spatial_scale),
        int(sampling_ratio),
        bool(aligned),
    )
    return out.astype(g.dtype, copy=False)


def _align_grad_vjp(ctx, gg):
    attrs = {k: v for k, v in ctx.attrs.items() if k != "image_shape"}
    return roi_align_op(gg, ctx.input(1), ctx.input(2), mode="avg", **attrs), None, None


def _align_grad_infer(g: Spec, boxes: Spec, batch_index: Spec, *, image_shape, **attrs) -> Spec:
    n, h, w = image_shape
    return Spec((n, g.shape[1], h, w), g.dtype)


def _align_grad_samples(rng):
    boxes, batch = _rois(rng, 2, 12.0)
    attrs = {"output_size": (2, 2), "spatial_scale": 1.0, "sampling_ratio": 2, "aligned": False}
    return [Sample((rng.standard_normal((5, 3, 2, 2)), boxes, batch), {**attrs, "image_shape": (2, 7, 9)})]


roi_align_grad_op = OpDef(
    "roi_align_grad", _align_grad_forward, _align_grad_vjp, _align_grad_infer, OPAQUE, samples=_align_grad_samples
)
"""The adjoint of the averaging ``roi_align``: its gradient in the image [N, C, H, W]."""


def _argmax_forward(ctx, x, boxes, batch_index, *, output_size, spatial_scale):
    batch = _batch("roi_pool", batch_index, x.shape[0])
    return roi_kernels.roi_pool_argmax(
        np.ascontiguousarray(x), _boxes(boxes), batch, *output_size, _scale(spatial_scale)
    )


roi_pool_argmax_op = OpDef(
    "roi_pool_argmax",
    _argmax_forward,
    None,
    lambda x, boxes, batch_index, *, output_size, **attrs: Spec(
        (boxes.shape[0], x.shape[1], *output_size), np.dtype(np.int64)
    ),
    OPAQUE,
    samples=lambda rng: [
        Sample((rng.standard_normal((2, 3, 8, 8)), *_rois(rng, 2, 10.0)), {"output_size": (3, 2), "spatial_scale": 1.0})
    ],
)
"""Flat index into x of each RoIPool bin's maximum (-1 for an empty bin): where roi_pool gathers."""


def _ps_forward(ctx, x, boxes, batch_index, *, output_size, spatial_scale):
    ph, pw = output_size
    if x.shape[1] % (ph * pw):
        raise ShapeError(
            f"psroi_pool: the input's channels ({x.shape[1]}) must be a multiple of output_size's "
            f"{ph} x {pw} = {ph * pw} bins"
        )
    batch = _batch("psroi_pool", batch_index, x.shape[0])
    out = roi_kernels.psroi_pool(np.ascontiguousarray(x), _boxes(boxes), batch, ph, pw, _scale(spatial_scale))
    return out.astype(x.dtype, copy=False)


def _ps_vjp(ctx, g):
    n, c, h, w = ctx.input(0).shape
    return psroi_pool_grad_op(g, ctx.input(1), ctx.input(2), image_shape=(n, c, h, w), **ctx.attrs), None, None


def _ps_infer(x: Spec, boxes: Spec, batch_index: Spec, *, output_size, **attrs) -> Spec:
    ph, pw = output_size
    c = x.shape[1] // (ph * pw) if isinstance(x.shape[1], int) else x.shape[1]
    return Spec((boxes.shape[0], c, ph, pw), x.dtype)


def _ps_samples(rng):
    boxes, batch = _rois(rng, 2, 8.0)
    return [Sample((rng.standard_normal((2, 8, 6, 7)), boxes, batch), {"output_size": (2, 2), "spatial_scale": 0.8})]


psroi_pool_op = OpDef("psroi_pool", _ps_forward, _ps_vjp, _ps_infer, OPAQUE, samples=_ps_samples)
"""[R, C / (ph * pw), ph, pw]: position-sensitive average pooling (R-FCN)."""


def _ps_grad_forward(ctx, g, boxes, batch_index, *, image_shape, output_size, spatial_scale):
    n, c, h, w = image_shape
    batch = _batch("psroi_pool", batch_index, n)
    out = roi_kernels.psroi_pool_adjoint(
        np.ascontiguousarray(g), _boxes(boxes), batch, n, c, h, w, _scale(spatial_scale)
    )
    return out.astype(g.dtype, copy=False)


def _ps_grad_vjp(ctx, gg):
    attrs = {k: v for k, v in ctx.attrs.items() if k != "image_shape"}
    return psroi_pool_op(gg, ctx.input(1), ctx.input(2), **attrs), None, None


def _ps_grad_samples(rng):
    boxes, batch = _rois(rng, 2, 8.0)
    attrs = {"output_size": (2, 2), "spatial_scale": 0.8, "image_shape": (2, 8, 6, 7)}
    return [Sample((rng.standard_normal((5, 2, 2, 2)), boxes, batch), attrs)]


psroi_pool_grad_op = OpDef(
    "psroi_pool_grad",
    _ps_grad_forward,
    _ps_grad_vjp,
    lambda g, boxes, batch_index, *, image_shape, **attrs: Spec(tuple(image_shape), g.dtype),
    OPAQUE,
    samples=_ps_grad_samples,
)
"""The adjoint of ``psroi_pool``: its gradient in the image."""
