"""``Eval.harness``: the harness's section of the shared experiment config, validated and typed.

The experiment YAML is read by ``paddlectl.framework.config`` (so ``-o Eval.harness.repeats=200``
and nearest-key suggestions behave as everywhere else); this module owns the keys of the
``Eval.harness`` section, their defaults and their meaning.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from paddlectl.framework.config import OPEN, validate
from paddlectl.framework.errors import ConfigError

from .cost import CostModel, cost_model

DIRECTIONS = ("higher", "lower")
LATENCY_TESTS = ("mannwhitney", "bootstrap")

_THRESHOLD_SCHEMA = {"direction": str, "absolute": float, "relative": float}
_SCHEMA = {
    "batch_sizes": list,
    "warmup": int,
    "repeats": int,
    "rounds": int,
    "round_pause_ms": float,
    "max_samples": int,
    "accuracy_batch_size": int,
    "cold_start": bool,
    "threads": int,
    "model_name": str,
    "experiment": str,
    "output_dir": str,
    "tracking_uri": str,
    "max_error_rate": float,
    "cost": {
        "machine": str,
        "prices_file": str,
        "machine_price_per_hour": float,
        "price_per_1k_tokens": float,
        "tokens_per_prediction": float,
    },
    "thresholds": OPEN,
    "latency_gate": {
        "test": str,
        "alpha": float,
        "max_slowdown": float,
        "quantile": float,
        "min_samples": int,
        "resamples": int,
        "batch_size": int,
    },
}


@dataclass(frozen=True)
class Threshold:
    """How far a metric may worsen: ``absolute`` in its own units or ``relative`` to the baseline.

    When both are given the larger allowance wins, so a relative rule on a near-zero baseline
    does not turn rounding noise into a regression.
    """

    metric: str
    direction: str = "higher"
    absolute: float | None = None
    relative: float | None = None

    def allowance(self, baseline: float) -> float:
        parts = [self.absolute or 0.0, (self.relative or 0.0) * abs(baseline)]
        return max(parts)


@dataclass(frozen=True)
class LatencyGate:
    """The statistical test on latency samples; a slowdown must be both significant and large.

    The size of a slowdown is the ratio of a low ``quantile`` of the two samples: load from other
    processes only ever adds time, so the fast end of the distribution is what the model costs
    when it is not disturbed, while a real slowdown moves every request, the fastest included.
    """

    test: str = "mannwhitney"
    alpha: float = 0.01
    max_slowdown: float = 0.2
    quantile: float = 0.25
    min_samples: int = 20
    resamples: int = 2000
    batch_size: int | None = None


@dataclass(frozen=True)
class HarnessSettings:
    batch_sizes: tuple[int, ...] = (1,)
    warmup: int = 5
    repeats: int = 50
    rounds: int = 5
    round_pause_ms: float = 20.0
    max_samples: int | None = None
    accuracy_batch_size: int = 32
    cold_start: bool = True
    threads: int | None = None
    model_name: str | None = None
    experiment: str | None = None
    output_dir: Path = Path("output/eval")
    tracking_uri: str | None = None
    max_error_rate: float = 0.0
    """The largest share of failed inputs ``eval run`` accepts (exit 1 above it); the gate's bar too."""
    cost: CostModel = field(default_factory=CostModel)
    thresholds: tuple[Threshold, ...] = ()
    latency_gate: LatencyGate = field(default_factory=LatencyGate)


def harness_section(config: Mapping[str, Any]) -> dict[str, Any]:
    """The raw ``Eval.harness`` mapping of a loaded experiment config (empty when absent)."""
    section = (config.get("Eval") or {}).get("harness") or {}
    if not isinstance(section, Mapping):
        raise ConfigError(f"config key 'Eval.harness' must be a mapping, got {type(section).__name__}")
    validate({"Eval": {"harness": dict(section)}}, {"Eval": {"harness": _SCHEMA}})
    return dict(section)


def _given(section: Mapping[str, Any]) -> dict[str, Any]:
    """The keys given a value: ``key:`` with nothing after it (YAML null) means the default, as if absent."""
    return {key: value for key, value in section.items() if value is not None}


