"""A framework ``Task`` (``paddlectl.framework.hapi.task.Task``) served from its exported model.

``paddlectl export`` stores the task's pre/post-processing configs inside the model directory,
and the task computes its metrics from the model's raw outputs with its own Metric objects, so
the number the harness gates on is the number the trainer reported. This adapter binds the
experiment config and those stored configs, giving the harness's ``EvalTask`` view of the task.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from paddlectl.framework.hapi.task import Task, compute_metrics
from paddlectl.framework.jit.saved_model import onnx_metadata_entries, read_model_dir

from .errors import UsageError


def onnx_processing(path: Path) -> dict[str, Any]:
    """The processing configs ``paddlectl export --format onnx`` writes as JSON ``metadata_props``."""
    try:
        import onnx

        props = onnx.load(str(path), load_external_data=False).metadata_props
    except (ImportError, OSError, ValueError):  # the predictor says why it cannot open the file
        return {}
    return onnx_metadata_entries({p.key: p.value for p in props})


def stored_processing(task: Task, model_path: Path) -> tuple[dict, dict] | None:
    """The pre/post-processing ``paddlectl export`` stored in the model for ``task``, or None (a
    ``jit.save`` directory, whose processing if any is not the task's; a foreign ``.onnx`` file)."""
    model_path = Path(model_path)
    meta = read_model_dir(model_path).meta if model_path.is_dir() else onnx_processing(model_path)
    pre, post = meta.get("preprocess"), meta.get("postprocess")
    if isinstance(pre, dict) and pre.get("task") == task.name and isinstance(post, dict):
        return pre, post
    return None


def missing_config(task: Task, model_path: Path, stored: bool) -> str:
    """The one-line error for evaluating without a config: what is missing and where to give it."""
    dataset = f"evaluating {str(model_path)!r} as {task.name} needs a dataset"
    if stored:
        return f"{dataset}, which only a config gives; pass -c CONFIG with an Eval dataset (Eval.dataset)"
    return (
        f"{dataset} and the {task.name} pre/post-processing, and the model carries neither (saved by jit.save, or "
        "an .onnx file not written by paddlectl export); pass -c CONFIG with an Eval dataset and transforms (Eval.dataset, Eval.transforms), or "
        "export it with `paddlectl export -c CONFIG --weights DIR -o OUT`"
    )


class ServedTask:
    """``EvalTask`` over a framework Task, the experiment config and an exported model's processing.

    The processing the model carries wins (it is what serving applies); a model without it
    (``jit.save``, ``.onnx``) takes it from the config, as ``paddlectl export`` would have.
    """

    def __init__(self, task: Task, config: dict[str, Any], model_path: Path, config_given: bool = True) -> None:
        stored = stored_processing(task, model_path)
        if not config_given:
            raise UsageError(missing_config(task, model_path, stored is not None))
        task.check_config(config)
        self.task, self.config = task, config
        self.name = task.name
        self.main_metric = task.main_indicator(config)
        self.processing_from = "model" if stored else "config"
        self.pre, self.post = stored or (task.preprocess_config(config), task.postprocess_config(config))

    def eval_samples(self):
        return self.task.eval_samples(self.config)

    def preprocess(self, raw_inputs: Sequence[Any]) -> list[np.ndarray]:
        return self.task.preprocess(self.pre, raw_inputs)

    def postprocess(self, outputs: list[np.ndarray]) -> list[Any]:
        return self.task.postprocess(self.post, outputs)

    def compute_metrics(self, predictions, labels, outputs: list[np.ndarray]) -> dict[str, float]:
        return compute_metrics(self.task, self.config, outputs, np.asarray(labels))

    def check_prediction(self, prediction: Any) -> str | None:
        """A prediction's ``score`` (and its top-k scores) must be a probability."""
        if not isinstance(prediction, dict):
            return None
        scores = [prediction.get("score"), *(t.get("score") for t in prediction.get("topk", []) if isinstance(t, dict))]
        for score in scores:
            if isinstance(score, int | float) and not (math.isfinite(score) and 0.0 <= score <= 1.0):
                return f"score {score} is not a probability in [0, 1]"
        return None

    def plots(self, predictions, labels, out_dir: Path) -> list[Path]:
        draw = getattr(self.task, "plots", None)
        return list(draw(self.config, predictions, labels, out_dir)) if callable(draw) else []
