"""``vision.cls``: image classification, the reference implementation of the ``Task`` protocol.

Config sections it owns (see ``configs/*.yml``)::

    Architecture: {name: LeNet | ResNet18 | MobileNetV3Small, num_classes: 10, ...}
    Loss:         {name: CrossEntropyLoss, ...}
    Train/Eval:   {dataset: {name: Digits | DatasetFolder | Cifar10 | Cifar100, ...},
                   transforms: [{Resize: {size: 28}}, {ToTensor: {}}, ...],
                   loader: {batch_size, shuffle, drop_last, num_workers}}
    Metric:       {name: Accuracy, topk: [1], main_indicator: acc}
    PostProcess:  {topk: 1, label_list: [...]}
    Export:       {input_shape: [C, H, W]}

``Eval.transforms`` are the serving pre-processing: they are stored in the exported model, so
``predict`` applies exactly what evaluation applied.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from .. import metric, nn
from ..errors import ConfigError, DataError
from ..hapi.builders import check_keys, instantiate, require_mapping
from ..hapi.task import TaskBase, metric_names
from ..static.input_spec import InputSpec
from . import transforms as T
from .datasets import Cifar10, Cifar100, DatasetFolder
from .digits import Digits
from .image_io import MODES, as_mode, load_input, read_image
from .models import LeNet, MobileNetV3Small, ResNet


def _resnet18(num_classes: int = 1000, with_pool: bool = True) -> ResNet:
    return ResNet(depth=18, num_classes=num_classes, with_pool=with_pool)


def _lenet(num_classes: int = 10) -> LeNet:
    return LeNet(num_classes=num_classes)


def _mobilenet_v3_small(num_classes: int = 1000, scale: float = 1.0, with_pool: bool = True) -> MobileNetV3Small:
    return MobileNetV3Small(scale=scale, num_classes=num_classes, with_pool=with_pool)


def _folder(root: str, transform=None, mode: str = "RGB") -> DatasetFolder:
    """``root/<class>/<image>``; images read in the model's colour mode."""
    return DatasetFolder(root, loader=functools.partial(read_image, mode=mode), transform=transform)


def _cifar(cls):
    def make(data_file: str, mode: str = "train", transform=None) -> Cifar10:
        return cls(data_file=data_file, mode=mode, transform=transform)

    return make


MODELS = {"LeNet": _lenet, "ResNet18": _resnet18, "MobileNetV3Small": _mobilenet_v3_small}
DATASETS = {"Digits": Digits, "DatasetFolder": _folder, "Cifar10": _cifar(Cifar10), "Cifar100": _cifar(Cifar100)}
LOSSES = {"CrossEntropyLoss": nn.CrossEntropyLoss}
METRICS = {"Accuracy": metric.Accuracy}
TRANSFORMS = {
    name: cls
    for name, cls in vars(T).items()
    if inspect.isclass(cls) and issubclass(cls, T.BaseTransform) and cls is not T.BaseTransform
}
SPLIT_KEYS = ("dataset", "transforms", "loader")
LOADER_KEYS = ("batch_size", "shuffle", "drop_last", "num_workers")


def _transform_items(items: Any, where: str) -> list[tuple[str, dict]]:
    """``[{Resize: {size: 28}}, {ToTensor: null}]`` -> ``[("Resize", {"size": 28}), ("ToTensor", {})]``."""
    if items is None:
        return []
    if not isinstance(items, list):
        raise ConfigError(f"{where} must be a list like [{{Resize: {{size: 28}}}}, {{ToTensor: {{}}}}]")
    steps = []
    for i, item in enumerate(items):
        if not isinstance(item, dict) or len(item) != 1:
            raise ConfigError(f"{where}[{i}] must be one mapping {{Name: {{args}}}}, got {item!r}")
        ((name, args),) = item.items()
        args = args or {}
        require_mapping(args, f"{where}[{i}].{name}")
        steps.append((name, dict(args)))
    return steps


class Pipeline:
    """Image -> model input: colour mode, then the configured transforms, ending in a CHW float32 array."""

    def __init__(self, mode: str, steps: list[tuple[str, dict]], where: str) -> None:
        self.mode = mode
        self.transforms = [instantiate({"name": n, **a}, TRANSFORMS, f"{where}.{n}") for n, a in steps]

    def __call__(self, image) -> np.ndarray:
        out = as_mode(image, self.mode)
        for transform in self.transforms:
            out = transform(out)
        return np.asarray(out.numpy() if hasattr(out, "numpy") else out, dtype="float32")


