"""The chain over our own exports: each stage through its task (``ocr.det`` / ``ocr.cls`` / ``ocr.rec``)
and the pre/post-processing stored with the model, exactly as ``paddlectl predict`` serves it."""

from __future__ import annotations

import copy
import dataclasses
from importlib.metadata import entry_points
from pathlib import Path

import numpy as np

from paddlectl.framework.errors import DataError
from paddlectl.framework.inference import Config
from paddlectl.framework.inference.predictor import Predictor

from ..pipeline import OCRSettings, TextSystem, sort_boxes

ROLES = {"det": "ocr.det", "cls": "ocr.cls", "rec": "ocr.rec"}


def _saved(model: Path):
    """The SavedModel, with an ONNX file's stored processing (metadata_props) lifted into its meta."""
    if model.is_dir():
        from paddlectl.framework.jit.saved_model import read_model_dir

        return read_model_dir(model)
    from paddlectl.framework.jit.saved_model import onnx_metadata_entries
    from paddlectl.framework.onnx.importer import import_onnx

    saved = import_onnx(str(model))
    return dataclasses.replace(saved, meta={**saved.meta, **onnx_metadata_entries(saved.meta.get("metadata") or {})})


def _task(name: str, model: Path, role: str):
    if name != ROLES[role]:
        raise DataError(f"--models: {model} was exported by task {name!r}; the {role} model must be {ROLES[role]}")
    found = {ep.name: ep for ep in entry_points(group="paddlectl.tasks")}
    task = found[name].load()
    return task() if isinstance(task, type) else task


class _Served:
    """One exported model behind its task's own preprocess -> predictor -> postprocess."""

    def __init__(self, saved, model: Path, role: str, threads: int) -> None:
        self.pre, self.post = saved.meta["preprocess"], saved.meta["postprocess"]
        self.task = _task(str(self.pre.get("task")), model, role)
        config = Config(str(model))
        config.set_cpu_math_library_num_threads(threads)
        self.predictor = Predictor(config, saved)

    def clone(self) -> _Served:
        """The same stage with a predictor of its own (``TextSystem.clone``)."""
        twin = copy.copy(self)
        twin.predictor = self.predictor.clone()
        return twin

    def __call__(self, raw_inputs: list) -> list[dict]:
        return self.task.postprocess(self.post, self.predictor.run(self.task.preprocess(self.pre, raw_inputs)))


class ServedTextSystem(TextSystem):
    """The chain with each stage served by its exported task; crops, ordering and batching as ``TextSystem``."""

    def __init__(self, det: Path, cls: Path | None, rec: Path, settings: OCRSettings) -> None:
        self.settings = settings
        stages = {}
        for role, model in (("det", det), ("cls", cls), ("rec", rec)):
            saved = None if model is None else _saved(model)
            if saved is not None and "preprocess" not in saved.meta:
                raise DataError(f"--models: {model} carries no pre/post-processing; export it with `paddlectl export`")
            stages[role] = None if saved is None else _Served(saved, model, role, settings.threads)
        self.det, self.cls, self.rec = stages["det"], stages["cls"], stages["rec"]
        self.recognize([np.full((32, 128, 3), 255, np.uint8)])  # a dictionary that does not fit fails here, at load

    def detect(self, img: np.ndarray):
        (found,) = self.det([img])
        return sort_boxes([np.asarray(b, dtype=np.int32) for b in found["dt_polys"]]), img, 0

    def classify(self, crops: list[np.ndarray]) -> list[np.ndarray]:
        if self.cls is None or not crops:
            return list(crops)
        labels = self.cls(crops)
        return [
            np.ascontiguousarray(c[::-1, ::-1]) if p["label"] == "180" and p["score"] > self.settings.cls_thresh else c
            for c, p in zip(crops, labels, strict=True)
        ]

    def recognize(self, crops: list[np.ndarray]) -> list[tuple[str, float]]:
        out = []
        for start in range(0, len(crops), self.settings.rec_batch):
            out += [(p["label"], float(p["score"])) for p in self.rec(crops[start : start + self.settings.rec_batch])]
        return out
