"""The base every OCR task (``ocr.det``, ``ocr.rec``, ``ocr.cls``) builds on: PaddleOCR's config layout
on top of the framework's ``TaskBase``, so a PaddleOCR user's config reads the same here.

Sections (PaddleOCR's names and nesting)::

    Architecture: {model_type, algorithm, in_channels, Transform, Backbone, Neck, Head}
    Loss / PostProcess / Metric: {name: ..., ...}
    Optimizer:    {name: Adam, beta1, beta2, clip_norm,
                   lr: {name: Cosine | Piecewise | Linear | Const, learning_rate, warmup_epoch, ...},
                   regularizer: {name: L2 | L1, factor}}
    Train/Eval:   {dataset: {name: SimpleDataSet, data_dir, label_file_list, delimiter,
                             transforms: [{DecodeImage: {...}}, {CTCLabelEncode: {...}}, ..., {KeepKeys: {...}}]},
                   loader: {batch_size_per_card, shuffle, drop_last, num_workers}}

``Global`` is the framework's (``epochs``, ``output_dir`` ...): the trainer reads it. A task subclass
fills the registries (backbones, necks, heads, losses, metrics, post-processing, data operators,
datasets) and the few hooks that differ between det, rec and cls; everything else is here.
Learning-rate schedules are per step, as PaddleOCR's are.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from paddlectl.framework import nn
from paddlectl.framework import optimizer as optim
from paddlectl.framework.errors import ConfigError, DataError
from paddlectl.framework.hapi.builders import accepted_kwargs, check_keys, instantiate, require_mapping, resolve
from paddlectl.framework.hapi.task import TaskBase, metric_names
from paddlectl.framework.io import Dataset
from paddlectl.framework.optimizer import clip, lr
from paddlectl.framework.optimizer.regularizer import L1Decay, L2Decay
from paddlectl.framework.vision.image_io import as_mode, read_image
from paddlectl.framework.vision.task import _transform_items as transform_items

ARCHITECTURE_KEYS = ("model_type", "algorithm", "in_channels", "Transform", "Backbone", "Neck", "Head")
SPLIT_KEYS = ("dataset", "loader")
LOADER_KEYS = ("batch_size_per_card", "shuffle", "drop_last", "num_workers", "use_shared_memory")
LR_KEYS = ("name", "learning_rate", "warmup_epoch", "decay_epochs", "values", "end_lr", "power")
REGULARIZERS = {"L2": L2Decay, "L1": L1Decay}


def operator_items(items: Any, where: str) -> list[tuple[str, dict]]:
    """``[{DecodeImage: {img_mode: BGR}}, {KeepKeys: null}]`` -> ``[(name, args), ...]``, checked the
    way ``vision.cls`` checks its transform lists (the same list-of-one-key-mappings shape)."""
    return [(str(name), args) for name, args in transform_items(items, where)]


def build_operators(steps: list[tuple[str, dict]], registry: Mapping[str, Any], where: str, context: dict) -> list:
    """The data operators, each given the keys of ``context`` its constructor accepts (PaddleOCR hands
    every operator the global settings, such as the dictionary, the same way)."""
    ops = []
    for name, args in steps:
        factory = registry.get(name)
        allowed = accepted_kwargs(factory) if factory is not None else []
        extra = {k: v for k, v in context.items() if k not in args and (allowed is None or k in allowed)}
        ops.append(instantiate({"name": name, **args}, registry, f"{where}.{name}", **extra))
    return ops


def run_operators(data: dict, ops: Sequence[Callable]) -> dict | None:
    """``data`` through every operator; None when one drops the sample (a label too long ...)."""
    for op in ops:
        data = op(data)
        if data is None:
            return None
    return data


def load_image(raw, img_mode: str) -> np.ndarray:
    """An image file decoded to HxWx3 uint8 in ``img_mode`` (``BGR``, PaddleOCR's default, or
    ``RGB``); an array is taken to be in that order already, as PaddleOCR's predictors take the
    BGR arrays cv2 gives, and is only checked (grey or RGBA become three channels)."""
    if not isinstance(raw, str | os.PathLike):
        return np.ascontiguousarray(as_mode(raw, "RGB"))  # "RGB" keeps the channel order
    image = read_image(raw, "RGB")
    return np.ascontiguousarray(image[:, :, ::-1]) if img_mode == "BGR" else image


class DecodeImage:
    """The image file at ``data['img_path']`` (or an array in ``data['image']``) as HWC uint8."""

    def __init__(self, img_mode: str = "BGR", channel_first: bool = False) -> None:
        if img_mode not in ("BGR", "RGB"):
            raise ConfigError(f"DecodeImage.img_mode is {img_mode!r}; use BGR or RGB")
        if channel_first:
            raise ConfigError("DecodeImage.channel_first: true is not supported; the resize operators take HWC")
        self.img_mode = img_mode

    def __call__(self, data: dict) -> dict:
        raw = data["image"] if data.get("image") is not None else data["img_path"]
        data["raw"] = raw  # what serving is given for this sample (eval_samples)
        data["image"] = load_image(raw, self.img_mode)
        return data


class KeepKeys:
    """The sample as the tuple of ``keep_keys`` (the trainer takes ``(image, label)``)."""

    def __init__(self, keep_keys: Sequence[str] = ("image", "label")) -> None:
        if not isinstance(keep_keys, list | tuple) or not keep_keys:
            raise ConfigError(f"KeepKeys.keep_keys must be a list of names, got {keep_keys!r}")
        self.keep_keys = list(keep_keys)

    def __call__(self, data: dict) -> tuple:
        missing = [k for k in self.keep_keys if k not in data]
        if missing:
            raise ConfigError(f"KeepKeys: no {missing[0]!r} in the sample; it has {', '.join(sorted(data))}")
        return tuple(data[k] for k in self.keep_keys)


def read_label_lines(path: Path, delimiter: str, check_label: Callable[[str], None]) -> list[tuple[str, str, str]]:
    """``(image name, label, "file:line")`` for each non-empty line of a label file; a line without the
    delimiter or with a label ``check_label`` refuses is a DataError naming the file and line."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise DataError(f"label file {str(path)!r} does not exist; check label_file_list") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise DataError(f"cannot read label file {str(path)!r} ({exc}); it must be UTF-8 text") from None
    rows = []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        where = f"{path}:{number}"
        name, sep, label = line.partition(delimiter)
        if not sep or not name.strip():
            raise DataError(f"{where}: expected 'image{delimiter!r}label', got {line[:80]!r}")
        try:
            check_label(label)
        except ValueError as exc:
            raise DataError(f"{where}: {exc}") from None
        rows.append((name.strip(), label, where))
    return rows


