"""One evaluation: accuracy over the task's evaluation set, then timed requests per batch size.

Everything measured lands in a ``Report``; nothing here talks to MLflow, so an evaluation is
complete and safe on disk before any tracking store is involved.
"""

from __future__ import annotations

import datetime as dt
import itertools
import operator
import time
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from . import environment
from .checks import batch_problems
from .cost import cost_per_1k
from .errors import UsageError
from .failures import Failures
from .latency import TimedRequests, split_rounds, summarize, time_requests
from .memory import peak_rss_bytes
from .progress import QUIET, Stages
from .report import Report
from .runner import Runner
from .settings import HarnessSettings
from .task import EvalTask
from .threads import limit_threads

ColdStart = Callable[[list[np.ndarray]], dict[str, float]]


@dataclass
class AccuracyPass:
    predictions: list[Any] = field(default_factory=list)
    labels: list[Any] = field(default_factory=list)
    output_rows: list[list[np.ndarray]] = field(default_factory=list)
    """Per model output, the batches of rows that produced a valid prediction."""
    failures: Failures = field(default_factory=Failures)
    total: int = 0
    first_inputs: list[np.ndarray] | None = None


def _request(task: EvalTask, runner: Runner) -> Callable[[Sequence[Any]], tuple[list[np.ndarray], list[Any]]]:
    def request(raw: Sequence[Any]):
        outputs = runner.run(task.preprocess(raw))
        return outputs, task.postprocess(outputs)

    return request


def accuracy_pass(task: EvalTask, runner: Runner, settings: HarnessSettings, stages: Stages = QUIET) -> AccuracyPass:
    """Predict the whole evaluation set; inputs that raise or fail a format check are errors."""
    result = AccuracyPass()
    everything = task.eval_samples()
    total = operator.length_hint(everything) or None
    advance = stages.stage(
        "evaluation set", min(total, settings.max_samples or total) if total else settings.max_samples
    )
    samples = itertools.islice(everything, settings.max_samples)
    request = _request(task, runner)
    while chunk := list(itertools.islice(samples, settings.accuracy_batch_size)):
        raw, labels = [s[0] for s in chunk], [s[1] for s in chunk]
        result.total += len(chunk)
        advance(len(chunk))
        try:
            if result.first_inputs is None:
                result.first_inputs = [np.asarray(a) for a in task.preprocess(raw[:1])]
            outputs, predictions = request(raw)
        except Exception as exc:  # noqa: BLE001 - a batch that raised is counted, the evaluation goes on
            result.failures.add(f"{type(exc).__name__}: {exc}", len(chunk))
            continue
        problems = batch_problems(task, outputs, predictions, len(chunk))
        keep = _scored_rows(outputs, len(chunk), problems)
        if not result.output_rows:
            result.output_rows = [[] for _ in outputs]
        for rows, out in zip(result.output_rows, outputs, strict=True):
            out = np.asarray(out)
            if keep:
                rows.append(out[keep] if _batch_major(out, len(chunk)) else np.atleast_1d(out))
        for i, (prediction, label) in enumerate(zip(predictions, labels, strict=False)):
            if i in problems:
                result.failures.add(problems[i])
            elif i in keep:
                result.predictions.append(prediction)
                result.labels.append(label)
    return result


def _batch_major(output: np.ndarray, batch: int) -> bool:
    return output.ndim > 0 and output.shape[0] == batch


def _scored_rows(outputs: Sequence[np.ndarray], batch: int, problems: dict[int, str]) -> list[int]:
    """The batch rows whose outputs go to the metrics. An output that is not one row per input (a
    detector's NMS rows [N, 6] beside per-image counts) cannot be cut per input: it is kept whole,
    so a batch holding such an output is scored whole or, when one of its inputs failed, not at all."""
    rows = [i for i in range(batch) if i not in problems]
    if problems and not all(_batch_major(np.asarray(out), batch) for out in outputs):
        return []
    return rows


def _raw_pool(task: EvalTask, settings: HarnessSettings) -> list[Any]:
    """Raw inputs the timed requests cycle through (at least one batch of the largest size)."""
    need = max(settings.batch_sizes)
    pool = [s[0] for s in itertools.islice(task.eval_samples(), max(need, 64))]
    if not pool:
        raise UsageError(f"task {task.name!r} yielded no evaluation samples; check its Eval dataset config")
    return pool


def _batcher(pool: list[Any], bs: int) -> Callable[[int], list[Any]]:
    """The i-th request's raw inputs: consecutive samples of the pool, wrapping around."""

    def batch(i: int) -> list[Any]:
        start = (i * bs) % len(pool)
        return [pool[(start + j) % len(pool)] for j in range(bs)]

    return batch


