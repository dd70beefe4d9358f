"""PicoDet with its NMS inside (``Export.nms: true``, PaddleDetection's default export).

The served forward ends in the framework's ``multiclass_nms`` op, which now traces and runs in the
predictor although the number of boxes it keeps is data: the exported model gives PaddleDetection's
deploy outputs, ``boxes`` [N, 6] (class, score, x1, y1, x2, y2 in source pixels) and ``boxes_num``
[B], so a deployment needs no NMS of its own. Training's forward (no ``scale_factor``) and the
weights' names are PicoDet's, so one checkpoint exports either way.
"""

from __future__ import annotations

from paddlectl.framework.vision.ops import multiclass_nms

from .model import PicoDet
from .postprocess import NMSParams


class PicoDetNMS(PicoDet):
    def __init__(self, backbone, neck, head, ema_decay: float | None, nms: NMSParams) -> None:
        super().__init__(backbone, neck, head, ema_decay)
        self.nms = nms

    def forward(self, image, scale_factor=None):
        out = super().forward(image, scale_factor)
        if scale_factor is None:
            return out
        boxes, boxes_num, _ = multiclass_nms(*out, **self.nms.op_kwargs())
        return boxes, boxes_num
