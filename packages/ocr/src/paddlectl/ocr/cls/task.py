"""``ocr.cls``: the 0/180 text-line direction classifier, trained and served through ``paddlectl
train / export / eval / predict``. See ``configs/cls_*.yml``; ``PostProcess.label_list`` names
the classes (PaddleOCR's ``ClsPostProcess``), and export stores it with the model."""

from __future__ import annotations

import numpy as np

from paddlectl.framework import metric, nn
from paddlectl.framework.errors import ConfigError, DataError
from paddlectl.framework.hapi.builders import check_keys

from ..rec.labels import probabilities
from ..rec.line_task import LineTask
from ..rec.resize import ClsResizeImg
from ..task_base import OcrTaskBase, SimpleDataSet
from .data import ClsLabelEncode, DirectionDataSet, RotateToLabel
from .model import ClsHead, cls_backbone


def cls_metric(main_indicator: str = "acc") -> metric.Accuracy:
    """PaddleOCR's ``ClsMetric``: top-1 accuracy, reported as ``acc``."""
    if main_indicator != "acc":
        raise ConfigError(f"ClsMetric.main_indicator is {main_indicator!r}; it reports acc")
    return metric.Accuracy(topk=(1,), name="acc")


def cls_loss() -> nn.CrossEntropyLoss:
    """PaddleOCR's ``ClsLoss``: cross-entropy over the two directions."""
    return nn.CrossEntropyLoss()


class ClsTask(LineTask):
    name = "ocr.cls"
    model_type = "cls"
    BACKBONES = {"MobileNetV3": cls_backbone}
    HEADS = {"ClsHead": ClsHead}
    LOSSES = {"ClsLoss": cls_loss}
    METRICS = {"ClsMetric": cls_metric}
    DATA_OPS = {
        **OcrTaskBase.DATA_OPS,
        "ClsLabelEncode": ClsLabelEncode,
        "ClsResizeImg": ClsResizeImg,
        "RotateToLabel": RotateToLabel,
    }
    DATASETS = {"SimpleDataSet": SimpleDataSet, "DirectionDataSet": DirectionDataSet}
    LABEL_OPS = ("ClsLabelEncode", "RotateToLabel")
    RESIZE_OP = "ClsResizeImg"

    def label_list(self, config: dict) -> list[str]:
        section = config.get("PostProcess") or {}
        check_keys(section, "PostProcess", ("name", "label_list"))
        labels = section.get("label_list", ["0", "180"])
        if not (isinstance(labels, list) and len(labels) >= 2 and len(set(map(str, labels))) == len(labels)):
            raise ConfigError(f"PostProcess.label_list must name two or more distinct classes, got {labels!r}")
        return [str(x) for x in labels]

    def op_context(self, config: dict) -> dict:
        return {"label_list": self.label_list(config)}

    def head_kwargs(self, config: dict) -> dict:
        head = (config.get("Architecture") or {}).get("Head") or {}
        classes = len(self.label_list(config))
        if head.get("class_dim", classes) != classes:
            raise ConfigError(
                f"Architecture.Head.class_dim is {head['class_dim']} but PostProcess.label_list has {classes} names"
            )
        return {} if "class_dim" in head else {"class_dim": classes}

    def check_config(self, config: dict) -> None:
        self.label_list(config)
        self.image_shape(config)
        super().check_config(config)

    def postprocess_config(self, config: dict) -> dict:
        return {"task": self.name, "name": "ClsPostProcess", "outputs": "logits", "label_list": self.label_list(config)}

    def postprocess(self, post: dict, outputs) -> list[dict]:
        logits, labels = np.asarray(outputs[0]), post["label_list"]
        if logits.ndim != 2 or logits.shape[1] != len(labels):
            raise DataError(
                f"the classifier gives {logits.shape[-1]} classes, its label_list names {len(labels)}; export the "
                "model with the label_list it was trained with"
            )
        probs = probabilities(logits)
        return [
            {"label": labels[i], "class_id": int(i), "score": float(p[i])}
            for p, i in zip(probs, probs.argmax(1), strict=True)
        ]
