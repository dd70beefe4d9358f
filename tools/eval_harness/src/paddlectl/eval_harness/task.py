"""The minimal ``Task`` protocol the harness evaluates through.

Issue #9 moves the shared ``Task`` protocol into ``paddlectl.framework.hapi``; until it exists the
harness declares here the part it needs (evaluation data, pre/post-processing, metrics, format
checks, plots), so a suite's task object satisfies both without adapters. Tasks are found by name
through the ``paddlectl.tasks`` entry points, or as ``module:attribute`` for an unregistered one.
"""

from __future__ import annotations

import importlib
from collections.abc import Iterable, Sequence
from importlib.metadata import entry_points
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

import numpy as np

from .errors import UsageError

TASK_GROUP = "paddlectl.tasks"


@runtime_checkable
class EvalTask(Protocol):
    """What a task supplies so the harness can measure a model the way production serves it.

    A request is ``preprocess`` -> predictor -> ``postprocess``; all three are timed, because a
    slow tokenizer or decoder is as real to a user as a slow matmul.
    """

    name: str

    def eval_samples(self) -> Iterable[tuple[Any, Any]]:
        """The evaluation set as ``(raw_input, label)`` pairs, in a fixed order."""
        ...

    def preprocess(self, raw_inputs: Sequence[Any]) -> list[np.ndarray]:
        """A batch of raw inputs as the model's input arrays (in the model's input order)."""
        ...

    def postprocess(self, outputs: list[np.ndarray]) -> list[Any]:
        """The model's output arrays for a batch as one prediction per input."""
        ...

    def compute_metrics(self, predictions: Sequence[Any], labels: Sequence[Any]) -> dict[str, float]:
        """Accuracy-type metrics over the whole evaluation set."""
        ...

    def check_prediction(self, prediction: Any) -> str | None:
        """A description of what is wrong with one prediction (out-of-range score...), or None."""
        ...

    def plots(self, predictions: Sequence[Any], labels: Sequence[Any], out_dir: Path) -> list[Path]:
        """Task-specific plots written under ``out_dir`` (confusion matrix, PR curve...); may be empty."""
        ...


def load_task(spec: str) -> EvalTask:
    """The task registered as ``spec`` in ``paddlectl.tasks``, or the object at ``module:attribute``.

    A class or factory is called without arguments; the result must satisfy ``EvalTask``.
    """
    if ":" in spec:
        module_name, _, attr = spec.partition(":")
        try:
            obj = getattr(importlib.import_module(module_name), attr)
        except (ImportError, AttributeError) as exc:
            raise UsageError(
                f"task {spec!r} cannot be imported ({exc}); pass a task name or module:attribute"
            ) from None
    else:
        found = {ep.name: ep for ep in entry_points(group=TASK_GROUP)}
        if spec not in found:
            known = ", ".join(sorted(found)) or "none installed"
            raise UsageError(
                f"unknown task {spec!r}; installed tasks: {known}. Install the suite that provides it "
                "or pass --task module:attribute"
            )
        obj = found[spec].load()
    task = obj() if isinstance(obj, type) or (callable(obj) and not isinstance(obj, EvalTask)) else obj
    if not isinstance(task, EvalTask):
        missing = [m for m in ("name", *_METHODS) if not hasattr(task, m)]
        raise UsageError(f"task {spec!r} does not follow the evaluation Task protocol; it lacks {', '.join(missing)}")
    return task


_METHODS = ("eval_samples", "preprocess", "postprocess", "compute_metrics", "check_prediction", "plots")