class SimpleDataSet(Dataset):
    """PaddleOCR's ``SimpleDataSet``: label files of ``image<TAB>label`` lines, images under ``data_dir``.

    A sample an operator drops (None) is replaced by the next one, as PaddleOCR replaces it by
    another; a set where every sample is dropped is a DataError.
    """

    def __init__(
        self,
        label_file_list: Sequence[str] | str,
        data_dir: str = "",
        transforms: Sequence[Callable] = (),
        delimiter: str = "\t",
        check_label: Callable[[str], None] = lambda label: None,
        ratio_list: Sequence[float] | float = 1.0,
    ) -> None:
        files = [label_file_list] if isinstance(label_file_list, str) else list(label_file_list)
        if not files:
            raise DataError("label_file_list is empty; name at least one label file")
        ratios = [ratio_list] * len(files) if isinstance(ratio_list, int | float) else list(ratio_list)
        if len(ratios) != len(files) or not all(0 < r <= 1 for r in ratios):
            raise ConfigError(f"ratio_list {ratio_list!r} must hold one fraction in (0, 1] per label file")
        self.data_dir = Path(data_dir)
        self.ops = list(transforms)
        self.rows: list[tuple[str, str, str]] = []
        for file, ratio in zip(files, ratios, strict=True):
            rows = read_label_lines(Path(file), delimiter, check_label)
            self.rows += rows[: max(1, round(len(rows) * ratio))] if rows else []
        if not self.rows:
            raise DataError(f"label files {files} hold no samples")
        for name, _, where in self.rows:
            if not (self.data_dir / name).is_file():
                raise DataError(f"{where}: image {str(self.data_dir / name)!r} does not exist; check data_dir")
        self.rows = self.samples(self.rows)

    def samples(self, rows: list[tuple[str, str, str]]) -> list[tuple[str, str, str]]:
        """The samples the label lines make (one each here; a subclass may make several)."""
        return rows

    def __len__(self) -> int:
        return len(self.rows)

    def record(self, index: int) -> dict:
        """Sample ``index`` (or the next one kept) as the operators' dict, before KeepKeys."""
        for offset in range(len(self.rows)):
            name, label, where = self.rows[(index + offset) % len(self.rows)]
            data = {"img_path": str(self.data_dir / name), "label": label, "source": where}
            ops = self.ops[:-1] if self.ops and isinstance(self.ops[-1], KeepKeys) else self.ops
            data = run_operators(data, ops)
            if data is not None:
                return data
        raise DataError("every sample was dropped by the transforms (labels longer than max_text_length?)")

    def __getitem__(self, index: int):
        data = self.record(index)
        return self.ops[-1](data) if self.ops and isinstance(self.ops[-1], KeepKeys) else data


