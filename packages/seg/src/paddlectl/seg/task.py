"""``seg.semantic``: semantic segmentation as a ``paddlectl.tasks`` task, configured in PaddleSeg's terms.

Sections (see ``configs/*.yml``)::

    Architecture: {name: PPLiteSeg | UNet, num_classes, ...the model's arguments}
    Loss:         {types: [{name: OhemCrossEntropyLoss, min_kept}, ...], coef: [1, 1, 1]}
    Optimizer:    {name: Momentum, momentum, weight_decay,
                   lr: {name: PolynomialDecay, learning_rate, end_lr, power, warmup_iters, warmup_start_lr}}
    Train:        {dataset: {name: Dataset, dataset_root, train_path, separator, ignore_index,
                             transforms: [{ResizeStepScaling: {...}}, {RandomPaddingCrop: {...}}, ...]},
                   loader: {batch_size, shuffle, drop_last, num_workers}}
    Eval:         {dataset: {name: Dataset, dataset_root, val_path, transforms: [{Normalize: {}}]},
                   loader: {...}, test_config: {is_slide, crop_size, stride, aug_eval, scales, flip_horizontal}}
    Metric:       {main_indicator: miou}     (miou, acc, kappa, mdice, iou_<class>)
    PostProcess:  {label_list: [background, ...]}
    Export:       {input_shape: [3, H, W]}

Evaluation and serving see the same pixels: both resize to ``Export.input_shape`` (labels with
nearest neighbours) and then run ``Eval.dataset.transforms``, and the model is wrapped by
``test_config`` (sliding window, multi-scale, flip) in eval mode, so the number ``train`` keeps
in ``best/`` is the number ``paddlectl eval`` measures on the exported model.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from paddlectl.framework.errors import ConfigError, DataError
from paddlectl.framework.hapi.builders import check_keys, instantiate, require_mapping, resolve
from paddlectl.framework.hapi.task import TaskBase, metric_names
from paddlectl.framework.static.input_spec import InputSpec
from paddlectl.framework.vision.image_io import load_input
from paddlectl.framework.vision.task import _transform_items as transform_items

from .data.dataset import Dataset
from .data.transforms import RANDOM, TRANSFORMS, Resize
from .infer import TEST_CONFIG_KEYS, SegInference
from .losses import SegLoss
from .metrics import SegMetric, label_map
from .models import PPLiteSeg, UNet
from .optim import build_optimizer
from .vis import write_visuals

MODELS = {"PPLiteSeg": PPLiteSeg, "UNet": UNet}
DATASETS = {"Dataset": Dataset}
LIST_KEY = {"Train": "train_path", "Eval": "val_path"}
SPLIT_KEYS = {"Train": ("dataset", "loader"), "Eval": ("dataset", "loader", "test_config", "harness")}
DATASET_KEYS = ("name", "dataset_root", "separator", "ignore_index", "transforms")
LOADER_KEYS = ("batch_size", "shuffle", "drop_last", "num_workers")


class SemanticSegTask(TaskBase):
    name = "seg.semantic"

    # ----- config -----------------------------------------------------------------------
    def check_config(self, config: dict) -> None:
        arch = config.get("Architecture")
        if not isinstance(arch, dict) or "num_classes" not in arch:
            raise ConfigError("config needs Architecture: {name: PPLiteSeg | UNet, num_classes: N, ...}")
        for split in ("Train", "Eval"):
            section = config.get(split)
            if not isinstance(section, dict) or "dataset" not in section:
                raise ConfigError(
                    f"config section {split!r} needs a dataset: {{name: Dataset, {LIST_KEY[split]}: ...}}"
                )
            check_keys(section, split, SPLIT_KEYS[split])
            check_keys(section["dataset"], f"{split}.dataset", (*DATASET_KEYS, LIST_KEY[split]))
            if LIST_KEY[split] not in section["dataset"]:
                raise ConfigError(f"{split}.dataset needs {LIST_KEY[split]} (a file list of 'image label' lines)")
            check_keys(section.get("loader") or {}, f"{split}.loader", LOADER_KEYS)
            resolve(section["dataset"].get("name", "Dataset"), DATASETS, f"{split}.dataset")
            self.transforms(config, split)
        random = [type(t).__name__ for t in self.transforms(config, "Eval") if type(t).__name__ in RANDOM]
        if random:
            raise ConfigError(f"Eval.dataset.transforms holds {random[0]}, a random transform; evaluation must repeat")
        check_keys(config["Eval"].get("test_config") or {}, "Eval.test_config", TEST_CONFIG_KEYS)
        check_keys(config.get("Metric") or {}, "Metric", ("name", "main_indicator"))
        check_keys(config.get("PostProcess") or {}, "PostProcess", ("label_list",))
        check_keys(config.get("Export") or {}, "Export", ("input_shape",))
        self.input_shape(config)
        self.build_model(config)  # refuses architecture and loss typos now, not after the data is read
        self.build_loss(config)
        reported = metric_names(self.build_metrics(config))
        if self.main_indicator(config) not in reported:
            raise ConfigError(
                f"Metric.main_indicator {self.main_indicator(config)!r} is not reported; use one of {', '.join(reported)}"
            )

    @staticmethod
    def num_classes(config: dict) -> int:
        value = config["Architecture"]["num_classes"]
        if not isinstance(value, int) or value < 2:
            raise ConfigError(f"Architecture.num_classes is {value!r}; a segmenter needs at least 2 classes")
        return value

    @staticmethod
    def ignore_index(config: dict) -> int:
        return int(config["Train"]["dataset"].get("ignore_index", 255))

    def input_shape(self, config: dict) -> list[int]:
        """``[3, H, W]``: ``Export.input_shape``, or the size of an Eval ``Resize``."""
        shape = (config.get("Export") or {}).get("input_shape")
        if shape is None:
            resize = [t for t in self.transforms(config, "Eval") if isinstance(t, Resize)]
            if not resize:
                raise ConfigError("set Export.input_shape: [3, H, W], the size the model evaluates and serves at")
            shape = [3, resize[-1].size[1], resize[-1].size[0]]
        if not isinstance(shape, list) or len(shape) != 3 or shape[0] != 3 or not all(
            isinstance(s, int) and s > 0 for s in shape
        ):  # fmt: skip
            raise ConfigError(f"Export.input_shape is {shape!r}; give [3, H, W] (RGB images)")
        return shape

    def transforms(self, config: dict, split: str) -> list:
        items = transform_items(config[split]["dataset"].get("transforms"), f"{split}.dataset.transforms")
        return [instantiate({"name": n, **a}, TRANSFORMS, f"{split}.dataset.transforms.{n}") for n, a in items]

    # ----- model, loss, metrics, optimizer -------------------------------------------------
    def build_model(self, config: dict):
        arch = {k: v for k, v in config["Architecture"].items() if k != "num_classes"}
        net = instantiate(arch, MODELS, "Architecture", num_classes=self.num_classes(config))
        test = config["Eval"].get("test_config") or {}
        require_mapping(test, "Eval.test_config")
        return SegInference(net, **test)

    def build_loss(self, config: dict):
        section = config.get("Loss") or {"types": [{"name": "CrossEntropyLoss"}]}
        require_mapping(section, "Loss")
        check_keys(section, "Loss", ("types", "coef"))
        return SegLoss(section.get("types"), section.get("coef"), self.ignore_index(config))

    def build_metrics(self, config: dict) -> list:
        labels = (config.get("PostProcess") or {}).get("label_list")
        section = {
            "name": "SegMetric",
            **{k: v for k, v in (config.get("Metric") or {}).items() if k != "main_indicator"},
        }
        extra = {"num_classes": self.num_classes(config), "ignore_index": self.ignore_index(config)}
        return [instantiate(section, {"SegMetric": SegMetric}, "Metric", label_list=labels, **extra)]

    def main_indicator(self, config: dict) -> str:
        return str((config.get("Metric") or {}).get("main_indicator", "miou"))

    def build_optimizer(self, config: dict, model, steps_per_epoch: int):
        epochs = int((config.get("Global") or {}).get("epochs", 1))
        return build_optimizer(config.get("Optimizer"), model.parameters(), epochs * steps_per_epoch)

    def scheduler_interval(self, config: dict) -> str:
        return "step"

    # ----- data -------------------------------------------------------------------------
    def dataset(self, config: dict, split: str) -> Dataset:
        section = dict(config[split]["dataset"])
        transforms = self.transforms(config, split)
        if split == "Eval":
            _, height, width = self.input_shape(config)
            transforms = [Resize([width, height]), *transforms]
        return Dataset(
            file_list=section[LIST_KEY[split]],
            num_classes=self.num_classes(config),
            dataset_root=section.get("dataset_root", ""),
            transforms=transforms,
            separator=section.get("separator", " "),
            ignore_index=int(section.get("ignore_index", 255)),
        )

    def build_datasets(self, config: dict):
        return self.dataset(config, "Train"), self.dataset(config, "Eval")

    def build_loader_options(self, config: dict, split: str) -> dict:
        loader = dict(config["Train" if split == "train" else "Eval"].get("loader") or {})
        return {
            "batch_size": int(loader.get("batch_size", 4)),
            "shuffle": bool(loader.get("shuffle", split == "train")),
            "drop_last": bool(loader.get("drop_last", split == "train")),
            "num_workers": int(loader.get("num_workers", 0)),
        }

    def eval_samples(self, config: dict):
        """``(image path, label at the model's size)`` per Eval sample; images raw, as served."""
        dataset = self.dataset(config, "Eval")
        for i in range(len(dataset)):
            data = dataset.record(i)
            yield data["path"], np.asarray(data["label"], np.int64)

    # ----- export and serving -----------------------------------------------------------
    def input_spec(self, config: dict) -> list:
        return [InputSpec([None, *self.input_shape(config)], "float32", "image")]

    def preprocess_config(self, config: dict) -> dict:
        _, height, width = self.input_shape(config)
        items = transform_items(config["Eval"]["dataset"].get("transforms"), "Eval.dataset.transforms")
        return {
            "task": self.name,
            "transforms": [{"Resize": {"target_size": [width, height]}}, *({n: a} for n, a in items)],
        }

    def postprocess_config(self, config: dict) -> dict:
        labels = (config.get("PostProcess") or {}).get("label_list")
        return {"task": self.name, "num_classes": self.num_classes(config), "label_list": labels}

    def preprocess(self, pre: dict, raw_inputs: Sequence[Any]) -> list[np.ndarray]:
        items = transform_items(pre["transforms"], "transforms")
        transforms = [instantiate({"name": n, **a}, TRANSFORMS, f"preprocess.{n}") for n, a in items]
        batch = []
        for raw in raw_inputs:
            data = {"img": load_input(raw, "RGB"), "label": None}
            for transform in transforms:
                data = transform(data)
            batch.append(np.asarray(data["img"], np.float32).transpose(2, 0, 1))
        return [np.ascontiguousarray(np.stack(batch))]

    def postprocess(self, post: dict, outputs: Sequence[np.ndarray]) -> list[dict]:
        """Per image PaddleX's ``pred`` (the label map at the model's size, class ids) and the share
        of pixels each present class covers."""
        if not outputs:
            raise DataError("a segmenter's model gave no outputs; export it with `paddlectl export`")
        maps = label_map(outputs[0])
        names = post.get("label_list") or [str(i) for i in range(int(post["num_classes"]))]
        results = []
        for labels in maps:
            counts = np.bincount(labels.ravel(), minlength=len(names))
            classes = [
                {"cls_id": int(c), "label": names[c] if c < len(names) else str(c), "area": float(n / labels.size)}
                for c, n in enumerate(counts)
                if n
            ]
            results.append({"pred": labels.astype(int).tolist(), "classes": classes})
        return results

    def visualize(self, post: dict, raw_input, prediction: dict, out_dir, stem: str, weight: float = 0.6) -> dict:
        """The label map, palette PNG and overlay of one prediction at the input image's own size
        (``paddlectl seg predict``; a hook for ``paddlectl predict`` to call)."""
        return write_visuals(load_input(raw_input, "RGB"), prediction["pred"], out_dir, stem, weight)
