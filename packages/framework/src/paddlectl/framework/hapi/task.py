"""The ``Task`` protocol: what a suite supplies so the trainer, exporter, predictor and eval harness work.

A task is one object registered under a name (``vision.cls``, ``ocr.rec`` ...) in the entry-point
group ``paddlectl.tasks``. It is stateless: every method receives what it needs, so one object
serves ``train`` (the whole experiment config), ``export`` (the config, once) and ``predict``
(only the plain-dict processing configs stored inside the exported model, so no config file is
needed to serve a model). Keeping it small lets every suite implement it without adapters.

Life of a model through the protocol::

    check_config(config)                      # refuse typos in the task's own sections
    build_model / build_datasets / build_loss / build_metrics / build_optimizer   # train
    input_spec(config), preprocess_config(config), postprocess_config(config)      # export
    export_extras(config, model, directory)   # optional: files served beside the program (an ANN index)
    preprocess(pre, raw_inputs) -> arrays -> model -> postprocess(post, outputs)  # predict
    eval_samples(config) + compute_metrics(task, config, outputs, labels)         # evaluate

``TaskBase`` gives the parts that do not depend on the task (optimizer and scheduler from the
``Optimizer`` section, checking a section's keys against a constructor's signature); suites
subclass it and write the rest.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any, Protocol, runtime_checkable

import numpy as np

from ..io import BatchSampler
from .builders import build_optimizer

Config = dict[str, Any]


@runtime_checkable
class Task(Protocol):
    """One task (image classification, text recognition ...): the contract between a suite and paddlectl."""

    name: str
    """The registered name, e.g. ``"vision.cls"``; an exported model records it."""

    def check_config(self, config: Config) -> None:
        """Raise ``ConfigError`` (naming the nearest valid key) for anything wrong in the task's sections.

        Called before anything is built, so a typo costs a second, not a training run.
        """
        ...

    def build_model(self, config: Config):
        """The network (a ``paddle.nn.Layer``) described by ``Architecture``."""
        ...

    def build_datasets(self, config: Config):
        """``(train, eval)`` ``paddle.io.Dataset`` objects from ``Train``/``Eval``; items are ``(input, label)``."""
        ...

    def build_loader_options(self, config: Config, split: str) -> dict:
        """DataLoader keyword arguments (batch_size, shuffle, drop_last, num_workers) for ``"train"``/``"eval"``."""
        ...

    def build_loss(self, config: Config):
        """A callable ``loss(output, label) -> scalar Tensor`` from ``Loss``."""
        ...

    def build_metrics(self, config: Config) -> list:
        """Fresh ``paddle.metric.Metric`` objects from ``Metric``; see ``main_indicator``."""
        ...

    def main_indicator(self, config: Config) -> str:
        """The metric name (one of the names the metrics report) that decides the ``best/`` checkpoint."""
        ...

    def build_optimizer(self, config: Config, model, steps_per_epoch: int):
        """``(optimizer, scheduler or None)`` from ``Optimizer``; the trainer steps the scheduler
        once per epoch or per step as ``scheduler_interval(config)`` says."""
        ...

    def scheduler_interval(self, config: Config) -> str:
        """``"epoch"`` or ``"step"``: when the trainer calls ``scheduler.step()``."""
        ...

    def train_batch_sampler(self, config: Config, dataset, options: dict):
        """The training batches' sampler, built once: each iteration draws one epoch's index lists
        (``TaskBase``: ``BatchSampler``)."""
        ...

    def train_collate_fn(self, config: Config):
        """The training batches' ``collate_fn``, or None for the DataLoader's default."""
        ...

    def input_spec(self, config: Config) -> list:
        """``paddle.static.InputSpec`` per model input, with a symbolic batch dim, for export."""
        ...

    def preprocess_config(self, config: Config) -> dict:
        """JSON-able description of ``preprocess``; stored in the exported model's metadata."""
        ...

    def postprocess_config(self, config: Config) -> dict:
        """JSON-able description of ``postprocess`` (label names, top-k ...); stored beside it."""
        ...

    def preprocess(self, pre: dict, raw_inputs: Sequence[Any]) -> list[np.ndarray]:
        """Raw inputs (file paths or arrays, as a user has them) -> the model's input arrays, batched."""
        ...

    def postprocess(self, post: dict, outputs: Sequence[np.ndarray]) -> list[dict]:
        """The model's output arrays for a batch -> one JSON-able prediction per input."""
        ...

    def eval_samples(self, config: Config) -> Iterable[tuple[Any, Any]]:
        """The evaluation split as ``(raw_input, label)`` pairs in a fixed order; raw inputs are
        what ``preprocess`` takes, so evaluation measures the model the way it is served."""
        ...


class TaskBase:
    """Task-independent parts of the protocol; a suite's task subclasses it and adds the rest."""

    name = ""

    def build_optimizer(self, config: Config, model, steps_per_epoch: int):
        return build_optimizer(config.get("Optimizer") or {}, model.parameters())

    def scheduler_interval(self, config: Config) -> str:
        return str(((config.get("Optimizer") or {}).get("lr") or {}).get("interval", "epoch"))

    def main_indicator(self, config: Config) -> str:
        return str((config.get("Metric") or {}).get("main_indicator") or metric_names(self.build_metrics(config))[0])

    def train_batch_sampler(self, config: Config, dataset, options: dict):
        """The training batches, built once, each pass drawing an epoch's order from the seeded global generator:
        ``BatchSampler`` over ``build_loader_options(config, "train")`` here; a task may group its
        samples (the OCR recogniser batches lines of similar width)."""
        o = options
        return BatchSampler(dataset, shuffle=o["shuffle"], batch_size=o["batch_size"], drop_last=o["drop_last"])

    def train_collate_fn(self, config: Config):
        """The training batches' ``collate_fn`` (None: the DataLoader's default, stacking)."""
        return None


def metric_names(metrics: list) -> list[str]:
    """Every name the metrics report (a Metric may report several, e.g. acc_top1 and acc_top5)."""
    names: list[str] = []
    for metric in metrics:
        name = metric.name()
        names.extend(name if isinstance(name, list | tuple) else [name])
    return names


def compute_metrics(task: Task, config: Config, outputs: Sequence[np.ndarray], labels: np.ndarray) -> dict[str, float]:
    """Every metric of ``task`` over a whole evaluation set: ``outputs`` are the model's output
    arrays (stacked over the set, in output order), ``labels`` the matching labels.

    The trainer's evaluation and the eval harness both come through the task's own Metric
    objects, so the number in ``best/`` and the number the harness gates on agree.
    """
    results: dict[str, float] = {}
    for metric in task.build_metrics(config):
        metric.reset()
        state = metric.compute(*[np.asarray(o) for o in outputs], np.asarray(labels))
        state = state if isinstance(state, list | tuple) else [state]
        metric.update(*[s.numpy() if hasattr(s, "numpy") else s for s in state])
        names, values = metric.name(), metric.accumulate()
        names = names if isinstance(names, list | tuple) else [names]
        values = values if isinstance(values, list | tuple) else [values]
        results.update({n: float(v) for n, v in zip(names, values, strict=True)})
    return results
