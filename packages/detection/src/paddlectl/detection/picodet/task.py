"""``det.picodet``: the PicoDet-style detector as a ``paddlectl.tasks`` task.

Config sections (PaddleDetection's names inside the framework's fixed sections)::

    Architecture: {name: PicoDet, ema_decay: 0.9998,
                   Backbone: {name: LCNet, scale}, Neck: {name: LCPAN, out_channels},
                   Head: {name: PicoHead, num_classes, reg_max, strides, num_convs}}
    Loss:         {name: PicoDetLoss, loss_weights: {class, iou, dfl}, assigner: {name: TaskAlignedAssigner, topk}}
    Train/Eval:   {dataset: {name: COCODataSet | VOCDataSet, dataset_dir, ..., transforms: [{Decode: {}}, ..., {PadGT: {}}]},
                   loader: {batch_size, shuffle, drop_last, num_workers}}
                  # Train.dataset may split them as PaddleDetection's TrainReader does: transforms (per sample),
                  # then batch_transforms (e.g. [{BatchRandomResize: {...}}, ..., {PadGT: {}}]; drop_last: true)
    Metric:       {name: COCOMetric | VOCMetric, main_indicator: bbox_ap50}
    PostProcess:  {score_threshold, nms_threshold, nms_top_k, keep_top_k, draw_threshold}
    Export:       {nms: true}   # NMS inside: boxes [N, 6] and boxes_num [B] (PaddleDetection's default);
                                # false: the model ends before NMS (boxes [B, A, 4], scores [B, C, A])

``Eval`` transforms must give one input size (``Resize`` without ``keep_ratio``, or ``Pad``):
evaluation batches images, and the exported model is traced at that size. They are also the
serving pre-processing, stored in the exported model without the label-only steps.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from functools import cache
from pathlib import Path
from typing import Any

import numpy as np

from paddlectl.framework.errors import ConfigError, DataError
from paddlectl.framework.hapi.builders import check_keys, instantiate, require_mapping
from paddlectl.framework.hapi.task import TaskBase, metric_names
from paddlectl.framework.io.world import env_rank, env_world_size
from paddlectl.framework.static.input_spec import InputSpec
from paddlectl.framework.vision.image_io import load_input
from paddlectl.framework.vision.task import _transform_items as transform_items

from ..data.coco import COCODataSet
from ..data.transforms import LABEL_OPS, TRANSFORMS, BatchTransform, Pad, PadGT, Resize
from ..data.voc import VOCDataSet
from ..records import record, write_picture
from .backbone import LCNet
from .head import PicoHead
from .loss import PicoDetLoss
from .metric import COCOMetric, VOCMetric
from .model import PicoDet
from .neck import LCPAN
from .nms_export import PicoDetNMS
from .postprocess import NMSParams, detections
from .postprocess import split as per_image

ARCHITECTURE_KEYS = ("name", "ema_decay", "Backbone", "Neck", "Head")
DATASETS = {"COCODataSet": COCODataSet, "VOCDataSet": VOCDataSet}
METRICS = {"COCOMetric": COCOMetric, "VOCMetric": VOCMetric}
POSTPROCESS_KEYS = ("score_threshold", "nms_threshold", "nms_top_k", "keep_top_k", "draw_threshold")


@cache
def _names(kind: str, path: str, stamp: float) -> tuple[str, ...]:
    if kind == "COCODataSet":
        try:
            categories = json.loads(Path(path).read_text(encoding="utf-8")).get("categories") or []
            return tuple(str(c["name"]) for c in sorted(categories, key=lambda c: c["id"]))
        except (OSError, ValueError, KeyError, TypeError, AttributeError) as exc:
            raise DataError(f"{path}: cannot read its categories ({exc})") from None
    return tuple(line.strip() for line in Path(path).read_text(encoding="utf-8").splitlines() if line.strip())


class PicoDetTask(TaskBase):
    name = "det.picodet"
    takes_threshold = True  # `paddlectl predict --threshold` sets the score a box needs (post["threshold"])

    # ----- config -----------------------------------------------------------------------
    def _section(self, config: dict, name: str) -> dict:
        section = config.get(name) or {}
        require_mapping(section, name)
        return section

    def _head(self, config: dict) -> dict:
        head = dict(self._section(config, "Architecture").get("Head") or {})
        return {
            "num_classes": head.get("num_classes", 80),
            "reg_max": head.get("reg_max", 7),
            "strides": head.get("strides", [8, 16, 32]),
        }

    def nms_params(self, config: dict) -> NMSParams:
        section = {k: v for k, v in self._section(config, "PostProcess").items() if k != "draw_threshold"}
        check_keys(self._section(config, "PostProcess"), "PostProcess", POSTPROCESS_KEYS)
        return NMSParams(**section)

    def export_nms(self, config: dict) -> bool:
        """``Export.nms``: whether the exported model holds its NMS (true, PaddleDetection's default)."""
        export = self._section(config, "Export")
        check_keys(export, "Export", ("nms",))
        nms = export.get("nms", True)
        if not isinstance(nms, bool):
            raise ConfigError(f"Export.nms is {nms!r}; use true (NMS inside the model) or false (NMS after it)")
        return nms

    def label_names(self, config: dict) -> list[str]:
        """The class names of the Eval set (COCO categories by id, or VOC's label_list)."""
        section = self._section(config, "Eval").get("dataset") or {}
        kind = section.get("name", "COCODataSet")
        key = "anno_path" if kind == "COCODataSet" else "label_list"
        path = Path(section.get("dataset_dir", "")) / str(
            section.get(key, "label_list.txt" if kind == "VOCDataSet" else "")
        )
        if not path.is_file():
            raise DataError(f"Eval.dataset.{key} {str(path)!r} does not exist; check dataset_dir and {key}")
        return list(_names(kind, str(path), path.stat().st_mtime))

    def steps(self, config: dict, split: str) -> list[tuple[str, dict]]:
        section = self._section(config, split)
        check_keys(section, split, ("dataset", "loader") + (("harness",) if split == "Eval" else ()))
        dataset = section.get("dataset")
        if not dataset:
            raise ConfigError(
                f"{split}.dataset is missing, e.g. {{name: COCODataSet, dataset_dir, image_dir, anno_path, transforms}}"
            )
        require_mapping(dataset, f"{split}.dataset")
        return transform_items(dataset.get("transforms"), f"{split}.dataset.transforms")

    def batch_steps(self, config: dict, split: str) -> list[tuple[str, dict]]:
        """``Train.dataset.batch_transforms``: the transforms after the batch is formed (PaddleDetection's)."""
        dataset = self._section(config, split).get("dataset") or {}
        steps = transform_items(dataset.get("batch_transforms"), f"{split}.dataset.batch_transforms")
        if steps and split != "Train":
            raise ConfigError(
                f"{split}.dataset.batch_transforms: evaluation and serving bring every image to one size; "
                "list Resize (without keep_ratio, or with Pad) under transforms instead"
            )
        return steps

    def operators(self, steps: list[tuple[str, dict]], where: str) -> list:
        return [instantiate({"name": n, **a}, TRANSFORMS, f"{where}.{n}") for n, a in steps]

    def pipeline(self, config: dict, split: str) -> list:
        """The split's transforms, per-sample ones then batch ones, as the dataset runs them."""
        ops = self.operators(self.steps(config, split), f"{split}.dataset.transforms")
        for op in ops:
            if isinstance(op, BatchTransform):
                raise ConfigError(
                    f"{split}.dataset.transforms: {type(op).__name__} acts on a whole batch; "
                    "list it under batch_transforms"
                )
        return ops + self.operators(self.batch_steps(config, split), f"{split}.dataset.batch_transforms")

    def check_config(self, config: dict) -> None:
        arch = self._section(config, "Architecture")
        check_keys(arch, "Architecture", ARCHITECTURE_KEYS)
        if arch.get("name", "PicoDet") != "PicoDet":
            raise ConfigError(f"Architecture.name is {arch.get('name')!r}; det.picodet trains PicoDet")
        for split in ("Train", "Eval"):
            ops = self.pipeline(config, split)
            if not ops or type(ops[0]).__name__ != "Decode" or not isinstance(ops[-1], PadGT):
                raise ConfigError(
                    f"{split}.dataset.transforms (then batch_transforms) must start with Decode and end with PadGT"
                )
            check_keys(
                self._section(config, split).get("loader") or {},
                f"{split}.loader",
                ("batch_size", "shuffle", "drop_last", "num_workers"),
            )
        loader = self.build_loader_options(config, "train")
        if any(isinstance(op, BatchTransform) for op in self.pipeline(config, "Train")) and not (
            loader["drop_last"] is True and type(loader["batch_size"]) is int and loader["batch_size"] > 0
        ):
            raise ConfigError(
                "Train.dataset.batch_transforms draw once per batch and need whole batches: "
                "set Train.loader.drop_last: true and a positive integer batch_size"
            )
        self.input_size(config)
        self.nms_params(config)
        self.export_nms(config)
        main, names = self.main_indicator(config), metric_names(self.build_metrics(config))
        if main not in names:
            raise ConfigError(f"Metric.main_indicator {main!r} is not a metric name; choose from {', '.join(names)}")
        self.build_loss(config)
        self.build_model(config)

    def input_size(self, config: dict) -> list[int]:
        """The one ``[h, w]`` every Eval image is brought to (the exported model's input size)."""
        ops = self.operators(self.steps(config, "Eval"), "Eval.dataset.transforms")
        size = None
        for op in ops:
            if isinstance(op, Resize):
                size = None if op.keep_ratio else op.target_size
            elif isinstance(op, Pad):
                size = op.size
        if size is None:
            raise ConfigError(
                "Eval.dataset.transforms must give one image size: Resize {target_size: [H, W], keep_ratio: false}, "
                "or Resize with keep_ratio then Pad {size: [H, W]}"
            )
        if any(s % max(self._head(config)["strides"]) for s in size):
            raise ConfigError(
                f"the Eval input size {size} must be a multiple of the largest stride {max(self._head(config)['strides'])}"
            )
        return size

    def main_indicator(self, config: dict) -> str:
        metric = self._section(config, "Metric")
        default = "bbox_ap" if metric.get("name", "COCOMetric") == "COCOMetric" else "mAP"
        return str(metric.get("main_indicator", default))

    # ----- model, loss, metrics -----------------------------------------------------------
    def build_model(self, config: dict):
        arch = self._section(config, "Architecture")
        for part in ("Backbone", "Neck", "Head"):
            if not arch.get(part):
                raise ConfigError(
                    f"Architecture.{part} is missing (PicoDet: Backbone LCNet, Neck LCPAN, Head PicoHead)"
                )
        backbone = instantiate(arch["Backbone"], {"LCNet": LCNet}, "Architecture.Backbone")
        neck = instantiate(arch["Neck"], {"LCPAN": LCPAN}, "Architecture.Neck", in_channels=backbone.out_channels)
        head = instantiate(arch["Head"], {"PicoHead": PicoHead}, "Architecture.Head", in_channels=neck.out_channels)
        decay = arch.get("ema_decay", 0.9998)
        if decay is not None and not 0 < float(decay) < 1:
            raise ConfigError(f"Architecture.ema_decay is {decay!r}; use a decay in (0, 1), or null for no EMA")
        if self.export_nms(config):
            return PicoDetNMS(backbone, neck, head, decay, self.nms_params(config))
        return PicoDet(backbone, neck, head, decay)

    def build_loss(self, config: dict):
        return instantiate(
            {"name": "PicoDetLoss", **self._section(config, "Loss")},
            {"PicoDetLoss": PicoDetLoss},
            "Loss",
            **self._head(config),
        )

    def build_metrics(self, config: dict) -> list:
        section = {k: v for k, v in self._section(config, "Metric").items() if k != "main_indicator"}
        return [
            instantiate(
                {"name": "COCOMetric", **section},
                METRICS,
                "Metric",
                label_names=self.label_names(config),
                nms=self.nms_params(config),
                **self._head(config),
            )
        ]

    # ----- data -------------------------------------------------------------------------
    def dataset(self, config: dict, split: str):
        section = dict(self._section(config, split)["dataset"])
        section.pop("transforms", None)
        section.pop("batch_transforms", None)
        ops = self.pipeline(config, split)
        dataset = instantiate({"name": "COCODataSet", **section}, DATASETS, f"{split}.dataset", transforms=ops)
        if any(isinstance(op, BatchTransform) for op in ops):  # this process's rows of each batch (RankShare)
            batch = self.build_loader_options(config, "train")["batch_size"]
            dataset.serve_batches_of(len(range(env_rank(), batch, env_world_size())))
        classes = self._head(config)["num_classes"]
        if len(dataset.label_names) != classes:
            raise ConfigError(
                f"{split}.dataset has {len(dataset.label_names)} categories, Architecture.Head.num_classes is {classes}; "
                "make them equal"
            )
        return dataset

    def build_datasets(self, config: dict):
        return self.dataset(config, "Train"), self.dataset(config, "Eval")

    def build_loader_options(self, config: dict, split: str) -> dict:
        loader = dict(self._section(config, "Train" if split == "train" else "Eval").get("loader") or {})
        return {
            "batch_size": loader.get("batch_size", 8),
            "shuffle": loader.get("shuffle", split == "train"),
            "drop_last": loader.get("drop_last", split == "train"),
            "num_workers": loader.get("num_workers", 0),
        }

    def eval_samples(self, config: dict):
        """``(image path, label table)`` per Eval image: images raw, as served."""
        dataset = self.dataset(config, "Eval")
        for i in range(len(dataset)):
            yield dataset.records[i]["im_file"], dataset[i][1]

    # ----- export and serving -----------------------------------------------------------
    def input_spec(self, config: dict) -> list:
        height, width = self.input_size(config)
        return [
            InputSpec([None, 3, height, width], "float32", "image"),
            InputSpec([None, 2], "float32", "scale_factor"),
        ]

    def preprocess_config(self, config: dict) -> dict:
        steps = [{n: a} for n, a in self.steps(config, "Eval") if n not in LABEL_OPS]
        return {"task": self.name, "transforms": steps}

    def postprocess_config(self, config: dict) -> dict:
        draw = self._section(config, "PostProcess").get("draw_threshold", 0.5)
        return {
            "task": self.name,
            "label_list": self.label_names(config),
            "draw_threshold": float(draw),
            "nms": self.nms_params(config).__dict__,
            "nms_inside": self.export_nms(config),
            **self._head(config),
        }

    def preprocess(self, pre: dict, raw_inputs: Sequence[Any]) -> list[np.ndarray]:
        """Images through the stored transforms, and their ``scale_factor`` rows."""
        ops = self.operators(transform_items(pre["transforms"], "transforms"), "preprocess")
        images, scales = [], []
        for raw in raw_inputs:
            data = (
                {"im_file": str(raw), "source": str(raw)}
                if not isinstance(raw, np.ndarray)
                else {"image": raw, "source": "array"}
            )
            for op in ops:
                data = op(data)
            images.append(np.asarray(data["image"], np.float32))
            scales.append(data["scale_factor"])
        if len({a.shape for a in images}) > 1:
            raise DataError("pre-processing gave images of several sizes; the stored transforms must end in one size")
        return [np.stack(images), np.stack(scales).astype(np.float32)]

    def postprocess(self, post: dict, outputs: Sequence[np.ndarray]) -> list[dict]:
        """Per image PaddleX's ``boxes`` (``cls_id``, ``label``, ``score``, ``coordinate``) scoring at least
        ``draw_threshold`` (``threshold`` when given, as ``predict --threshold`` passes it), from either export:
        NMS inside the model (``nms_inside``: ``boxes`` [N, 6], ``boxes_num`` [B]) or after it."""
        if post.get("nms_inside", False):  # models exported before Export.nms: true existed lack the key
            if len(outputs) != 2:
                raise DataError(f"a PicoDet exported with NMS gives boxes and boxes_num; got {len(outputs)} outputs")
            found = per_image(*outputs)
        else:
            found = detections(outputs, NMSParams(**post["nms"]), post["num_classes"], post["reg_max"], post["strides"])
        threshold = float(post.get("threshold", post["draw_threshold"]))
        return [{"boxes": record("", rows[rows[:, 1] >= threshold], post["label_list"])["boxes"]} for rows in found]

    def visualize(self, post: dict, raw_input, prediction: dict, out_dir, stem: str) -> dict:
        """``<stem>_vis.png`` under ``out_dir``: the input image with the predicted boxes, labels and
        scores drawn (``paddlectl predict`` calls this hook beside its JSON); returns its path."""
        path = Path(out_dir) / f"{stem}_vis.png"
        path.parent.mkdir(parents=True, exist_ok=True)
        write_picture(path, load_input(raw_input, "RGB"), prediction)
        return {"vis": str(path)}
