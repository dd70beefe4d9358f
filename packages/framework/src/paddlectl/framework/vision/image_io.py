"""Images as arrays in a fixed colour mode, from files or arrays; unreadable input is a DataError.

Training (DatasetFolder), evaluation and ``paddlectl predict`` read images through here, so a
PNG on disk and the same picture held in memory become the same array.
"""

from __future__ import annotations

import os

import numpy as np
from PIL import Image, UnidentifiedImageError

from ..errors import DataError

MODES = ("L", "RGB")


def read_image(path: str | os.PathLike, mode: str = "RGB") -> np.ndarray:
    """``path`` decoded and converted to ``mode`` (HxW uint8 for 'L', HxWx3 for 'RGB')."""
    path = os.fspath(path)
    try:
        with Image.open(path) as img:
            return np.asarray(img.convert(mode))
    except FileNotFoundError:
        raise DataError(f"image {path!r} does not exist; check the path") from None
    except IsADirectoryError:
        raise DataError(f"{path!r} is a directory; pass image files") from None
    except Image.DecompressionBombError as exc:
        raise DataError(f"refusing image {path!r}: {exc}") from None
    except (UnidentifiedImageError, OSError, ValueError, SyntaxError) as exc:  # PIL: SyntaxError for broken PNG chunks
        raise DataError(f"cannot read image {path!r} ({exc}); pass a PNG/JPEG/BMP file or a .npy array") from None


def as_mode(image: np.ndarray, mode: str) -> np.ndarray:
    """An in-memory image (HxW, HxWx1, HxWx3 or HxWx4, uint8 or float in [0, 255]) in ``mode``."""
    array = np.asarray(image)
    if array.ndim == 3 and array.shape[2] == 1:
        array = array[:, :, 0]
    if array.ndim not in (2, 3) or (array.ndim == 3 and array.shape[2] not in (3, 4)):
        raise DataError(f"an image array must be HxW or HxWxC with C in 1, 3, 4; got shape {list(array.shape)}")
    if array.dtype != np.uint8:
        if not np.isfinite(array).all():
            raise DataError("the image array holds NaN or infinite values")
        array = np.clip(np.round(array), 0, 255).astype(np.uint8)
    want_grey = mode == "L"
    if (array.ndim == 2) == want_grey and (array.ndim == 2 or array.shape[2] == 3):
        return array
    return np.asarray(Image.fromarray(array).convert(mode))


def load_input(raw, mode: str) -> np.ndarray:
    """A raw input as a user has it: an image file, a ``.npy`` file or an array."""
    if isinstance(raw, str | os.PathLike):
        if os.fspath(raw).endswith(".npy"):
            try:
                return as_mode(np.load(raw, allow_pickle=False), mode)
            except (OSError, ValueError) as exc:
                raise DataError(
                    f"cannot read array {os.fspath(raw)!r} ({exc}); pass a .npy file np.save wrote"
                ) from None
        return read_image(raw, mode)
    return as_mode(raw, mode)
