"""Label images: PNGs of class ids ``0..N-1`` with ``ignore_index`` (255) for pixels not scored.

The checks run when a dataset is built, before training, because a bad label otherwise shows up
as a silently wrong mIoU hours later. The most reported PaddleSeg mistake, a binary mask saved
as 0/255 (what image editors write), is named with the fix: 255 is the ignore value, so such a
set trains a model that never sees its foreground.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
from PIL import Image, UnidentifiedImageError

from paddlectl.framework.errors import DataError


def read_label(path: str | Path) -> np.ndarray:
    """The class-id array ``[H, W]`` (uint8) of a label image: a palette (``P``) or grey (``L``) PNG
    keeps its indices; a colour label is refused (PaddleSeg reads the indices, not the colours)."""
    try:
        with Image.open(path) as image:
            if image.mode not in ("P", "L", "I", "I;16"):
                raise DataError(
                    f"label {str(path)!r} is a {image.mode} image; labels must hold class ids in one channel "
                    "(a palette or greyscale PNG), not colours"
                )
            array = np.asarray(image)
    except FileNotFoundError:
        raise DataError(f"label {str(path)!r} does not exist; check the file list and dataset_root") from None
    except (UnidentifiedImageError, OSError, ValueError, SyntaxError, Image.DecompressionBombError) as exc:
        raise DataError(f"cannot read label {str(path)!r} ({exc}); labels must be PNG images") from None
    if array.ndim != 2:
        raise DataError(f"label {str(path)!r} has shape {array.shape}; a label is one class id per pixel")
    return array


def label_values(label: np.ndarray) -> np.ndarray:
    """The distinct values of a label (bincount is faster than ``np.unique`` on uint8 masks)."""
    if label.dtype == np.uint8:
        return np.flatnonzero(np.bincount(label.ravel(), minlength=256))
    return np.unique(label)


def check_label_values(values: np.ndarray, where: str, num_classes: int, ignore_index: int) -> None:
    """A DataError naming ``where`` for a value outside ``0..num_classes-1`` other than ``ignore_index``."""
    bad = [int(v) for v in values if (v < 0 or v >= num_classes) and v != ignore_index]
    if bad:
        raise DataError(
            f"label {where} holds values {bad[:5]} outside 0..{num_classes - 1} (ignore value {ignore_index}); "
            "store class ids 0..N-1 and 255 for pixels to ignore, or raise num_classes"
        )


def check_binary_255(per_file: list[tuple[str, np.ndarray]], num_classes: int, ignore_index: int) -> None:
    """Refuse a two-class set whose foreground was saved as 255: no label holds 1 and some hold 255.

    A set that marks some pixels 255 on purpose (borders) still has its foreground as 1 somewhere,
    so it passes.
    """
    if num_classes != 2 or ignore_index != 255 or not per_file:
        return
    with_one = any(1 in values for _, values in per_file)
    with_255 = [name for name, values in per_file if 255 in values]
    if not with_one and with_255:
        raise DataError(
            f"labels are binary masks stored as 0/255 (e.g. {with_255[0]}; none of {len(per_file)} holds class 1); "
            "255 is the ignore value, so the foreground would never be learnt. Convert them to 0/1, e.g. "
            '`python -c "import sys,numpy as n;from PIL import Image as I;[I.fromarray((n.asarray(I.open(p))>127)'
            ".astype('uint8')).save(p) for p in sys.argv[1:]]\" LABELS...`"
        )
