"""Cost per 1k predictions: a machine price per hour at the measured throughput, plus token charges.

A price comes from a named machine in the shipped table (``data/machine_prices.yml``, each price
with its source and date), from the user's own table (``cost.prices_file``) or from
``cost.machine_price_per_hour``, which overrides both. With no price the cost is "not set" and
no cost metric is recorded, so a gate never compares a made-up 0.
"""

from __future__ import annotations

import difflib
import math
from collections.abc import Mapping
from dataclasses import asdict, dataclass
from importlib.resources import files
from pathlib import Path
from typing import Any

import yaml

from paddlectl.framework.errors import ConfigError

TABLE = "machine_prices.yml"
NOT_SET = "not set: name a machine with Eval.harness.cost.machine or set cost.machine_price_per_hour"


@dataclass(frozen=True)
class CostModel:
    """The price the cost metrics are computed at; ``machine_price_per_hour`` None means not set."""

    machine_price_per_hour: float | None = None
    machine: str | None = None
    currency: str | None = None
    source: str | None = None
    date: str | None = None
    price_per_1k_tokens: float | None = None
    tokens_per_prediction: float | None = None

    def basis(self) -> str:
        """One line saying which price the cost is computed at, and where it comes from."""
        if self.machine_price_per_hour is None:
            return NOT_SET
        price = f"{self.machine_price_per_hour:g} {self.currency or ''}/h".replace(" /h", "/h")
        if self.machine is None:
            return f"{price} (Eval.harness.cost.machine_price_per_hour)"
        origin = f"{self.source}, {self.date}" if self.source else "Eval.harness.cost.machine_price_per_hour"
        return f"{self.machine} at {price} ({origin})"

    def to_dict(self) -> dict[str, Any]:
        return {k: v for k, v in asdict(self).items() if v is not None}


def cost_per_1k(model: CostModel, throughput_per_s: float) -> float | None:
    """Machine time for 1000 predictions at ``throughput_per_s``, plus token charges when configured.

    None when no machine price is set; infinite when nothing succeeded (a model that cannot
    answer has no finite price).
    """
    if model.machine_price_per_hour is None:
        return None
    if throughput_per_s <= 0:
        return math.inf
    machine = model.machine_price_per_hour / 3600.0 * 1000.0 / throughput_per_s
    tokens = 0.0
    if model.price_per_1k_tokens is not None:
        tokens = model.price_per_1k_tokens * (model.tokens_per_prediction or 0.0)
    return machine + tokens


def load_prices(extra: str | Path | None = None) -> dict[str, dict[str, Any]]:
    """The shipped machine price table, with ``extra`` (a YAML file of the same shape) added over it."""
    table = _read(files(__package__).joinpath("data", TABLE).read_text(encoding="utf-8"), f"the shipped {TABLE}")
    if extra is not None:
        try:
            text = Path(extra).read_text(encoding="utf-8")
        except OSError as exc:
            raise ConfigError(
                f"config key 'Eval.harness.cost.prices_file': cannot read {str(extra)!r} ({exc})"
            ) from None
        table.update(_read(text, f"Eval.harness.cost.prices_file {str(extra)!r}"))
    return table


def _read(text: str, what: str) -> dict[str, dict[str, Any]]:
    try:
        data = yaml.safe_load(text) or {}
    except yaml.YAMLError as exc:
        raise ConfigError(f"{what} is not valid YAML: {exc}") from None
    except RecursionError:
        raise ConfigError(f"{what} nests too deeply to read") from None
    if not isinstance(data, Mapping):
        raise ConfigError(f"{what} must map machine names to {{price_per_hour, currency, source, date}}")
    for name, entry in data.items():
        price = entry.get("price_per_hour") if isinstance(entry, Mapping) else None
        if not (isinstance(price, int | float) and not isinstance(price, bool) and price >= 0):
            raise ConfigError(f"{what}: {name!r} needs a price_per_hour >= 0, got {entry!r}")
        if not entry.get("source") or not entry.get("date"):
            raise ConfigError(f"{what}: {name!r} needs a source and a date for its price")
    return {str(name): dict(entry) for name, entry in data.items()}


def cost_model(raw: Mapping[str, Any]) -> CostModel:
    """The ``Eval.harness.cost`` section resolved: a named machine's price unless overridden."""
    name, price = raw.get("machine"), raw.get("machine_price_per_hour")
    entry: dict[str, Any] = {}
    if name is not None:
        table = load_prices(raw.get("prices_file"))
        if name not in table:
            near = difflib.get_close_matches(name, table, n=1)
            hint = f"did you mean {near[0]!r}? " if near else ""
            raise ConfigError(
                f"config key 'Eval.harness.cost.machine': no price for {name!r}; {hint}known: {', '.join(sorted(table))} "
                "(add yours with cost.prices_file, or set cost.machine_price_per_hour)"
            )
        entry = table[name]
    if price is not None and price < 0:
        raise ConfigError(f"config key 'Eval.harness.cost.machine_price_per_hour' must be >= 0, got {price}")
    return CostModel(
        machine_price_per_hour=float(price) if price is not None else entry.get("price_per_hour"),
        machine=name,
        currency=entry.get("currency"),
        source=entry.get("source") if price is None else None,
        date=str(entry["date"]) if price is None and entry else None,
        price_per_1k_tokens=raw.get("price_per_1k_tokens"),
        tokens_per_prediction=raw.get("tokens_per_prediction"),
    )
