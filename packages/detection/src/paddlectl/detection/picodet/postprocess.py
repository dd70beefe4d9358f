"""From the network's outputs to per-image detections ``[n, 6]`` (class, score, x1, y1, x2, y2) in
source pixels, from either form of the outputs:

- the raw head output ``[B, A, K]`` (training's forward; needs each image's label row for its
  input size and scale), decoded here and put through multi-class NMS;
- ``(boxes [B, A, 4], scores [B, C, A])``, the exported model's: NMS here;
- ``(rows [N, 6], counts [B])``, the model exported with NMS inside: split per image.

NMS is the framework's ``vision.ops.multiclass_nms`` (PaddleDetection's ``multiclass_nms3``), the
same op the exported model runs, so the eager and exported paths keep the same boxes.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from paddlectl.framework import to_tensor
from paddlectl.framework.errors import ConfigError, DataError
from paddlectl.framework.vision.ops import multiclass_nms

from ..data.labels import unpack
from .anchors import anchor_points
from .loss import decode_numpy


@dataclass
class NMSParams:
    """PaddleDetection's ``MultiClassNMS`` settings (PicoDet's defaults)."""

    score_threshold: float = 0.025
    nms_threshold: float = 0.6
    nms_top_k: int = 1000
    keep_top_k: int = 100

    def __post_init__(self) -> None:
        if not 0 <= self.score_threshold < 1 or not 0 < self.nms_threshold <= 1:
            raise ConfigError("PostProcess: score_threshold must be in [0, 1) and nms_threshold in (0, 1]")
        if self.nms_top_k < -1 or self.keep_top_k < -1 or 0 in (self.nms_top_k, self.keep_top_k):
            raise ConfigError("PostProcess: nms_top_k and keep_top_k must be counts >= 1, or -1 for no limit")

    def op_kwargs(self) -> dict:
        return {**self.__dict__, "normalized": True}


def nms(boxes: np.ndarray, scores: np.ndarray, params: NMSParams) -> list[np.ndarray]:
    """``boxes`` [B, A, 4], ``scores`` [B, C, A] -> per image ``[n, 6]``."""
    out, num, _ = multiclass_nms(
        to_tensor(boxes.astype(np.float32)), to_tensor(scores.astype(np.float32)), **params.op_kwargs()
    )
    return split(out.numpy(), num.numpy())


def split(rows: np.ndarray, counts: np.ndarray) -> list[np.ndarray]:
    """multiclass_nms's rows [N, 6] and per-image counts [B] -> one [n, 6] array per image."""
    rows, counts = np.asarray(rows, np.float32).reshape(-1, 6), np.asarray(counts).reshape(-1).astype(np.int64)
    return np.split(rows, np.cumsum(counts)[:-1]) if len(counts) else []


def detections(outputs, params: NMSParams, num_classes: int, reg_max: int, strides, labels=None) -> list[np.ndarray]:
    """Per-image detections from any of the three output forms (see the module docstring)."""
    outputs = [np.asarray(o) for o in outputs]
    if len(outputs) == 1 and outputs[0].ndim == 3:
        if labels is None:
            raise DataError("raw head outputs need the label rows (input size, scale) to be decoded")
        raw, boxes, scores = outputs[0], [], []
        for row, table in zip(raw, labels, strict=True):
            label = unpack(table)
            points, stride = anchor_points(label.height, label.width, strides)
            prob, box = decode_numpy(row, num_classes, reg_max, points, stride)
            boxes.append(box / np.tile(label.scale[::-1], 2))
            scores.append(prob.T)
        return nms(np.stack(boxes), np.stack(scores), params)
    if len(outputs) == 2 and outputs[0].ndim == 3:
        return nms(outputs[0], outputs[1], params)
    if len(outputs) == 2 and outputs[0].ndim == 2 and outputs[0].shape[1] == 6 and outputs[1].ndim == 1:
        return split(*outputs)
    raise DataError(
        f"a PicoDet's outputs must be raw [B, A, K], (boxes [B, A, 4], scores [B, C, A]) or, with NMS inside, "
        f"(rows [N, 6], counts [B]); "
        f"got shapes {[list(o.shape) for o in outputs]}"
    )
