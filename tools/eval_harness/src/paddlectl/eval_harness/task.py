"""The view of a task the harness evaluates through, and how a task is found.

``EvalTask`` is bound to one experiment and one exported model: evaluation data, request
pre/post-processing, metrics, format checks and plots, all without arguments beyond the data.
A suite's task follows the framework's ``Task`` protocol (``paddlectl.framework.hapi.task``) and
is adapted by ``served.ServedTask``; an object that already is an ``EvalTask`` (a custom
evaluation) is used as it is. Tasks are found by name through the ``paddlectl.tasks`` entry
points, or as ``module:attribute`` for an unregistered one.
"""

from __future__ import annotations

import importlib
from collections.abc import Iterable, Sequence
from importlib.metadata import entry_points
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

import numpy as np

from paddlectl.framework.hapi.task import Task

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

    def compute_metrics(
        self, predictions: Sequence[Any], labels: Sequence[Any], outputs: list[np.ndarray]
    ) -> dict[str, float]:
        """Accuracy-type metrics over the evaluation set, from the predictions or the raw ``outputs``
        (the model's output arrays stacked over the same inputs, one array per output)."""
        ...

    def check_prediction(self, prediction: Any) -> str | None:
        """A description of what is wrong with one prediction (out-of-range score...), or None."""
        ...

    def plots(self, predictions: Sequence[Any], labels: Sequence[Any], out_dir: Path) -> list[Path]:
        """Task-specific plots written under ``out_dir`` (confusion matrix, PR curve...); may be empty."""
        ...


def load_task(spec: str, config: dict[str, Any], model_dir: Path, config_given: bool = True) -> EvalTask:
    """The task registered as ``spec`` in ``paddlectl.tasks``, or the object at ``module:attribute``.

    A class or factory is called without arguments; a framework ``Task`` is bound to ``config``
    and the processing stored in ``model_dir`` (``config_given`` False: no experiment config was
    found, which such a task cannot be evaluated without); otherwise the object must satisfy
    ``EvalTask``.
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
    if isinstance(task, Task) and not isinstance(task, EvalTask):
        from .served import ServedTask

        return ServedTask(task, without_harness(config), model_dir, config_given)
    if not isinstance(task, EvalTask):
        missing = [m for m in ("name", *_METHODS) if not hasattr(task, m)]
        raise UsageError(f"task {spec!r} does not follow the evaluation Task protocol; it lacks {', '.join(missing)}")
    return task


def without_harness(config: dict[str, Any]) -> dict[str, Any]:
    """The config as the task sees it: ``Eval.harness`` belongs to the harness, not to the task's
    ``Eval`` section (vision.cls checks ``Eval`` against its own keys and would refuse it)."""
    evaluation = {k: v for k, v in (config.get("Eval") or {}).items() if k != "harness"}
    return {**config, "Eval": evaluation} if "Eval" in config else dict(config)


_METHODS = ("eval_samples", "preprocess", "postprocess", "compute_metrics", "check_prediction", "plots")
