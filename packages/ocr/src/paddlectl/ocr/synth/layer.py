"""One text line as a coverage mask and the quadrilateral around its ink, warped together.

The quad is carried through the same homography as the pixels, so after rotation and perspective it
is still the true outline of the rendered line (PaddleOCR's det label ``points``: top-left,
top-right, bottom-right, bottom-left in reading order)."""

from __future__ import annotations

import math
from dataclasses import dataclass

import cv2
import numpy as np
from PIL import Image, ImageDraw, ImageFont

from paddlectl.framework.errors import DataError


@dataclass
class Layer:
    """``alpha``: float32 HxW coverage in [0, 1]; ``quad``: 4x2 float32 corners in alpha's pixels."""

    alpha: np.ndarray
    quad: np.ndarray

    @property
    def height(self) -> float:
        """The line's height along its own vertical axis (left and right edges averaged)."""
        q = self.quad
        return float((np.linalg.norm(q[3] - q[0]) + np.linalg.norm(q[2] - q[1])) / 2)


MAX_LAYER_PIXELS = 16_000_000
"""A line bigger than this comes from a broken font's metrics, not from text."""


def text_layer(text: str, face: ImageFont.FreeTypeFont, margin: int) -> Layer:
    """``text`` drawn upright with ``margin`` pixels around it. The quad spans the ink horizontally and,
    vertically, at least cap height to baseline, so labels of 'ace' and 'Hg' sit on the same line.
    A font FreeType cannot draw with (a damaged file) is a DataError naming it."""
    name = repr(str(face.path))  # not getname(): a damaged name table gives None
    try:
        left, top, right, bottom = face.getbbox(text, anchor="ls")
        cap_top = face.getbbox("H", anchor="ls")[1]
        top, bottom = min(top, cap_top), max(bottom, 0)
        width, height = right - left + 2 * margin, bottom - top + 2 * margin
        if width * height > MAX_LAYER_PIXELS:
            raise DataError(f"font {name} draws {text!r} {width}x{height} px; is the font file damaged?")
        mask = Image.new("L", (width, height), 0)
        origin = (margin - left, margin - top)
        ImageDraw.Draw(mask).text(origin, text, font=face, fill=255, anchor="ls")
    except OSError as exc:
        raise DataError(f"font {name} cannot draw {text!r} ({exc}); is the font file damaged?") from None
    ink = mask.getbbox()
    if ink is None:
        raise DataError(f"text {text!r} renders no ink in font {name}; drop that font or character")
    x0, x1 = ink[0], ink[2]
    y0, y1 = min(ink[1], origin[1] + cap_top), max(ink[3], origin[1])
    x0, y0, x1, y1 = x0 - 0.5, y0 - 0.5, x1 - 0.5, y1 - 0.5  # pixel edges (OpenCV puts centres on integers)
    quad = np.array([[x0, y0], [x1, y0], [x1, y1], [x0, y1]], np.float32)
    return Layer(np.asarray(mask, np.float32) / 255.0, quad)


def homography(
    rng: np.random.Generator, width: int, height: int, max_angle: float, jitter: float
) -> tuple[np.ndarray, tuple[int, int]]:
    """A rotation by up to ``max_angle`` degrees with each corner moved by up to ``jitter`` pixels, shifted
    so the whole ``width`` x ``height`` image lands on the returned canvas size (w, h)."""
    src = np.array([[0, 0], [width, 0], [width, height], [0, height]], np.float32)
    theta = math.radians(rng.uniform(-max_angle, max_angle))
    rot = np.array([[math.cos(theta), -math.sin(theta)], [math.sin(theta), math.cos(theta)]], np.float32)
    centre = np.array([width / 2, height / 2], np.float32)
    dst = (src - centre) @ rot.T + centre
    dst += rng.uniform(-jitter, jitter, size=(4, 2)).astype(np.float32)
    dst -= dst.min(axis=0)
    size = np.ceil(dst.max(axis=0)).astype(int) + 1
    return cv2.getPerspectiveTransform(src, dst), (int(size[0]), int(size[1]))


def warp(layer: Layer, rng: np.random.Generator, max_angle: float, perspective: float) -> Layer:
    """Rotate by up to ``max_angle`` degrees and move each corner by up to ``perspective`` x the line's
    height; the canvas grows to hold the whole result, and the quad moves with the pixels."""
    h, w = layer.alpha.shape
    matrix, size = homography(rng, w, h, max_angle, perspective * layer.height)
    alpha = cv2.warpPerspective(layer.alpha, matrix, size, flags=cv2.INTER_LINEAR)
    return Layer(alpha, move(layer.quad, matrix))


def move(points: np.ndarray, matrix: np.ndarray) -> np.ndarray:
    """Nx2 points through a 3x3 homography."""
    return cv2.perspectiveTransform(np.asarray(points, np.float32)[None], matrix)[0]
