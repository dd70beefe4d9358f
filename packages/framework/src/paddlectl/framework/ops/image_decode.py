"""``decode_jpeg`` as an op: encoded bytes (1-D uint8) in, a [C, H, W] uint8 image out, decoded by
OpenCV (Paddle's decodes on the GPU with nvJPEG; its CPU build has none). An op, so an image
pipeline that reads and decodes traces with it; the image's size depends on the bytes, so its
dims are symbols."""

from __future__ import annotations

import cv2
import numpy as np

from ..core.op import OPAQUE, OpDef, Sample, Spec
from ..errors import DataError

_FLAGS = {"unchanged": cv2.IMREAD_UNCHANGED, "gray": cv2.IMREAD_GRAYSCALE, "rgb": cv2.IMREAD_COLOR}


def _decode_forward(ctx, data, *, mode):
    image = cv2.imdecode(np.ascontiguousarray(data, dtype=np.uint8).reshape(-1), _FLAGS[mode])
    if image is None:
        raise DataError(f"decode_jpeg: the {data.size} bytes are not a decodable image; read them with read_file")
    if image.ndim == 2:
        return image[None].copy()
    colours = image[..., [2, 1, 0]] if image.shape[2] == 3 else image[..., [2, 1, 0, 3]]  # OpenCV is BGR(A)
    return np.ascontiguousarray(colours.transpose(2, 0, 1))


def _decode_infer(data: Spec, *, mode):
    channels = {"gray": 1, "rgb": 3}.get(mode, "jpeg_channels")
    return Spec((channels, "jpeg_height", "jpeg_width"), np.dtype(np.uint8))


def _decode_samples(rng):
    _, encoded = cv2.imencode(".jpg", rng.integers(0, 256, (6, 5, 3), dtype=np.uint8))
    return [Sample((encoded.reshape(-1),), {"mode": m}) for m in ("unchanged", "gray", "rgb")]


decode_jpeg_op = OpDef(
    "decode_jpeg",
    _decode_forward,
    None,
    _decode_infer,
    OPAQUE,
    samples=_decode_samples,
)