class ClsTask(TaskBase):
    """Image classification: LeNet/ResNet18/MobileNetV3Small on digits, image folders or CIFAR."""

    name = "vision.cls"

    # ----- config -----------------------------------------------------------------------
    def check_config(self, config: dict) -> None:
        for split in ("Train", "Eval"):
            section = config.get(split)
            if not section or "dataset" not in section:
                raise ConfigError(f"config section {split!r} needs a dataset, e.g. {split}.dataset: {{name: Digits}}")
            # Eval.harness belongs to the evaluation harness (DESIGN.md §3), which validates it.
            check_keys(section, split, SPLIT_KEYS + (("harness",) if split == "Eval" else ()))
            check_keys(section.get("loader") or {}, f"{split}.loader", LOADER_KEYS)
        check_keys(config.get("PostProcess") or {}, "PostProcess", ("topk", "label_list"))
        check_keys(config.get("Export") or {}, "Export", ("input_shape",))
        shape = self._input_shape(config)
        if shape[0] not in (1, 3):
            raise ConfigError(f"Export.input_shape {shape} must start with 1 (grey) or 3 (RGB) channels")
        main = self.main_indicator(config)
        names = metric_names(self.build_metrics(config))
        if main not in names:
            raise ConfigError(f"Metric.main_indicator {main!r} is not a metric name; choose from {', '.join(names)}")
        for split in ("Train", "Eval"):
            self.pipeline(config, split)
        self.build_model(config)  # refuses architecture and transform typos now, not after the data is read

    @staticmethod
    def _input_shape(config: dict) -> list[int]:
        shape = (config.get("Export") or {}).get("input_shape")
        if not (isinstance(shape, list) and len(shape) == 3 and all(isinstance(d, int) and d > 0 for d in shape)):
            raise ConfigError(f"Export.input_shape must be [channels, height, width], got {shape!r}")
        return shape

    def _mode(self, config: dict) -> str:
        return MODES[0] if self._input_shape(config)[0] == 1 else MODES[1]

    # ----- training ---------------------------------------------------------------------
    def build_model(self, config: dict):
        return instantiate(config.get("Architecture") or {}, MODELS, "Architecture")

    def _dataset(self, config: dict, split: str, transform):
        section = dict(config[split]["dataset"])
        extra = {"transform": transform}
        if section.get("name") == "DatasetFolder":
            extra["mode"] = self._mode(config)
        try:
            return instantiate(section, DATASETS, f"{split}.dataset", **extra)
        except (FileNotFoundError, NotADirectoryError) as exc:
            raise DataError(f"{split}.dataset: {exc}") from None

    def pipeline(self, config: dict, split: str) -> Pipeline:
        return Pipeline(
            self._mode(config), _transform_items(config[split].get("transforms"), f"{split}.transforms"), split
        )

    def build_datasets(self, config: dict):
        return tuple(self._dataset(config, split, self.pipeline(config, split)) for split in ("Train", "Eval"))

    def build_loader_options(self, config: dict, split: str) -> dict:
        section = config["Train" if split == "train" else "Eval"]
        options = {"batch_size": 64, "shuffle": split == "train", "drop_last": False, "num_workers": 0}
        options.update(section.get("loader") or {})
        return options

    def build_loss(self, config: dict):
        return instantiate(config.get("Loss") or {"name": "CrossEntropyLoss"}, LOSSES, "Loss")

    def build_metrics(self, config: dict) -> list:
        section = dict(config.get("Metric") or {"name": "Accuracy"})
        return [instantiate(section, METRICS, "Metric", skip=("main_indicator",))]

    # ----- export and serving -----------------------------------------------------------
    def input_spec(self, config: dict) -> list:
        return [InputSpec([None, *self._input_shape(config)], "float32", "image")]

    def preprocess_config(self, config: dict) -> dict:
        return {
            "task": self.name,
            "image_mode": self._mode(config),
            "transforms": [{n: a} for n, a in _transform_items(config["Eval"].get("transforms"), "Eval.transforms")],
            "input_shape": self._input_shape(config),
        }

    def postprocess_config(self, config: dict) -> dict:
        post = config.get("PostProcess") or {}
        labels = post.get("label_list")
        if labels is None:
            labels = getattr(self._dataset(config, "Eval", None), "classes", None)
        return {"task": self.name, "topk": int(post.get("topk", 1)), "label_list": list(labels) if labels else None}

    def preprocess(self, pre: dict, raw_inputs: Sequence[Any]) -> list[np.ndarray]:
        pipeline = Pipeline(pre["image_mode"], _transform_items(pre["transforms"], "transforms"), "preprocess")
        batch = []
        for raw in raw_inputs:
            array = pipeline(load_input(raw, pre["image_mode"]))
            if list(array.shape) != list(pre["input_shape"]):
                what = raw if isinstance(raw, str | Path) else "an input array"
                raise DataError(
                    f"{what} becomes shape {list(array.shape)} after pre-processing, the model takes "
                    f"{pre['input_shape']}; the Eval.transforms must end in that size (Resize, then ToTensor)"
                )
            batch.append(array)
        return [np.stack(batch)]

    def postprocess(self, post: dict, outputs: Sequence[np.ndarray]) -> list[dict]:
        logits = np.asarray(outputs[0], dtype="float64")
        shifted = logits - logits.max(axis=1, keepdims=True)
        probs = np.exp(shifted) / np.exp(shifted).sum(axis=1, keepdims=True)
        labels = post.get("label_list")
        k = max(1, min(int(post.get("topk", 1)), probs.shape[1]))
        predictions = []
        for row in probs:
            order = np.argsort(-row, kind="stable")[:k]
            top = [
                {
                    "class_id": int(c),
                    "label": labels[c] if labels and c < len(labels) else str(int(c)),
                    "score": float(row[c]),
                }
                for c in order
            ]
            predictions.append({**top[0], "topk": top})
        return predictions

    def eval_samples(self, config: dict):
        """Image files for folder datasets (so decoding is part of what is measured), arrays otherwise."""
        dataset = self._dataset(config, "Eval", None)
        if isinstance(dataset, DatasetFolder):
            for path, target in dataset.samples:
                yield path, int(target)
            return
        for i in range(len(dataset)):
            image, label = dataset[i]
            yield image, int(np.asarray(label).reshape(-1)[0])
