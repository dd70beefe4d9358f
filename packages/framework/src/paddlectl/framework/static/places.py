"""``paddle.static.cpu_places`` / ``cuda_places`` / ``xpu_places``: the places a static program may
run on, one per device it spreads over."""

from __future__ import annotations

import os

from ..device import CPUPlace
from ..errors import ConfigError


def cpu_places(device_count: int | None = None) -> list[CPUPlace]:
    """``device_count`` CPU places; by default ``$CPU_NUM`` of them, 1 when it is unset (Paddle's
    default)."""
    if device_count is None:
        text = os.environ.get("CPU_NUM", "1")
        if not text.isdigit() or int(text) < 1:
            raise ConfigError(f"cpu_places: CPU_NUM must be a positive integer, got {text!r}")
        device_count = int(text)
    if isinstance(device_count, bool) or not isinstance(device_count, int) or device_count < 1:
        raise ConfigError(f"cpu_places: device_count must be a positive int, got {device_count!r}")
    return [CPUPlace() for _ in range(device_count)]


def cuda_places(device_ids=None) -> list:
    """No GPU here: an empty list, or a refusal when GPUs are asked for by id."""
    if device_ids:
        raise ConfigError(f"cuda_places: paddlectl runs on the CPU; there is no GPU {device_ids}")
    return []
