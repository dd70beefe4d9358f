"""PicoDet: backbone -> neck -> head, with the EMA of its weights and the serving outputs.

``forward(image)`` gives the head's raw predictions (training and the trainer's evaluation);
``forward(image, scale_factor)`` is the exported model: boxes decoded and mapped back to source
pixels (``scale_factor`` = PaddleDetection's ``[scale_y, scale_x]`` per image), PaddleDetection's
outputs before NMS, boxes [B, A, 4] and scores [B, C, A], with ``Export.nms: false`` (NMS then runs
in ``postprocess``, the same ``multiclass_nms`` op); ``nms_export.PicoDetNMS`` holds it inside.
"""

from __future__ import annotations

from paddlectl.framework import concat, nn

from .ema import WeightEMA


class PicoDet(nn.Layer):
    def __init__(self, backbone, neck, head, ema_decay: float | None = 0.9998) -> None:
        super().__init__()
        self.backbone, self.neck, self.head = backbone, neck, head
        self.ema = WeightEMA(self._weights(), ema_decay) if ema_decay else None

    def _weights(self) -> dict:
        return {n: p for n, p in self.named_parameters() if not n.startswith("ema.")}

    def train(self):
        if self.ema is not None:
            self.ema.swap_out(self._weights())
        return super().train()

    def eval(self):
        if self.ema is not None:
            self.ema.swap_in(self._weights())
        return super().eval()

    def forward(self, image, scale_factor=None):
        if self.training and self.ema is not None:
            self.ema.update(self._weights())
        raw = self.head(self.neck(self.backbone(image)))
        if scale_factor is None:
            return raw
        boxes, scores = self.head.decode(raw, int(image.shape[2]), int(image.shape[3]))
        sy, sx = scale_factor[:, 0:1], scale_factor[:, 1:2]
        return boxes / concat([sx, sy, sx, sy], axis=1).unsqueeze(1), scores