class OcrModel(nn.Layer):
    """PaddleOCR's ``BaseModel``: optional Transform, Backbone, optional Neck, Head, in that order."""

    def __init__(self, backbone, head, transform=None, neck=None) -> None:
        super().__init__()
        self.transform, self.backbone, self.neck, self.head = transform, backbone, neck, head

    def forward(self, x):
        if self.transform is not None:
            x = self.transform(x)
        x = self.backbone(x)
        if self.neck is not None:
            x = self.neck(x)
        return self.head(x)


class OcrTaskBase(TaskBase):
    """What det, rec and cls share. A subclass sets ``name``, ``model_type``, the registries and
    ``LABEL_OPS`` (operators that need a label, dropped when serving), and writes ``head_kwargs``,
    ``check_label``, ``postprocess_config``, ``postprocess`` and any extra checks."""

    model_type = ""
    BACKBONES: Mapping[str, Any] = {}
    NECKS: Mapping[str, Any] = {}
    HEADS: Mapping[str, Any] = {}
    TRANSFORMS: Mapping[str, Any] = {}  # Architecture.Transform (rectification networks)
    LOSSES: Mapping[str, Any] = {}
    METRICS: Mapping[str, Any] = {}
    DATA_OPS: Mapping[str, Any] = {"DecodeImage": DecodeImage, "KeepKeys": KeepKeys}
    DATASETS: Mapping[str, Any] = {"SimpleDataSet": SimpleDataSet}
    LABEL_OPS: tuple[str, ...] = ()
    SAMPLERS: Mapping[str, Any] = {}  # Train.sampler: how training batches are grouped (rec: by width)

    # ----- hooks ------------------------------------------------------------------------
    def head_kwargs(self, config: dict) -> dict:
        """Extra head arguments the config implies (a recogniser's class count from its dictionary)."""
        return {}

    def op_context(self, config: dict) -> dict:
        """Settings every data operator may take (PaddleOCR's global_config): the dictionary ..."""
        return {}

    def check_label(self, label: str) -> None:
        """Raise ValueError for a label the task cannot read (det: malformed JSON)."""

    # ----- config -----------------------------------------------------------------------
    def check_config(self, config: dict) -> None:
        arch = config.get("Architecture")
        if not arch:
            raise ConfigError(f"config needs an Architecture section (model_type: {self.model_type}, Backbone, Head)")
        check_keys(arch, "Architecture", ARCHITECTURE_KEYS)
        if arch.get("model_type") != self.model_type:
            raise ConfigError(
                f"Architecture.model_type is {arch.get('model_type')!r}; task {self.name} trains model_type "
                f"{self.model_type!r}"
            )
        for split in ("Train", "Eval"):
            section = config.get(split)
            if not section or "dataset" not in section:
                raise ConfigError(
                    f"config section {split!r} needs a dataset, e.g. {split}.dataset: {{name: SimpleDataSet}}"
                )
            extra = {"Eval": ("harness",), "Train": ("sampler",) if self.SAMPLERS else ()}[split]
            check_keys(section, split, SPLIT_KEYS + extra)
            require_mapping(section["dataset"], f"{split}.dataset")
            check_keys(section.get("loader") or {}, f"{split}.loader", LOADER_KEYS)
            self.operators(config, split)
        self.optimizer_settings(config)
        main = self.main_indicator(config)
        names = metric_names(self.build_metrics(config))
        if main not in names:
            raise ConfigError(f"Metric.main_indicator {main!r} is not a metric name; choose from {', '.join(names)}")
        self.build_loss(config)
        self.build_model(config)  # refuses architecture typos now, not after the data is read

    # ----- model, loss, metrics -----------------------------------------------------------
    def build_model(self, config: dict):
        arch = config.get("Architecture") or {}
        in_channels = arch.get("in_channels", 3)
        part = None
        if arch.get("Transform"):
            part = instantiate(arch["Transform"], self.TRANSFORMS, "Architecture.Transform", in_channels=in_channels)
            in_channels = part.out_channels
        transform = part
        if not arch.get("Backbone"):
            raise ConfigError(f"Architecture.Backbone is missing; choose from {', '.join(sorted(self.BACKBONES))}")
        backbone = instantiate(arch["Backbone"], self.BACKBONES, "Architecture.Backbone", in_channels=in_channels)
        channels = backbone.out_channels
        neck = None
        if arch.get("Neck"):
            neck = instantiate(arch["Neck"], self.NECKS, "Architecture.Neck", in_channels=channels)
            channels = neck.out_channels
        if not arch.get("Head"):
            raise ConfigError(f"Architecture.Head is missing; choose from {', '.join(sorted(self.HEADS))}")
        head = instantiate(
            arch["Head"], self.HEADS, "Architecture.Head", in_channels=channels, **self.head_kwargs(config)
        )
        return OcrModel(backbone, head, transform, neck)

    def build_loss(self, config: dict):
        return instantiate(config.get("Loss") or {}, self.LOSSES, "Loss")

    def build_metrics(self, config: dict) -> list:
        return [instantiate(config.get("Metric") or {}, self.METRICS, "Metric", **self.metric_kwargs(config))]

    def metric_kwargs(self, config: dict) -> dict:
        """Extra metric arguments (a recogniser's metric decodes with the dictionary)."""
        return {}

    # ----- optimizer (PaddleOCR's spelling) -------------------------------------------------
    def optimizer_settings(self, config: dict) -> tuple[dict, dict, dict | None]:
        """``(optimizer keys, lr section, regularizer section)`` of ``Optimizer``, checked."""
        section = dict(config.get("Optimizer") or {"name": "Adam"})
        require_mapping(section, "Optimizer")
        lr_section = dict(section.pop("lr", None) or {})
        check_keys(lr_section, "Optimizer.lr", LR_KEYS)
        if lr_section.get("name", "Const") not in SCHEDULES:
            raise ConfigError(
                f"Optimizer.lr.name is {lr_section.get('name')!r}; choose from {', '.join(sorted(SCHEDULES))}"
            )
        regularizer = section.pop("regularizer", None)
        if regularizer is not None:
            check_keys(regularizer, "Optimizer.regularizer", ("name", "factor"))
            if regularizer.get("name") not in REGULARIZERS:
                raise ConfigError(f"Optimizer.regularizer.name is {regularizer.get('name')!r}; choose L2 or L1")
        if "learning_rate" in section:
            raise ConfigError("Optimizer.learning_rate: PaddleOCR puts it in Optimizer.lr.learning_rate; move it there")
        return section, lr_section, regularizer

    def build_optimizer(self, config: dict, model, steps_per_epoch: int):
        section, lr_section, regularizer = self.optimizer_settings(config)
        epochs = int((config.get("Global") or {}).get("epochs") or 1)
        scheduler = build_schedule(lr_section, epochs, steps_per_epoch)
        base = float(lr_section.get("learning_rate", 0.001))
        clip_norm = section.pop("clip_norm", None)
        extra = {
            "learning_rate": scheduler if scheduler is not None else base,
            "parameters": model.parameters(),
            "grad_clip": clip.ClipGradByGlobalNorm(float(clip_norm)) if clip_norm is not None else None,
        }
        if regularizer is not None:
            extra["weight_decay"] = REGULARIZERS[regularizer["name"]](float(regularizer.get("factor", 0.0)))
        optimizers = {n: c for n, c in vars(optim).items() if isinstance(c, type) and issubclass(c, optim.Optimizer)}
        optimizer = instantiate({"name": "Adam", **section}, optimizers, "Optimizer", **extra)
        return optimizer, scheduler

    def scheduler_interval(self, config: dict) -> str:
        return "step"

    # ----- data -------------------------------------------------------------------------
    def operators(self, config: dict, split: str) -> list:
        steps = operator_items(config[split]["dataset"].get("transforms"), f"{split}.dataset.transforms")
        return build_operators(steps, self.DATA_OPS, f"{split}.dataset.transforms", self.op_context(config))

    def dataset(self, config: dict, split: str):
        section = dict(config[split]["dataset"])
        section.pop("transforms", None)
        extra = {"transforms": self.operators(config, split), "check_label": self.check_label}
        where = f"{split}.dataset"
        factory = resolve(section.pop("name", "SimpleDataSet"), self.DATASETS, where)
        check_keys(section, where, [k for k in accepted_kwargs(factory) or section if k not in extra])
        try:
            return factory(**section, **extra)  # a DataError (a bad label line) stays one
        except TypeError as exc:
            raise ConfigError(f"{where}: {exc}") from None

    def build_datasets(self, config: dict):
        return self.dataset(config, "Train"), self.dataset(config, "Eval")

    def build_loader_options(self, config: dict, split: str) -> dict:
        loader = dict((config["Train" if split == "train" else "Eval"].get("loader")) or {})
        loader.pop("use_shared_memory", None)
        return {
            "batch_size": loader.pop("batch_size_per_card", 32),
            "shuffle": loader.pop("shuffle", split == "train"),
            "drop_last": loader.pop("drop_last", False),
            "num_workers": loader.pop("num_workers", 0),
        }

    def eval_samples(self, config: dict):
        """``(raw image, label)`` per Eval sample: the label as training encodes it, the image as
        serving receives it (``data['raw']``: its path, or an array an operator made), so evaluation
        through ``preprocess`` measures the model as it is served."""
        dataset = self.dataset(config, "Eval")
        keep = (
            dataset.ops[-1].keep_keys if dataset.ops and isinstance(dataset.ops[-1], KeepKeys) else ["image", "label"]
        )
        for i in range(len(dataset)):
            data = dataset.record(i)
            yield data.get("raw", data["img_path"]), data[keep[1]]

    # ----- serving ------------------------------------------------------------------------
    def serving_steps(self, config: dict) -> list[dict]:
        """``Eval.dataset.transforms`` without the label operators and KeepKeys: what serving runs."""
        steps = operator_items(config["Eval"]["dataset"].get("transforms"), "Eval.dataset.transforms")
        return [{n: a} for n, a in steps if n not in (*self.LABEL_OPS, "KeepKeys")]

    def preprocess_config(self, config: dict) -> dict:
        return {"task": self.name, "transforms": self.serving_steps(config)}

    def preprocess(self, pre: dict, raw_inputs: Sequence[Any]) -> list[np.ndarray]:
        steps = operator_items(pre["transforms"], "transforms")
        ops = build_operators(steps, self.DATA_OPS, "preprocess", {})
        batch = []
        for raw in raw_inputs:
            path = isinstance(raw, str | os.PathLike)
            data = run_operators({"img_path": str(raw) if path else None, "image": None if path else raw}, ops)
            batch.append(np.asarray(data["image"], dtype="float32"))
        shapes = {a.shape for a in batch}
        if len(shapes) > 1:
            raise DataError(f"pre-processing gave images of several shapes {sorted(shapes)}; the model takes one")
        return [np.stack(batch)]


