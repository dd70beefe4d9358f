"""``paddlectl eval training RUN --baseline BASE``: a training run against its baseline run.

The seed asks that an AMP run be compared with its FP32 baseline: the final value of the task's
main indicator (from each run's ``latest/state.json``; higher is better, as the trainer picks
``best``) and how far the training-loss curves part, both read from the ``Global.output_dir`` a
``paddlectl train`` run leaves. Divergence is the mean, over the steps both runs logged, of
``|loss - baseline loss|`` divided by the baseline's mean loss over those steps.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from paddlectl.framework.hapi.train_log import read_records

from .errors import UsageError

PASS, REGRESSION, INCONCLUSIVE = 0, 1, 3


@dataclass(frozen=True)
class TrainingComparison:
    indicator: str | None
    value: float | None
    baseline_value: float | None
    divergence: float | None
    common_steps: int
    verdict: int
    reason: str


def _run(path: Path) -> tuple[dict, list[dict]]:
    """The run's latest state and its log records; a directory that is no training run is a UsageError."""
    state_file, log_file = path / "latest" / "state.json", path / "metrics.jsonl"
    if not state_file.is_file() or not log_file.is_file():
        raise UsageError(
            f"{path} is not a training run directory (no latest/state.json or metrics.jsonl); "
            "pass the Global.output_dir of a `paddlectl train` run"
        )
    try:
        state = json.loads(state_file.read_text(encoding="utf-8"))
    except (ValueError, UnicodeDecodeError) as exc:
        raise UsageError(f"{state_file} is not valid JSON ({exc}); the run directory is damaged") from None
    if not isinstance(state, dict):
        raise UsageError(f"{state_file} does not hold the trainer's state object")
    return state, read_records(log_file)


def _indicator(state: dict) -> tuple[str | None, float | None]:
    best, last = state.get("best"), state.get("last_eval")
    name = best.get("indicator") if isinstance(best, dict) else None
    value = last.get(name) if isinstance(last, dict) and name else None
    return name, (float(value) if isinstance(value, int | float) else None)


def compare_training(run: Path, baseline: Path, max_metric_drop: float, max_divergence: float) -> TrainingComparison:
    """Judge ``run`` against ``baseline``: REGRESSION past either threshold, INCONCLUSIVE when they
    share no indicator or no logged step."""
    if not (0 <= max_metric_drop and 0 <= max_divergence):
        raise UsageError("--max-metric-drop and --max-divergence must be >= 0")
    (state, records), (base_state, base_records) = _run(Path(run)), _run(Path(baseline))
    name, value = _indicator(state)
    base_name, base_value = _indicator(base_state)
    ours = {r["step"]: r["loss"] for r in records if r.get("kind") == "train" and "loss" in r}
    theirs = {r["step"]: r["loss"] for r in base_records if r.get("kind") == "train" and "loss" in r}
    steps = sorted(ours.keys() & theirs.keys())
    divergence = None
    if steps:
        scale = sum(theirs[s] for s in steps) / len(steps)
        divergence = sum(abs(ours[s] - theirs[s]) for s in steps) / len(steps) / scale if scale else None

    def verdict(code: int, reason: str) -> TrainingComparison:
        return TrainingComparison(name, value, base_value, divergence, len(steps), code, reason)

    if name is None or name != base_name or value is None or base_value is None:
        return verdict(INCONCLUSIVE, f"the runs share no evaluated main indicator ({name!r} vs {base_name!r})")
    if divergence is None:
        return verdict(INCONCLUSIVE, "the runs logged no training loss at the same steps")
    if base_value - value > max_metric_drop:
        return verdict(
            REGRESSION, f"{name} {value:.4f} is {base_value - value:.4f} below the baseline's {base_value:.4f}"
        )
    if divergence > max_divergence:
        return verdict(REGRESSION, f"the loss curves part by {divergence:.3f} (more than {max_divergence})")
    return verdict(PASS, f"{name} within {max_metric_drop} of the baseline and curves within {max_divergence}")
