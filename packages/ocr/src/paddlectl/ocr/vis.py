"""The ``--vis`` picture: the image with its boxes filled in on the left, the recognised text written
into the same boxes on a white page on the right (PaddleOCR's layout), as PNG.

Text is drawn with an installed CJK face (``synth.fonts.installed_cjk_fonts``), so Chinese and
Japanese lines are readable; without one, DejaVu Sans draws Latin text and CJK characters come out
as boxes, which ``font_path`` reports as a warning.
"""

from __future__ import annotations

import functools
import io
from pathlib import Path

import numpy as np
from PIL import Image, ImageDraw, ImageFont

from .records import axis_box

MIN_FONT = 8


@functools.cache
def font_path() -> tuple[Path, str | None]:
    """(the face to draw text with, a warning when it cannot draw CJK characters or None)."""
    from .synth.fonts import CJK_INSTALL_HINT, bundled_dir, installed_cjk_fonts

    found = installed_cjk_fonts()
    if found:
        return found[0], None
    return bundled_dir() / "DejaVuSans.ttf", f"no CJK font installed, --vis draws CJK text as boxes; {CJK_INSTALL_HINT}"


def _colour(i: int) -> tuple[int, int, int]:
    """A fixed colour per line index, so the two halves match and runs are repeatable."""
    rng = np.random.default_rng(i)
    return tuple(int(v) for v in rng.integers(40, 220, 3))


def _fitted_font(text: str, box: list[int]) -> ImageFont.FreeTypeFont:
    path, _ = font_path()
    width, height = max(1, box[2] - box[0]), max(1, box[3] - box[1])
    size = max(MIN_FONT, int(height * 0.8))
    font = ImageFont.truetype(str(path), size)
    length = font.getlength(text) or 1.0
    if length > width:
        font = ImageFont.truetype(str(path), max(MIN_FONT, int(size * width / length)))
    return font


def render(image_rgb: np.ndarray, record: dict) -> bytes:
    """The side-by-side picture of one record, as PNG bytes."""
    left = Image.fromarray(image_rgb).convert("RGB")
    overlay = Image.new("RGBA", left.size, (0, 0, 0, 0))
    right = Image.new("RGB", left.size, "white")
    shade, page = ImageDraw.Draw(overlay), ImageDraw.Draw(right)
    for i, (poly, text) in enumerate(zip(record["rec_polys"], record["rec_texts"], strict=True)):
        colour = _colour(i)
        points = [tuple(p) for p in poly]
        shade.polygon(points, fill=(*colour, 90), outline=(*colour, 255))
        page.polygon(points, outline=colour)
        box = axis_box(poly)
        page.text((box[0] + 2, box[1]), text, fill=(0, 0, 0), font=_fitted_font(text, box))
    canvas = Image.new("RGB", (left.width * 2, left.height), "white")
    canvas.paste(Image.alpha_composite(left.convert("RGBA"), overlay).convert("RGB"), (0, 0))
    canvas.paste(right, (left.width, 0))
    buffer = io.BytesIO()
    canvas.save(buffer, "PNG")
    return buffer.getvalue()
