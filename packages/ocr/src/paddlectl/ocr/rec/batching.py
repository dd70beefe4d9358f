"""Width-bucketed training batches for the recogniser (``Train.sampler: {name: WidthBatchSampler}``).

Every line is resized to the model's height and padded on the right to ``image_shape``'s width
(320), so a batch of short lines spends most of its convolutions on padding. PaddleOCR batches
lines by width ratio for the same reason; here the sampler groups lines of similar width and the
collate function cuts each batch's padding down to its widest line: the CTC sequence follows
(one step per 4 columns with MobileNetV3's rec strides). Evaluation and serving keep the fixed
width, so an exported model is unchanged. Only backbones that take any width qualify (not SVTR,
whose position embedding fixes the width)."""

from __future__ import annotations

import math

import numpy as np
from PIL import Image

from paddlectl.framework.errors import ConfigError, DataError
from paddlectl.framework.io import Sampler
from paddlectl.framework.io.collate import default_collate_fn
from paddlectl.framework.ops.random import generator

COLUMNS_PER_STEP = 4
"""Input columns per CTC step: MobileNetV3's rec strides keep the width, its last pool halves it twice."""


def resized_widths(dataset, image_shape: list[int]) -> np.ndarray:
    """Each line's width after ``RecResizeImg`` (height H, aspect kept, at most W), read from the
    image files' headers (no decoding)."""
    _, height, width = image_shape
    widths = []
    for name, _, where in dataset.rows:
        try:
            with Image.open(dataset.data_dir / name) as image:
                w, h = image.size
        except OSError as exc:
            raise DataError(f"{where}: cannot read image {name!r} ({exc})") from None
        widths.append(min(width, math.ceil(height * w / h)))
    return np.asarray(widths)


class WidthBatchSampler(Sampler):
    """Batches of lines of similar width. Each epoch the lines are shuffled, cut into pools of
    ``pool_batches`` batches, each pool sorted by width and cut into batches, and the batches are
    shuffled: every line once per epoch (the last, short batch dropped with ``drop_last``), the
    order drawn from the seeded global generator like ``BatchSampler``'s."""

    def __init__(self, widths, batch_size: int, drop_last: bool = True, shuffle: bool = True, pool_batches: int = 16):
        if not isinstance(pool_batches, int) or pool_batches < 1:
            raise ConfigError(f"Train.sampler.pool_batches must be a positive integer, got {pool_batches!r}")
        if not isinstance(batch_size, int) or batch_size < 1:
            raise ConfigError(f"Train.loader.batch_size_per_card must be a positive integer, got {batch_size!r}")
        self.widths = np.asarray(widths)
        self.batch_size, self.drop_last, self.shuffle, self.pool = (
            batch_size,
            bool(drop_last),
            bool(shuffle),
            pool_batches,
        )

    def __iter__(self):
        rng = generator()
        order = rng.permutation(len(self.widths)) if self.shuffle else np.arange(len(self.widths))
        size = self.batch_size * self.pool
        batches = []
        for start in range(0, len(order), size):
            pool = order[start : start + size]
            pool = pool[np.argsort(self.widths[pool], kind="stable")]
            batches += [pool[i : i + self.batch_size].tolist() for i in range(0, len(pool), self.batch_size)]
        if self.drop_last and batches and len(batches[-1]) < self.batch_size:
            batches.pop()  # only the last pool's last batch can be short
        for i in rng.permutation(len(batches)) if self.shuffle else range(len(batches)):
            yield batches[i]

    def __len__(self) -> int:
        n = len(self.widths)
        return n // self.batch_size if self.drop_last else math.ceil(n / self.batch_size)


def ctc_steps_needed(label: np.ndarray) -> int:
    """The fewest CTC steps that can emit ``label`` (class indices, then blanks 0): one per
    character plus a blank between each pair of equal neighbours."""
    chars = label[label != 0]
    return int(len(chars) + np.count_nonzero(chars[1:] == chars[:-1]))


def pad_to_widest(batch: list) -> list:
    """Collate ``(image [3, H, W], label)`` samples, cutting the right padding all share: the batch
    keeps its widest line (columns where any image is not exactly 0; a resized uint8 image never
    is, since 0 is 127.5 grey after scaling) and enough columns for every label's CTC path,
    rounded up to whole CTC steps."""
    images = np.stack([sample[0] for sample in batch])
    inked = np.flatnonzero(np.any(images != 0, axis=(0, 1, 2)))
    columns = max(
        int(inked[-1]) + 1 if inked.size else 1, max(ctc_steps_needed(s[1]) for s in batch) * COLUMNS_PER_STEP
    )
    width = min(images.shape[-1], math.ceil(columns / COLUMNS_PER_STEP) * COLUMNS_PER_STEP)
    return [np.ascontiguousarray(images[..., :width]), default_collate_fn([sample[1] for sample in batch])]


SAMPLERS = {"WidthBatchSampler": WidthBatchSampler}

__all__ = ["COLUMNS_PER_STEP", "SAMPLERS", "WidthBatchSampler", "ctc_steps_needed", "pad_to_widest", "resized_widths"]
