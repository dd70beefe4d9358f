"""PDF pages as images, rasterised with pypdfium2 (PDFium, the renderer Chrome uses).

Pages render at 2x (144 dpi, as PaddleOCR's PDF reader does) but never past ``MAX_SIDE`` pixels on
the long side, so a poster-sized page cannot ask for gigabytes.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from paddlectl.framework.errors import DataError

SCALE = 2.0
MAX_SIDE = 4000


def _open(path: Path):
    import pypdfium2 as pdfium

    try:
        return pdfium.PdfDocument(str(path))
    except pdfium.PdfiumError as exc:
        if getattr(exc, "err_code", None) == 0:  # PDFium refuses a page tree without pages, naming no error
            raise DataError(f"PDF {str(path)!r} has no pages") from None
        raise DataError(f"cannot read PDF {str(path)!r} ({exc}); pass an unencrypted, undamaged PDF") from None
    except OSError as exc:
        raise DataError(f"cannot read PDF {str(path)!r} ({exc.strerror or exc})") from None


def page_count(path: Path) -> int:
    """The number of pages; a DataError for a PDF without any."""
    document = _open(path)
    try:
        count = len(document)
    finally:
        document.close()
    if count == 0:
        raise DataError(f"PDF {str(path)!r} has no pages")
    return count


def render_page(path: Path, index: int) -> np.ndarray:
    """Page ``index`` as an HxWx3 uint8 RGB array."""
    import pypdfium2 as pdfium

    document = _open(path)
    try:
        page = document[index]
        width, height = page.get_size()
        scale = min(SCALE, MAX_SIDE / max(width, height, 1.0))
        return np.asarray(page.render(scale=scale).to_pil().convert("RGB"))
    except pdfium.PdfiumError as exc:
        raise DataError(f"cannot render page {index} of PDF {str(path)!r}: {exc}") from None
    finally:
        document.close()
