"""Document pages drawn with PIL for the layout model's tests: a title, text blocks, ruled tables
and figures with captions, placed by a seed so each page differs."""

from __future__ import annotations

import numpy as np
from PIL import Image, ImageDraw, ImageFont

WORDS = "the model reads each page and finds text blocks titles tables and figures in it".split()


def _text(draw, rng, y, font, width):
    for _ in range(int(rng.integers(4, 9))):
        draw.text((100, y), " ".join(rng.choice(WORDS, int(rng.integers(10, 14)))), fill="black", font=font)
        y += 30
    return y + 40


def _table(draw, rng, y, font, width):
    rows, cols, row_h = int(rng.integers(4, 7)), int(rng.integers(3, 6)), 40
    col_w = (width - 200) // cols
    for r in range(rows + 1):
        draw.line([(100, y + r * row_h), (100 + cols * col_w, y + r * row_h)], fill="black", width=2)
    for c in range(cols + 1):
        draw.line([(100 + c * col_w, y), (100 + c * col_w, y + rows * row_h)], fill="black", width=2)
    for r in range(rows):
        for c in range(cols):
            draw.text((110 + c * col_w, y + r * row_h + 8), str(rng.integers(0, 1000)), fill="black", font=font)
    return y + rows * row_h + 60


def _figure(draw, rng, y, font, width):
    height = int(rng.integers(200, 350))
    draw.rectangle([300, y, width - 300, y + height], fill=(200, 220, 255), outline="black")
    for _ in range(6):
        x0, y0 = int(rng.integers(320, width - 400)), int(rng.integers(y + 10, y + height - 60))
        draw.ellipse([x0, y0, x0 + 60, y0 + 50], fill=tuple(int(v) for v in rng.integers(0, 255, 3)))
    draw.text((width // 2 - 120, y + height + 10), "Figure 1: a chart", fill="black", font=font)
    return y + height + 80


def page(seed: int, size: tuple[int, int] = (1240, 1754)) -> np.ndarray:
    """An RGB page (A4 at 150 dpi by default)."""
    rng = np.random.default_rng(seed)
    width, height = size
    img = Image.new("RGB", size, "white")
    draw = ImageDraw.Draw(img)
    font = ImageFont.load_default(size=22)
    draw.text(
        (width // 2 - 300, 100), "Annual report on document layout", fill="black", font=ImageFont.load_default(size=44)
    )
    y, blocks = 210, (_text, _text, _table, _figure)
    while y < height - 300:
        y = blocks[int(rng.integers(0, len(blocks)))](draw, rng, y, font, width)
    return np.asarray(img)
