"""Uploaded files for the task-level route: images decoded with their size checked first, other
media (audio) handed to the task as a file, since task pre-processing reads audio from paths.

An image's header says its size before any pixel is decoded, so a 30000x30000 picture that fits
in a few kilobytes of PNG is refused without allocating its gigabytes.
"""

from __future__ import annotations

import io
import tempfile
from contextlib import contextmanager
from pathlib import Path

import numpy as np
from PIL import Image, UnidentifiedImageError

from .errors import ServeError

GREY_MODES = ("1", "L", "LA", "I", "I;16", "F", "P;L")
AUDIO_SUFFIXES = {"audio/wav": ".wav", "audio/x-wav": ".wav", "audio/wave": ".wav", "audio/flac": ".flac",
                  "audio/x-flac": ".flac", "audio/ogg": ".ogg", "audio/mpeg": ".mp3"}  # fmt: skip


def decode_image(data: bytes, max_pixels: int) -> np.ndarray:
    """HxW (grey) or HxWx3 uint8 pixels; ServeError 413 image_too_large, 400 bad_image."""
    try:
        with Image.open(io.BytesIO(data)) as image:
            width, height = image.size
            if width * height > max_pixels:
                raise ServeError(
                    413,
                    "image_too_large",
                    f"the image is {width}x{height} pixels, over server.max_image_pixels ({max_pixels}); send a smaller one",
                )
            return np.asarray(image.convert("L" if image.mode in GREY_MODES else "RGB"))
    except ServeError:
        raise
    except Image.DecompressionBombError as exc:
        raise ServeError(413, "image_too_large", f"refusing the image: {exc}") from None
    except (UnidentifiedImageError, OSError, ValueError, SyntaxError) as exc:
        raise ServeError(400, "bad_image", f"cannot decode the uploaded image ({exc}); send PNG, JPEG or BMP") from None


@contextmanager
def media_file(data: bytes, content_type: str):
    """The upload as a temporary file (removed afterwards) with the suffix its type implies."""
    suffix = AUDIO_SUFFIXES.get(content_type)
    if suffix is None:
        raise ServeError(
            415,
            "unsupported_media_type",
            f"cannot take a {content_type!r} upload; send image/*, one of {', '.join(AUDIO_SUFFIXES)} or application/json",
        )
    with tempfile.TemporaryDirectory(prefix="paddlectl-serve-") as folder:
        path = Path(folder) / f"upload{suffix}"
        path.write_bytes(data)
        yield path
