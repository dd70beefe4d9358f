"""PaddleSeg's ``test_config`` as a layer: sliding-window and multi-scale / flip inference.

The network is wrapped so that eval mode (the trainer's evaluation, ``paddlectl export`` and
therefore ``eval``/``predict``) runs exactly what the config asks, and training is untouched.
Windows and scales are plain Python over the (fixed) input size, so a traced model unrolls them
into one static program.

- ``is_slide``: ``crop_size`` ``[w, h]`` windows every ``stride`` ``[w, h]``, the last window
  flush with the border; logits of overlapping windows are averaged.
- ``aug_eval``: for each of ``scales`` (and mirrored when ``flip_horizontal``), resize, infer,
  resize back and add the softmax; the output is the summed probabilities (argmax unchanged).
"""

from __future__ import annotations

import math

import numpy as np

import paddlectl.framework as paddle
from paddlectl.framework import nn
from paddlectl.framework.errors import ConfigError
from paddlectl.framework.nn import functional as F

from .data.transforms import _size_pair

TEST_CONFIG_KEYS = ("is_slide", "crop_size", "stride", "aug_eval", "scales", "flip_horizontal")


def window_starts(length: int, crop: int, stride: int) -> list[tuple[int, int]]:
    """``(start, end)`` of each window along one side; the last ends at ``length``."""
    count = max(math.ceil((length - crop) / stride), 0) + 1
    spans = []
    for i in range(count):
        end = min(i * stride + crop, length)
        spans.append((max(end - crop, 0), end))
    return spans


class SegInference(nn.Layer):
    def __init__(self, net: nn.Layer, is_slide: bool = False, crop_size=None, stride=None, aug_eval: bool = False,
                 scales=1.0, flip_horizontal: bool = False) -> None:  # fmt: skip
        super().__init__()
        self.net = net
        self.is_slide = bool(is_slide)
        if self.is_slide:
            if crop_size is None or stride is None:
                raise ConfigError("Eval.test_config.is_slide needs crop_size [w, h] and stride [w, h]")
            self.crop = _size_pair(crop_size, "Eval.test_config.crop_size")
            self.stride = _size_pair(stride, "Eval.test_config.stride")
        self.aug_eval = bool(aug_eval)
        self.scales = [float(s) for s in (scales if isinstance(scales, list | tuple) else [scales])]
        if not self.scales or any(s <= 0 for s in self.scales):
            raise ConfigError(f"Eval.test_config.scales is {scales!r}; give positive factors, e.g. [0.75, 1.0, 1.25]")
        self.flip = bool(flip_horizontal)

    def forward(self, x):
        if self.training:
            return self.net(x)
        if not self.aug_eval:
            return self._infer(x)
        height, width = x.shape[2:]
        total = None
        for scale in self.scales:
            scaled = x if scale == 1.0 else F.interpolate(
                x, size=[round(height * scale), round(width * scale)], mode="bilinear", align_corners=False
            )  # fmt: skip
            for flip in (False, True) if self.flip else (False,):
                logit = self._infer(paddle.flip(scaled, axis=[3]) if flip else scaled)
                logit = paddle.flip(logit, axis=[3]) if flip else logit
                if scale != 1.0:
                    logit = F.interpolate(logit, size=[height, width], mode="bilinear", align_corners=False)
                prob = F.softmax(logit, axis=1)
                total = prob if total is None else total + prob
        return total

    def _infer(self, x):
        return self._slide(x) if self.is_slide else self.net(x)

    def _slide(self, x):
        """Average of the window logits, each padded back into place."""
        height, width = x.shape[2:]
        crop_w, crop_h = self.crop
        stride_w, stride_h = self.stride
        total = None
        count = np.zeros((1, 1, height, width), np.float32)
        for top, bottom in window_starts(height, crop_h, stride_h):
            for left, right in window_starts(width, crop_w, stride_w):
                logit = self.net(x[:, :, top:bottom, left:right])
                placed = F.pad(logit, [left, width - right, top, height - bottom])
                total = placed if total is None else total + placed
                count[:, :, top:bottom, left:right] += 1
        return total / paddle.to_tensor(count)
