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
from paddlectl.framework.jit.saved_model import read_model_dir


class ServedTask:
    """``EvalTask`` over a framework Task, the experiment config and an exported model's processing."""

    def __init__(self, task: Task, config: dict[str, Any], model_dir: Path) -> None:
        meta = read_model_dir(model_dir).meta if Path(model_dir).is_dir() else {}  # an .onnx file carries none
        self.task, self.config = task, config
        self.name = task.name
        self.pre = meta.get("preprocess") or task.preprocess_config(config)
        self.post = meta.get("postprocess") or task.postprocess_config(config)

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
