"""Render-time augmentation of a text line's coverage, for the training split of line crops.

A recogniser scored on a face it never saw must read the same letters at other slants and stroke
weights than the training faces draw them (with DejaVuSerif-Italic held out, DejaVu's only true
italic in training is the bold one; STIX adds two). PaddleOCR's RecAug/TIA distort the finished image at training time; here the glyph mask itself
is sheared and thickened or thinned before background, colour and degradation are applied, which
costs nothing at training time and keeps the edges anti-aliased."""

from __future__ import annotations

import cv2
import numpy as np

from paddlectl.framework.errors import DTypeError, ShapeError

from .layer import Layer, move


def slant(layer: Layer, shear: float) -> Layer:
    """Shear horizontally by ``shear`` pixels per pixel of height (positive leans right, as italics
    do); the canvas widens to hold the result and the quad moves with the pixels."""
    h, w = layer.alpha.shape
    matrix = np.array([[1.0, -shear, max(shear, 0.0) * h], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]], np.float32)
    size = (w + int(np.ceil(abs(shear) * h)), h)
    alpha = cv2.warpAffine(layer.alpha, matrix[:2], size, flags=cv2.INTER_LINEAR)
    return Layer(alpha, move(layer.quad, matrix))


def stroke(alpha: np.ndarray, delta: float) -> np.ndarray:
    """Move every ink edge outward by ``delta`` pixels (inward when negative): the same glyphs bolder or
    lighter. Grey-level dilation (erosion) by a disc of the whole pixels keeps the edges anti-aliased;
    a fraction of a pixel blends the results for the two radii around it."""
    if alpha.ndim != 2:
        raise ShapeError(f"stroke needs an HxW coverage mask, got shape {alpha.shape}; pass one channel")
    if alpha.dtype != np.float32:
        raise DTypeError(f"stroke needs a float32 coverage mask in [0, 1], got {alpha.dtype}; divide by 255 first")
    morph = cv2.dilate if delta > 0 else cv2.erode
    whole, part = divmod(abs(delta), 1.0)
    near = morph(alpha, _disc(int(whole))) if whole else alpha
    if not part:
        return near
    far = morph(alpha, _disc(int(whole) + 1))
    return ((1.0 - part) * near + part * far).astype(np.float32)


def _disc(radius: int) -> np.ndarray:
    """A structuring element reaching ``radius`` pixels along the axes (a cross for 1: a 3x3 square
    would move diagonal edges by 1.4)."""
    shape = cv2.MORPH_CROSS if radius == 1 else cv2.MORPH_ELLIPSE
    return cv2.getStructuringElement(shape, (2 * radius + 1, 2 * radius + 1))


def augment(layer: Layer, rng: np.random.Generator, size: int, max_slant: float, max_stroke: float) -> Layer:
    """A slant drawn from [-max_slant, max_slant] and a stroke change per side from [-max_stroke,
    max_stroke] x the font's pixel ``size``; either is skipped (no draw) when its range is 0."""
    if max_stroke > 0:
        layer = Layer(stroke(layer.alpha, float(rng.uniform(-max_stroke, max_stroke)) * size), layer.quad)
    if max_slant > 0:
        layer = slant(layer, float(rng.uniform(-max_slant, max_slant)))
    return layer