def evaluate(
    task: EvalTask,
    runner: Runner,
    settings: HarnessSettings,
    *,
    model_path: Path,
    config: dict[str, Any],
    cold_start: ColdStart | None = None,
    stages: Stages = QUIET,
) -> tuple[Report, AccuracyPass]:
    """Measure ``runner`` on ``task`` as configured and return the report (not yet written)."""
    with limit_threads(settings.threads):
        return _evaluate(task, runner, settings, model_path, config, cold_start, stages)


def _planned_bytes(runner, inputs) -> int | None:
    """The predictor's own plan for one request's intermediates (None when it has no plan)."""
    planned_bytes = getattr(runner, "planned_bytes", None)
    if planned_bytes is None or inputs is None:
        return None
    return planned_bytes([np.shape(a) for a in inputs])


def _evaluate(task, runner, settings, model_path, config, cold_start, stages) -> tuple[Report, AccuracyPass]:
    acc = accuracy_pass(task, runner, settings, stages)
    metrics: dict[str, float] = {}
    main_metric = getattr(task, "main_metric", None)
    if acc.predictions:
        outputs = [np.concatenate(rows) for rows in acc.output_rows]
        metrics.update({k: float(v) for k, v in task.compute_metrics(acc.predictions, acc.labels, outputs).items()})
        main_metric = main_metric or next(iter(metrics), None)
    pool = _raw_pool(task, settings)
    request = _request(task, runner)

    def check(out: tuple[list[np.ndarray], list[Any]]) -> str | None:
        outputs, predictions = out
        problems = batch_problems(task, outputs, predictions, len(predictions) or 1)
        return next(iter(problems.values()), None)

    timed = {bs: TimedRequests(bs) for bs in settings.batch_sizes}
    rounds = split_rounds(settings.repeats, settings.rounds)
    advance = stages.stage(
        f"latency: {len(rounds)} rounds x batch sizes {', '.join(map(str, settings.batch_sizes))}",
        len(rounds) * len(settings.batch_sizes),
    )
    for r, repeats in enumerate(rounds):
        if r:
            time.sleep(settings.round_pause_ms / 1e3)
        for bs in settings.batch_sizes:
            time_requests(request, _batcher(pool, bs), timed[bs], settings.warmup, repeats, check)
            advance(1)
    samples: dict[str, list[float]] = {}
    failures, total = acc.failures, acc.total
    best_throughput = 0.0
    for bs, result in timed.items():
        samples[str(bs)] = result.samples_ms
        for name, value in summarize(result.samples_ms).items():
            metrics[f"latency_{name}_ms_bs{bs}"] = value
        metrics[f"throughput_bs{bs}"] = result.throughput
        _set_cost(metrics, f"cost_per_1k_bs{bs}", settings, result.throughput)
        best_throughput = max(best_throughput, result.throughput)
        failures.merge(result.failures)
        total += settings.repeats * bs
    metrics["throughput"] = best_throughput
    _set_cost(metrics, "cost_per_1k", settings, best_throughput)
    metrics["error_rate"] = failures.count / total if total else 0.0
    metrics["peak_rss_mb"] = peak_rss_bytes() / 2**20
    planned = _planned_bytes(runner, acc.first_inputs)
    if planned is not None:
        metrics["planned_memory_mb"] = planned / 2**20
    if cold_start is not None and acc.first_inputs is not None:
        stages.stage("cold start (a fresh process to its first prediction)")
        metrics.update({f"cold_start_{k}": v for k, v in cold_start(acc.first_inputs).items()})
    facts = environment.machine_facts()
    report = Report(
        local_id=new_local_id(),
        created_at=dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
        task=task.name,
        model_path=str(model_path),
        model_name=settings.model_name or f"{task.name}.{Path(model_path).stem}",
        experiment=settings.experiment or f"{task.name}/{settings.model_name or Path(model_path).stem}",
        metrics=metrics,
        latency_samples_ms=samples,
        errors=failures.to_dict(total),
        config=config,
        versions=environment.package_versions(),
        git_sha=environment.git_sha(),
        machine=facts,
        fingerprint=environment.fingerprint(facts),
        main_metric=main_metric,
        cost=settings.cost.to_dict(),
    )
    return report, acc


def _set_cost(metrics: dict[str, float], name: str, settings: HarnessSettings, throughput: float) -> None:
    """Record a cost metric only when a machine price is set: an unset price is not a cost of 0."""
    value = cost_per_1k(settings.cost, throughput)
    if value is not None:
        metrics[name] = value


def new_local_id() -> str:
    """Sortable by time, unique across concurrent processes."""
    return dt.datetime.now(dt.UTC).strftime("%Y%m%dT%H%M%S") + "-" + uuid.uuid4().hex[:8]
