"""What ``paddlectl ocr`` reads: image files, PDFs (one source per page) and directories of both.

Every input is checked before a model is loaded (it exists, a directory holds something, an image
file is not empty and its header identifies a format, a PDF opens and has pages), so a typo costs
a second and leaves nothing behind.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
from PIL import Image, UnidentifiedImageError

from paddlectl.framework.errors import DataError
from paddlectl.framework.vision.image_io import read_image

from .pdf import page_count, render_page

IMAGE_SUFFIXES = frozenset({".png", ".jpg", ".jpeg", ".bmp", ".tif", ".tiff", ".webp"})
PDF_SUFFIX = ".pdf"


@dataclass(frozen=True)
class Source:
    """One image to OCR: an image file (``page_index`` None) or one page of a PDF."""

    path: Path
    page_index: int | None = None

    def load(self) -> np.ndarray:
        """HxWx3 uint8, RGB."""
        if self.page_index is None:
            return read_image(self.path, "RGB")
        return render_page(self.path, self.page_index)

    @property
    def label(self) -> str:
        return str(self.path) if self.page_index is None else f"{self.path} (page {self.page_index})"


def _check_image(path: Path) -> None:
    if path.stat().st_size == 0:
        raise DataError(f"image {str(path)!r} is empty (0 bytes)")
    try:
        with Image.open(path):
            pass
    except Image.DecompressionBombError as exc:
        raise DataError(f"refusing image {str(path)!r}: {exc}") from None
    except (UnidentifiedImageError, OSError, ValueError, SyntaxError) as exc:  # PIL: SyntaxError for broken chunks
        raise DataError(
            f"cannot read image {str(path)!r} ({exc}); pass PNG, JPEG, BMP, TIFF, WebP or PDF files"
        ) from None


def _file_sources(path: Path) -> list[Source]:
    if path.suffix.lower() == PDF_SUFFIX:
        return [Source(path, i) for i in range(page_count(path))]
    _check_image(path)
    return [Source(path)]


def _directory_files(path: Path) -> list[Path]:
    wanted = IMAGE_SUFFIXES | {PDF_SUFFIX}
    files = sorted(p for p in path.rglob("*") if p.is_file() and p.suffix.lower() in wanted)
    if not files:
        raise DataError(f"input directory {str(path)!r} holds no image or PDF files")
    return files


def collect(inputs: list[str]) -> list[Source]:
    """Every source the inputs name, in order: files as given, a directory's images and PDFs sorted."""
    if not inputs:
        raise DataError("no input given; pass image files, PDFs or directories")
    sources: list[Source] = []
    for raw in inputs:
        path = Path(raw)
        if not path.exists():
            raise DataError(f"input {raw!r} does not exist; check the path")
        files = _directory_files(path) if path.is_dir() else [path]
        for file in files:
            sources += _file_sources(file)
    return sources
