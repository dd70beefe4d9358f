"""``ocr.det``: DB text detection as a ``paddlectl.tasks`` task, configured in PaddleOCR's layout.

``Architecture: {model_type: det, algorithm: DB, Backbone: {name: MobileNetV3}, Neck: {name:
DBFPN}, Head: {name: DBHead, k: 50}}``, ``Loss: {name: DBLoss}``, ``PostProcess: {name:
DBPostProcess, thresh, box_thresh, max_candidates, unclip_ratio}``, ``Metric: {name: DetMetric,
main_indicator: hmean}``; Train/Eval are ``task_base``'s ``SimpleDataSet`` over det label files.

Evaluation batches images and concatenates outputs over the set, so the Eval transforms must give
one size: ``DetResizeForTest`` with a bounded size (``limit_type: max``, ``resize_long`` or
``image_shape``), then ``Pad`` to at least that bound. Serving runs the same transforms and feeds
the model the ``shape`` rows beside the images (see ``model``); ``export`` stores the transforms
(resize limit, mean/std) and the DB post-processing settings in the model.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import Any

import numpy as np

from paddlectl.framework.errors import ConfigError, DataError
from paddlectl.framework.hapi.builders import instantiate
from paddlectl.framework.static.input_spec import InputSpec

from ..db_postprocess import DBParams
from ..task_base import DecodeImage, OcrTaskBase, build_operators, operator_items, run_operators
from .augment import IaaAugment
from .backbone import MobileNetV3
from .head import DBHead
from .label_maps import MakeBorderMap, MakeShrinkMap
from .labels import DetLabelEncode, parse_det_label
from .loss import DBLoss
from .metric import DBDetMetric, boxes_in_source
from .model import DBNet
from .neck import DBFPN
from .random_crop import EastRandomCropData
from .table import DetKeepKeys
from .transforms import DetResizeForTest, NormalizeImage, Pad, ToCHWImage

POSTPROCESS = {"DBPostProcess": DBParams}


class DetTask(OcrTaskBase):
    name = "ocr.det"
    model_type = "det"
    BACKBONES = {"MobileNetV3": MobileNetV3}
    NECKS = {"DBFPN": DBFPN}
    HEADS = {"DBHead": DBHead}
    LOSSES = {"DBLoss": DBLoss}
    METRICS = {"DetMetric": DBDetMetric}
    DATA_OPS = {
        "DecodeImage": DecodeImage,
        "DetLabelEncode": DetLabelEncode,
        "IaaAugment": IaaAugment,
        "EastRandomCropData": EastRandomCropData,
        "MakeBorderMap": MakeBorderMap,
        "MakeShrinkMap": MakeShrinkMap,
        "DetResizeForTest": DetResizeForTest,
        "NormalizeImage": NormalizeImage,
        "Pad": Pad,
        "ToCHWImage": ToCHWImage,
        "KeepKeys": DetKeepKeys,
    }
    LABEL_OPS = ("DetLabelEncode", "IaaAugment", "EastRandomCropData", "MakeBorderMap", "MakeShrinkMap")

    # ----- config -----------------------------------------------------------------------
    def check_label(self, label: str) -> None:
        parse_det_label(label)

    def check_config(self, config: dict) -> None:
        super().check_config(config)
        algorithm = (config.get("Architecture") or {}).get("algorithm", "DB")
        if algorithm != "DB":
            raise ConfigError(f"Architecture.algorithm is {algorithm!r}; ocr.det trains DB")
        self.post_params(config)
        for split, training in (("Train", True), ("Eval", False)):
            keep = self.operators(config, split)[-1:]
            if not keep or not isinstance(keep[0], DetKeepKeys) or keep[0].training != training:
                want = "threshold/shrink maps" if training else "shape, polys, ignore_tags"
                raise ConfigError(f"{split}.dataset.transforms must end in KeepKeys keeping the image and {want}")
        self._check_eval_size(self.operators(config, "Eval"))
        for split in ("Train", "Eval"):
            for op in self.operators(config, split):
                size = op.size if isinstance(op, EastRandomCropData | Pad) else None
                if size is not None and any(s % 32 for s in size):
                    raise ConfigError(
                        f"{split}.dataset.transforms: {type(op).__name__}.size {list(size)} must be multiples of 32 "
                        "(the FPN adds maps at strides 4 to 32)"
                    )

    @staticmethod
    def _check_eval_size(ops: list) -> None:
        resize = next((i for i, op in enumerate(ops) if isinstance(op, DetResizeForTest)), None)
        pad = next((i for i, op in enumerate(ops) if isinstance(op, Pad)), None)
        if resize is None or pad is None or pad < resize or ops[pad].size is None:
            raise ConfigError(
                "Eval.dataset.transforms need DetResizeForTest, then Pad: {size: [H, W]}, so every evaluation "
                "image has one size (e.g. DetResizeForTest: {limit_side_len: 960, limit_type: max}, Pad: {size: [960, 960]})"
            )
        bound = ops[resize].max_size()
        if bound is None or bound[0] > ops[pad].size[0] or bound[1] > ops[pad].size[1]:
            raise ConfigError(
                f"DetResizeForTest can give images up to {bound or 'any size (limit_type: min)'}, more than Pad.size "
                f"{ops[pad].size}; use limit_type: max with limit_side_len at most the Pad size"
            )

    def post_params(self, config: dict) -> DBParams:
        section = config.get("PostProcess") or {"name": "DBPostProcess"}
        return instantiate(section, POSTPROCESS, "PostProcess")

    # ----- model, metrics, data -----------------------------------------------------------
    def build_model(self, config: dict):
        model = super().build_model(config)
        return DBNet(model.backbone, model.head, model.transform, model.neck)

    def metric_kwargs(self, config: dict) -> dict:
        return {"post": self.post_params(config)}

    def dataset(self, config: dict, split: str):
        """The split's SimpleDataSet; for evaluation its label tables are sized to the largest image."""
        dataset = super().dataset(config, split)
        keep = dataset.ops[-1]
        if not keep.training:
            regions = [parse_det_label(label) for _, label, _ in dataset.rows]
            keep.rows = max([len(r) for r in regions] + [1])
            keep.points = max([len(g["points"]) for r in regions for g in r] + [4])
        return dataset

    def eval_samples(self, config: dict):
        """``(image path, evaluation table)`` per Eval sample: images raw, as served."""
        dataset = self.dataset(config, "Eval")
        for i in range(len(dataset)):
            data = dataset.record(i)
            yield data["img_path"], dataset.ops[-1](data)[1]

    # ----- export and serving -----------------------------------------------------------
    def input_spec(self, config: dict) -> list:
        """Images at the ``Pad`` size (every served image is padded to it), and their ``shape`` rows."""
        height, width = next(op for op in self.operators(config, "Eval") if isinstance(op, Pad)).size
        return [InputSpec([None, 3, height, width], "float32", "image"), InputSpec([None, 4], "float32", "shape")]

    def postprocess_config(self, config: dict) -> dict:
        return {"task": self.name, "name": "DBPostProcess", **dataclasses.asdict(self.post_params(config))}

    def preprocess(self, pre: dict, raw_inputs: Sequence[Any]) -> list[np.ndarray]:
        """Images and their ``shape`` rows, through the stored Eval transforms."""
        ops = build_operators(operator_items(pre["transforms"], "transforms"), self.DATA_OPS, "preprocess", {})
        images, shapes = [], []
        for raw in raw_inputs:
            path = not isinstance(raw, np.ndarray)
            data = run_operators({"img_path": str(raw) if path else None, "image": None if path else raw}, ops)
            images.append(np.asarray(data["image"], np.float32))
            shapes.append(data["shape"])
        if len({a.shape for a in images}) > 1:
            raise DataError("pre-processing gave images of several sizes; the stored transforms must end in Pad")
        return [np.stack(images), np.stack(shapes).astype(np.float32)]

    def postprocess(self, post: dict, outputs: Sequence[np.ndarray]) -> list[dict]:
        """Per image ``dt_polys`` (quads in source pixels, PaddleOCR 3.x's name) and ``dt_scores``."""
        maps, shapes = (np.asarray(o) for o in outputs) if len(outputs) == 2 else (np.empty(0), None)
        if maps.ndim != 4 or maps.shape[1] != 1 or shapes.shape != (len(maps), 4):
            raise DataError(
                "a DB model's outputs must be the probability maps [N, 1, H, W] and the shape rows [N, 4]; "
                "export the model with `paddlectl export` from an ocr.det config"
            )
        params = DBParams(**{k: v for k, v in post.items() if k not in ("task", "name")})
        results = []
        for prob, shape in zip(maps[:, 0], shapes, strict=True):
            boxes, scores = boxes_in_source(prob, shape, params)
            results.append({"dt_polys": np.asarray(boxes).tolist(), "dt_scores": [float(s) for s in scores]})
        return results
