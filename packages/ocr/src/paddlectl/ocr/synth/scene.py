"""Whole samples: a cropped text line (recognition) and a page of lines (detection)."""

from __future__ import annotations

from dataclasses import dataclass

import cv2
import numpy as np

from .augment import augment
from .fonts import Font
from .layer import Layer, homography, move, text_layer, warp
from .style import background, degrade, paint, text_colour
from .text import line_text


@dataclass(frozen=True)
class Settings:
    """Ranges the renderer draws from (sizes in pixels, angles in degrees, perspective as a fraction of a
    line's height, or of the page's shorter side for the page), and the corpus lines are cut from.
    ``line_slant`` (shear) and ``line_stroke`` (stroke change per side, a fraction of the font size)
    augment line crops only; 0 draws nothing."""

    line_sizes: tuple[int, int] = (18, 44)
    line_chars: tuple[int, int] = (2, 20)
    line_angle: float = 4.0
    line_perspective: float = 0.12
    line_slant: float = 0.0
    line_stroke: float = 0.0
    page_sizes: tuple[int, int] = (14, 36)
    page_lines: tuple[int, int] = (3, 24)
    page_chars: tuple[int, int] = (2, 32)
    page_line_angle: float = 5.0
    page_line_perspective: float = 0.05
    corpus: tuple[str, ...] = ()
    page_angle: float = 6.0
    page_perspective: float = 0.04


@dataclass
class Sample:
    """``image``: HxWx3 uint8 (BGR); ``ink``: HxW float32 text coverage; ``lines``: (text, 4x2 quad)."""

    image: np.ndarray
    ink: np.ndarray
    lines: list[tuple[str, np.ndarray]]


Palette = list[tuple[Font, str]]
"""Fonts with the part of the charset each has glyphs for."""


def render_line(rng: np.random.Generator, palette: Palette, settings: Settings = Settings()) -> Sample:
    """One line, slightly rotated and skewed, cropped to its quad plus an uneven margin."""
    font, alphabet = palette[rng.integers(len(palette))]
    size = int(rng.integers(settings.line_sizes[0], settings.line_sizes[1] + 1))
    count = int(rng.integers(settings.line_chars[0], settings.line_chars[1] + 1))
    text = line_text(rng, alphabet, count, settings.corpus)
    layer = augment(text_layer(text, font.at(size), margin=size), rng, size, settings.line_slant, settings.line_stroke)
    layer = warp(layer, rng, settings.line_angle, settings.line_perspective)
    pads = rng.uniform(0.05, 0.3, size=4) * layer.height
    lo = np.maximum(np.floor(layer.quad.min(axis=0) - pads[:2]), 0).astype(int)
    hi = np.ceil(layer.quad.max(axis=0) + pads[2:]).astype(int) + 1
    alpha = layer.alpha[lo[1] : hi[1], lo[0] : hi[0]]
    image = background(rng, *alpha.shape)
    paint(image, alpha, text_colour(rng, image))
    return Sample(degrade(rng, image, layer.height), alpha, [(text, layer.quad - lo)])


def render_page(rng: np.random.Generator, palette: Palette, settings: Settings = Settings()) -> Sample:
    """Rows of lines in several fonts, sizes and colours on one background, then the whole page turned
    and put in perspective on a desk colour."""
    width, height = int(rng.integers(480, 1025)), int(rng.integers(400, 1281))
    image = background(rng, height, width)
    ink = np.zeros((height, width), np.float32)
    lines = _lay_out(rng, palette, settings, image, ink)
    matrix, size = homography(rng, width, height, settings.page_angle, settings.page_perspective * min(width, height))
    desk = tuple(float(v) for v in rng.integers(0, 256, size=3))
    image = cv2.warpPerspective(image, matrix, size, flags=cv2.INTER_LINEAR, borderValue=desk)
    ink = cv2.warpPerspective(ink, matrix, size, flags=cv2.INTER_LINEAR)
    lines = [(text, move(quad, matrix)) for text, quad in lines]
    smallest = min((Layer(ink, quad).height for _, quad in lines), default=float(settings.page_sizes[0]))
    return Sample(degrade(rng, image, smallest), ink, lines)


def _lay_out(
    rng: np.random.Generator, palette: Palette, settings: Settings, image: np.ndarray, ink: np.ndarray
) -> list[tuple[str, np.ndarray]]:
    """Fill rows top to bottom, one or more lines per row, each line's quad clear of the others'."""
    height, width = ink.shape
    margin = int(rng.integers(8, 40))
    target = int(rng.integers(settings.page_lines[0], settings.page_lines[1] + 1))
    lines: list[tuple[str, np.ndarray]] = []
    y = margin
    while len(lines) < target and y < height - margin:
        size = int(rng.integers(settings.page_sizes[0], settings.page_sizes[1] + 1))
        x, row_height = margin + int(rng.integers(0, width // 4)), 0
        while len(lines) < target:
            placed = _fit(rng, palette, settings, size, (width - margin - x, height - margin - y))
            if placed is None:
                break
            text, layer = placed
            lo, hi = layer.quad.min(axis=0), layer.quad.max(axis=0)
            offset = np.array([x, y], np.float32) - np.floor(lo)
            _paste(image, ink, layer, offset.astype(int), rng)
            lines.append((text, layer.quad + offset))
            x += int(hi[0] - lo[0] + rng.uniform(1.0, 4.0) * size)
            row_height = max(row_height, int(hi[1] - lo[1]) + 1)
        y += row_height + int(rng.uniform(0.3, 1.5) * size)
    return lines


def _fit(
    rng: np.random.Generator, palette: Palette, settings: Settings, size: int, room: tuple[int, int]
) -> tuple[str, Layer] | None:
    """A line at ``size`` whose quad fits in ``room`` (w, h): the text is halved until it fits, else None."""
    font, alphabet = palette[rng.integers(len(palette))]
    count = int(rng.integers(settings.page_chars[0], settings.page_chars[1] + 1))
    text = line_text(rng, alphabet, count, settings.corpus)
    while len(text) >= settings.page_chars[0]:
        face = font.at(size)
        layer = warp(text_layer(text, face, margin=2), rng, settings.page_line_angle, settings.page_line_perspective)
        extent = layer.quad.max(axis=0) - layer.quad.min(axis=0)
        if extent[1] >= room[1]:
            return None
        if extent[0] < room[0]:
            return text, layer
        text = text[: len(text) // 2].rstrip()
    return None


def _paste(image: np.ndarray, ink: np.ndarray, layer: Layer, offset: np.ndarray, rng: np.random.Generator) -> None:
    """Paint ``layer`` at ``offset`` in a colour that stands out from the background under it."""
    h, w = layer.alpha.shape
    x0, y0 = max(offset[0], 0), max(offset[1], 0)
    x1, y1 = min(offset[0] + w, ink.shape[1]), min(offset[1] + h, ink.shape[0])
    alpha = layer.alpha[y0 - offset[1] : y1 - offset[1], x0 - offset[0] : x1 - offset[0]]
    region = image[y0:y1, x0:x1]
    paint(region, alpha, text_colour(rng, region))
    np.maximum(ink[y0:y1, x0:x1], alpha, out=ink[y0:y1, x0:x1])
