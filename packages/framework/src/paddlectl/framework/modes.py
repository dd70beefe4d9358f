"""Execution-mode switches: paddlectl is always in dynamic (eager) mode.

Static graphs come from ``paddle.jit.to_static``, so ``enable_static`` raises and points there
rather than silently changing what every later call means.
"""

from __future__ import annotations

from .device import set_device


def in_dynamic_mode() -> bool:
    return True


def enable_static() -> None:
    raise RuntimeError(
        "paddle.enable_static(): paddlectl runs in dynamic mode only; to get a static graph, decorate the "
        "model or function with paddle.jit.to_static (and export it with paddle.jit.save)"
    )


def disable_static(place=None) -> None:
    """Already dynamic: accept the call (and a CPU place) so scripts that switch back keep working."""
    if place is not None:
        set_device(place)
