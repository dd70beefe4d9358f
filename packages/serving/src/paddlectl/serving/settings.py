"""What `paddlectl serve` is told: ``--model NAME=DIR`` pairs and serve.yml, checked before loading.

serve.yml has a ``server`` section (limits every route shares) and ``models.NAME`` sections (how
one model is batched, timed out, queued, backed up, guarded and priced). Every key is checked
against a schema and every value against its range here, so a typo or a zero batch size is a
``ServeConfigError`` naming the key at start-up, never a surprise under load.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

from paddlectl.framework.config import OPEN, load_config, validate
from paddlectl.framework.errors import ConfigError

from .errors import ServeConfigError

NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.\-]{0,63}")
"""Model names: what a URL path segment and a Prometheus label can carry unescaped."""


@dataclass(frozen=True)
class ModelSettings:
    """One model's serving settings (serve.yml ``models.NAME``); the defaults suit a small CPU model."""

    max_batch_size: int = 8
    max_delay_ms: float = 5.0
    timeout_ms: float = 10_000.0
    queue_size: int = 256
    workers: int = 1
    fallback: str | None = None
    breaker: dict | None = None
    checks: dict | None = None
    cost: dict | None = None


@dataclass(frozen=True)
class ServerSettings:
    """Limits shared by every route (serve.yml ``server``)."""

    max_body_bytes: int = 16 * 1024 * 1024
    body_timeout_s: float = 10.0
    max_image_pixels: int = 40_000_000
    shutdown_timeout_s: float = 30.0
    review_queue: str | None = None


@dataclass(frozen=True)
class ServeSettings:
    server: ServerSettings
    models: dict[str, Path]
    per_model: dict[str, ModelSettings] = field(default_factory=dict)

    def model(self, name: str) -> ModelSettings:
        return self.per_model.get(name, ModelSettings())


def _schema(cls) -> dict[str, Any]:
    types = {"int": int, "float": float, "str": str, "dict | None": OPEN, "str | None": str, "int | None": int}
    return {f.name: types[f.type] for f in fields(cls)}


POSITIVE = ("max_batch_size", "queue_size", "workers", "max_body_bytes", "max_image_pixels")
NON_NEGATIVE = ("max_delay_ms", "shutdown_timeout_s")
STRICTLY_POSITIVE_FLOAT = ("timeout_ms", "body_timeout_s")


def _section(cls, raw: Any, where: str):
    try:
        validate(raw or {}, _schema(cls))
    except ConfigError as exc:
        raise ServeConfigError(f"{where}: {exc}") from None
    values = {k: v for k, v in (raw or {}).items() if v is not None}  # `key:` left empty keeps the default
    for key, value in values.items():
        if key in POSITIVE and (isinstance(value, bool) or value < 1):
            raise ServeConfigError(f"{where}.{key} must be an integer >= 1, got {value!r}")
        if key in NON_NEGATIVE and value < 0:
            raise ServeConfigError(f"{where}.{key} must be >= 0, got {value!r}")
        if key in STRICTLY_POSITIVE_FLOAT and value <= 0:
            raise ServeConfigError(f"{where}.{key} must be > 0, got {value!r}")
        if key in ("breaker", "checks", "cost") and not isinstance(value, dict):
            raise ServeConfigError(f"{where}.{key} must be a mapping of settings, got {type(value).__name__}")
    return cls(**values)


def parse_model_args(pairs: list[str]) -> dict[str, Path]:
    """``["digits=out/model", ...]`` -> ``{"digits": Path("out/model")}``, names unique and URL-safe."""
    if not pairs:
        raise ServeConfigError("no model to serve; pass --model NAME=DIR (a directory `paddlectl export` wrote)")
    models: dict[str, Path] = {}
    for pair in pairs:
        name, sep, path = pair.partition("=")
        if not sep or not path:
            raise ServeConfigError(f"--model {pair!r}: write it as NAME=DIR, e.g. --model digits=output/model")
        if not NAME.fullmatch(name):
            raise ServeConfigError(
                f"--model {pair!r}: a model name is 1-64 letters, digits, '_', '.', '-', starting with a letter or digit"
            )
        if name in models:
            raise ServeConfigError(f"--model {name!r} is given twice; each name serves one model")
        if not Path(path).exists():
            raise ServeConfigError(
                f"--model {pair!r}: {path!r} does not exist; pass a directory `paddlectl export` wrote"
            )
        models[name] = Path(path)
    return models


def load_settings(pairs: list[str], config: str | Path | None = None) -> ServeSettings:
    """The checked settings: model paths from ``--model``, the rest from serve.yml (or defaults)."""
    models = parse_model_args(pairs)
    raw: dict[str, Any] = {}
    if config is not None:
        try:
            raw = load_config(config, schema={"server": OPEN, "models": OPEN})
        except ConfigError as exc:
            raise ServeConfigError(f"--config: {exc}") from None
    server = _section(ServerSettings, raw.get("server"), "server")
    sections = raw.get("models") or {}
    if not isinstance(sections, dict):
        raise ServeConfigError(f"models must map model names to their settings, got {type(sections).__name__}")
    per_model = {}
    for name, section in sections.items():
        if name not in models:
            raise ServeConfigError(
                f"models.{name}: no --model {name}=DIR is given; served models are {', '.join(sorted(models))}"
            )
        per_model[name] = _section(ModelSettings, section, f"models.{name}")
    for name, settings in per_model.items():
        fallback = settings.fallback
        if fallback is not None and (fallback == name or fallback not in models):
            raise ServeConfigError(
                f"models.{name}.fallback {fallback!r} must name another served model ({', '.join(sorted(models))}); "
                "serve it too with --model NAME=DIR"
            )
    checked = sorted(name for name, s in per_model.items() if s.checks is not None)
    if checked and server.review_queue is None:
        raise ServeConfigError(
            f"models {checked} have output checks but server.review_queue is not set; name the JSON-lines file "
            "failed outputs go to, e.g. server: {review_queue: review.jsonl}"
        )
    return ServeSettings(server=server, models=models, per_model=per_model)
