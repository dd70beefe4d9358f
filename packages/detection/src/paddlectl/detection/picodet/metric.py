"""The detection metrics as ``paddle.metric.Metric`` objects the trainer and the eval harness drive:
model outputs (any form ``postprocess.detections`` reads) and label tables in, COCO AP or VOC mAP out."""

from __future__ import annotations

import numpy as np

from paddlectl.framework.errors import ConfigError

from ..data.labels import unpack
from ..metrics import GroundTruth, coco_eval, voc_map
from .postprocess import NMSParams, detections


class _DetMetric:
    def __init__(self, label_names, nms: NMSParams, num_classes: int, reg_max: int, strides) -> None:
        self.label_names, self.nms = list(label_names), nms
        self.decode = {"num_classes": num_classes, "reg_max": reg_max, "strides": strides}
        self.reset()

    def reset(self) -> None:
        self.truths, self.found = [], []

    def compute(self, *outputs_and_labels):
        *outputs, labels = outputs_and_labels
        found = detections(outputs, self.nms, labels=labels, **self.decode)
        truths = []
        for table in labels:
            label = unpack(table)
            source = label.boxes / np.tile(label.scale[::-1], 2)
            size = np.array([label.height, label.width]) / label.scale
            truths.append(
                GroundTruth(label.image_id, float(size[0]), float(size[1]), source, label.classes, label.crowd)
            )
        return truths, found

    def update(self, truths, found) -> None:
        self.truths += list(truths)
        self.found += list(found)


class COCOMetric(_DetMetric):
    """``bbox_ap`` (AP@[.5:.95]), ``bbox_ap50``, ``bbox_ap75``, by area, and ``ap_<class>``, by COCOeval."""

    KEYS = ("bbox_ap", "bbox_ap50", "bbox_ap75", "bbox_ap_small", "bbox_ap_medium", "bbox_ap_large")

    def name(self) -> list[str]:
        return [*self.KEYS, *(f"ap_{n}" for n in self.label_names)]

    def accumulate(self) -> list[float]:
        result = coco_eval(self.truths, self.found, self.label_names)
        return [result[k] for k in self.name()]


class VOCMetric(_DetMetric):
    """``mAP`` at IoU ``overlap_thresh``, all-point (``integral``) or ``11point``, and ``ap_<class>``."""

    def __init__(self, *args, overlap_thresh: float = 0.5, map_type: str = "integral", **kwargs) -> None:
        if map_type not in ("integral", "11point"):
            raise ConfigError(f"Metric.map_type is {map_type!r}; use integral or 11point")
        self.overlap_thresh, self.eleven_point = float(overlap_thresh), map_type == "11point"
        super().__init__(*args, **kwargs)

    def name(self) -> list[str]:
        return ["mAP", *(f"ap_{n}" for n in self.label_names)]

    def accumulate(self) -> list[float]:
        result = voc_map(self.truths, self.found, self.label_names, self.overlap_thresh, self.eleven_point)
        return [result.get(k, -1.0) for k in self.name()]
