"""Fixed test images: a text line in a DejaVu font matplotlib ships, and a document page. Deterministic
(no randomness), so tests and benchmarks see the same pixels everywhere; ``synth`` renders varied,
seeded data sets."""

from __future__ import annotations

import numpy as np
from PIL import Image, ImageDraw

from .synth.fonts import font

__all__ = ["PAGE_LINES", "document_page", "font", "text_line"]


def text_line(text: str, font_name: str = "DejaVuSans.ttf", size: int = 32, margin: int = 12) -> np.ndarray:
    """Black text on white, HWC uint8, cropped to the text plus ``margin``."""
    f = font(font_name, size)
    left, top, right, bottom = f.getbbox(text)
    img = Image.new("RGB", (right - left + 2 * margin, bottom - top + 2 * margin), "white")
    ImageDraw.Draw(img).text((margin - left, margin - top), text, font=f, fill="black")
    return np.asarray(img)


PAGE_LINES = (
    ("Quarterly Report 2026", "DejaVuSans-Bold.ttf", 34),
    ("Revenue grew by 12 percent", "DejaVuSerif.ttf", 24),
    ("Contact: office 42, floor 3", "DejaVuSansMono.ttf", 22),
    ("Thank you for reading", "DejaVuSans-Oblique.ttf", 26),
)


def document_page(lines=PAGE_LINES, width: int = 720, line_gap: int = 30, min_height: int = 0) -> np.ndarray:
    """A page with one text line per entry of ``lines`` ((text, font, size)), left-aligned, at least
    ``min_height`` tall."""
    heights = [font(f, s).getbbox(t)[3] for t, f, s in lines]
    height = max(min_height, 40 + sum(heights) + line_gap * len(lines))
    img = Image.new("RGB", (width, height), (252, 251, 247))
    draw = ImageDraw.Draw(img)
    y = 30
    for (text, name, size), h in zip(lines, heights, strict=True):
        draw.text((40, y), text, font=font(name, size), fill=(15, 15, 15))
        y += h + line_gap
    return np.asarray(img)