def _cosine(section: dict, total: int, steps: int):
    return lr.CosineAnnealingDecay(float(section["learning_rate"]), T_max=max(1, total))


def _piecewise(section: dict, total: int, steps: int):
    values, epochs = section.get("values"), section.get("decay_epochs")
    if not isinstance(values, list) or not isinstance(epochs, list) or len(values) != len(epochs) + 1:
        raise ConfigError("Optimizer.lr (Piecewise) needs decay_epochs [e1, ...] and one more value in values")
    return lr.PiecewiseDecay([int(e) * steps for e in epochs], [float(v) for v in values])


def _linear(section: dict, total: int, steps: int):
    end, power = float(section.get("end_lr", 0.0)), float(section.get("power", 1.0))
    return lr.PolynomialDecay(float(section["learning_rate"]), max(1, total), end, power)


SCHEDULES = {"Const": None, "Cosine": _cosine, "Piecewise": _piecewise, "Linear": _linear}


def build_schedule(section: dict, epochs: int, steps_per_epoch: int):
    """PaddleOCR's per-step schedules: Cosine over the run, Piecewise at epoch boundaries, Linear
    (polynomial) decay, or a constant (None); ``warmup_epoch`` ramps up from 0 first."""
    section = {"learning_rate": 0.001, **section}
    name = section.get("name", "Const")
    base = float(section["learning_rate"])
    warmup = round(float(section.get("warmup_epoch", 0)) * steps_per_epoch)
    make = SCHEDULES[name]
    try:
        schedule = make(section, epochs * steps_per_epoch - warmup, steps_per_epoch) if make else None
        return (
            lr.LinearWarmup(schedule if schedule is not None else base, warmup, 0.0, base) if warmup > 0 else schedule
        )
    except (TypeError, ValueError) as exc:
        raise ConfigError(f"Optimizer.lr ({name}): {exc}") from None


__all__ = [
    "DecodeImage",
    "KeepKeys",
    "OcrModel",
    "OcrTaskBase",
    "SimpleDataSet",
    "build_schedule",
    "load_image",
    "operator_items",
    "read_label_lines",
    "run_operators",
]
