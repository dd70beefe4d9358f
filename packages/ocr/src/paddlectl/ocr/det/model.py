"""The DB network: PaddleOCR's ``BaseModel`` (backbone -> neck -> head) with a serving input.

Served, the model takes a second input, PaddleOCR's ``shape`` row per image ``[src_h, src_w,
ratio_h, ratio_w]``, and returns it beside the probability map: post-processing needs it to map
boxes back onto the source image, and ``predict`` hands post-processing only the model's outputs.
"""

from __future__ import annotations

from ..task_base import OcrModel


class DBNet(OcrModel):
    """``forward(image)`` -> the head's maps (``[N, 3, H, W]`` training, ``[N, 1, H, W]`` eval);
    ``forward(image, shape)`` -> ``(probability map, shape)``."""

    def forward(self, x, shape=None):
        maps = super().forward(x)
        return maps if shape is None else (maps, shape)