def _positive(name: str, value: int) -> int:
    if value < 1:
        raise ConfigError(f"config key 'Eval.harness.{name}' must be at least 1, got {value}")
    return value


def _threshold(metric: str, raw: Any) -> Threshold:
    where = f"Eval.harness.thresholds.{metric}"
    if not isinstance(raw, Mapping):
        raise ConfigError(f"config key {where!r} must be a mapping like {{direction: higher, absolute: 0.01}}")
    validate({"Eval": {"harness": {"thresholds": {metric: dict(raw)}}}},
             {"Eval": {"harness": {"thresholds": {metric: _THRESHOLD_SCHEMA}}}})  # fmt: skip
    direction = raw.get("direction", "higher")
    if direction not in DIRECTIONS:
        raise ConfigError(f"config key {where + '.direction'!r} must be 'higher' or 'lower', got {direction!r}")
    if raw.get("absolute") is None and raw.get("relative") is None:
        raise ConfigError(f"config key {where!r} needs 'absolute' or 'relative' (how far {metric} may worsen)")
    for key in ("absolute", "relative"):
        if raw.get(key) is not None and raw[key] < 0:
            raise ConfigError(f"config key {where + '.' + key!r} must be >= 0 (an allowance), got {raw[key]}")
    return Threshold(metric, direction, raw.get("absolute"), raw.get("relative"))


def load_settings(config: Mapping[str, Any]) -> HarnessSettings:
    """Typed settings from a loaded experiment config; ConfigError names the key and the fix."""
    raw = _given(harness_section(config))
    batch_sizes = raw.get("batch_sizes", [1])
    if not batch_sizes or not all(isinstance(b, int) and not isinstance(b, bool) and b >= 1 for b in batch_sizes):
        raise ConfigError(f"config key 'Eval.harness.batch_sizes' must be a list of positive ints, got {batch_sizes!r}")
    gate_raw = _given(raw.get("latency_gate") or {})
    gate = LatencyGate(**gate_raw)
    if gate.test not in LATENCY_TESTS:
        raise ConfigError(
            f"config key 'Eval.harness.latency_gate.test' must be one of {LATENCY_TESTS}, got {gate.test!r}"
        )
    if not 0 < gate.quantile < 1:
        raise ConfigError(f"config key 'Eval.harness.latency_gate.quantile' must be in (0, 1), got {gate.quantile}")
    if not 0 < gate.alpha < 1:
        raise ConfigError(f"config key 'Eval.harness.latency_gate.alpha' must be in (0, 1), got {gate.alpha}")
    thresholds = raw.get("thresholds") or {}
    if not isinstance(thresholds, Mapping):
        raise ConfigError(
            "config key 'Eval.harness.thresholds' must map metric names to {direction, absolute, relative}"
        )
    max_error_rate = float(raw.get("max_error_rate", 0.0))
    if not 0 <= max_error_rate <= 1:
        raise ConfigError(f"config key 'Eval.harness.max_error_rate' must be in [0, 1], got {max_error_rate}")
    global_dir = (config.get("Global") or {}).get("output_dir")
    default_dir = Path(global_dir) / "eval" if global_dir else HarnessSettings.output_dir
    return HarnessSettings(
        batch_sizes=tuple(batch_sizes),
        warmup=max(0, raw.get("warmup", 5)),
        repeats=_positive("repeats", raw.get("repeats", 50)),
        rounds=_positive("rounds", raw.get("rounds", 5)),
        round_pause_ms=max(0.0, float(raw.get("round_pause_ms", 20.0))),
        max_samples=raw.get("max_samples"),
        accuracy_batch_size=_positive("accuracy_batch_size", raw.get("accuracy_batch_size", 32)),
        cold_start=raw.get("cold_start", True),
        threads=_positive("threads", raw["threads"]) if raw.get("threads") is not None else None,
        model_name=raw.get("model_name"),
        experiment=raw.get("experiment"),
        output_dir=Path(raw["output_dir"]) if raw.get("output_dir") else default_dir,
        tracking_uri=raw.get("tracking_uri"),
        max_error_rate=max_error_rate,
        cost=cost_model(_given(raw.get("cost") or {})),
        thresholds=tuple(_threshold(str(m), v) for m, v in thresholds.items()),
        latency_gate=gate,
    )
