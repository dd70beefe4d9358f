"""Backgrounds, text colours and image degradations: the appearance side of the renderer.

Every choice comes from the caller's generator, so one seed gives one image. Images are HxWx3 uint8
in OpenCV's BGR order (what PaddleOCR's loaders and ``cv2.imwrite`` expect)."""

from __future__ import annotations

import cv2
import numpy as np

MIN_CONTRAST = 90
"""Least luminance gap between text and the background's mean: legible, not always black on white."""


def _luma(bgr: np.ndarray) -> float:
    b, g, r = (float(v) for v in bgr)
    return 0.114 * b + 0.587 * g + 0.299 * r


def background(rng: np.random.Generator, height: int, width: int) -> np.ndarray:
    """Flat paper, a gradient, mottled paper or flat paper with faint shapes; light 85% of the time."""
    light = rng.random() < 0.85
    base = rng.integers(175, 256, size=3) if light else rng.integers(0, 70, size=3)
    kind = rng.integers(0, 4)
    img = np.empty((height, width, 3), np.float32)
    img[:] = base
    if kind == 1:  # gradient towards a second shade, in a random direction
        other = np.clip(base + rng.integers(-40, 41, size=3), 0, 255)
        angle = rng.uniform(0, 2 * np.pi)
        ys, xs = np.mgrid[0:height, 0:width].astype(np.float32)
        ramp = xs * np.cos(angle) + ys * np.sin(angle)
        ramp = (ramp - ramp.min()) / max(float(np.ptp(ramp)), 1.0)
        img += ramp[..., None] * (other - base).astype(np.float32)
    elif kind == 2:  # mottled: low-frequency noise scaled up
        coarse = rng.normal(0, 12, size=(max(2, height // 24), max(2, width // 24), 1)).astype(np.float32)
        img += cv2.resize(coarse, (width, height), interpolation=cv2.INTER_CUBIC)[..., None]
    elif kind == 3:  # faint lines and boxes: distractors without text
        shade = tuple(float(v) for v in np.clip(base + (-35 if light else 35), 0, 255))
        for _ in range(int(rng.integers(1, 5))):
            p = (int(rng.integers(0, width)), int(rng.integers(0, height)))
            q = (int(rng.integers(0, width)), int(rng.integers(0, height)))
            if rng.random() < 0.5:
                cv2.line(img, p, q, shade, int(rng.integers(1, 3)))
            else:
                cv2.rectangle(img, p, q, shade, 1)
    return np.clip(img, 0, 255).astype(np.uint8)


def text_colour(rng: np.random.Generator, bg: np.ndarray) -> np.ndarray:
    """A colour at least ``MIN_CONTRAST`` away in luminance from ``bg``'s mean (dark on light, or light on dark)."""
    bg_luma = _luma(bg.reshape(-1, 3).mean(axis=0))
    for _ in range(16):
        colour = rng.integers(0, 256, size=3)
        if abs(_luma(colour) - bg_luma) >= MIN_CONTRAST:
            return colour.astype(np.float32)
    return np.full(3, 0.0 if bg_luma > 127 else 255.0, np.float32)


def paint(img: np.ndarray, alpha: np.ndarray, colour: np.ndarray) -> None:
    """Blend ``colour`` into ``img`` (in place) with coverage ``alpha`` (float32 in [0, 1])."""
    a = alpha[..., None]
    img[:] = (img * (1.0 - a) + colour * a + 0.5).astype(np.uint8)


def degrade(rng: np.random.Generator, img: np.ndarray, text_height: float) -> np.ndarray:
    """Blur (scaled to the text height), low resolution, and sensor noise, each at random."""
    if rng.random() < 0.4:
        sigma = rng.uniform(0.3, 1.0) * max(text_height, 8.0) / 32.0
        img = cv2.GaussianBlur(img, (0, 0), sigma)
    if rng.random() < 0.2 and text_height >= 20:
        h, w = img.shape[:2]
        scale = rng.uniform(0.5, 0.85)
        small = cv2.resize(img, (max(1, round(w * scale)), max(1, round(h * scale))), interpolation=cv2.INTER_AREA)
        img = cv2.resize(small, (w, h), interpolation=cv2.INTER_LINEAR)
    if rng.random() < 0.5:
        noise = rng.standard_normal(size=img.shape, dtype=np.float32) * np.float32(rng.uniform(2.0, 10.0))
        img = np.clip(noise + img, 0, 255).astype(np.uint8)
    return img
