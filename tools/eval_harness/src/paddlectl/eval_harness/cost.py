"""Cost per 1k predictions from the config's cost model and the measured throughput."""

from __future__ import annotations

from .settings import CostModel


def cost_per_1k(model: CostModel, throughput_per_s: float) -> float:
    """Machine time for 1000 predictions at ``throughput_per_s``, plus token charges when configured.

    Infinite when nothing succeeded: a model that cannot answer has no finite price.
    """
    if throughput_per_s <= 0:
        return float("inf")
    machine = model.machine_price_per_hour / 3600.0 * 1000.0 / throughput_per_s
    tokens = 0.0
    if model.price_per_1k_tokens is not None:
        tokens = model.price_per_1k_tokens * (model.tokens_per_prediction or 0.0)
    return machine + tokens
