"""Execution-mode switches: dynamic (eager) by default; ``paddle.enable_static()`` makes ops build
a Program that ``paddle.static.Executor`` runs.

The static side lives in ``static.static_mode`` (far above this module), which registers how to
start and stop recording here when it is imported; layers below it (the optimizers' ``minimize``)
ask ``recording()`` for the Program being built.
"""

from __future__ import annotations

from .device import set_device

_recorder = {"start": None, "stop": None, "current": None}


def register_static_mode(start, stop) -> None:
    """``start()`` returns the Program that records from now on; ``stop()`` ends recording."""
    _recorder["start"], _recorder["stop"] = start, stop


def recording():
    """The Program static mode is building, or None in dynamic mode."""
    return _recorder["current"]


def set_recording(program) -> None:
    _recorder["current"] = program


def in_dynamic_mode() -> bool:
    return _recorder["current"] is None


def enable_static() -> None:
    if _recorder["start"] is None:
        raise RuntimeError("paddle.enable_static(): paddlectl.framework.static is not importable here")
    if _recorder["current"] is None:
        _recorder["current"] = _recorder["start"]()


def disable_static(place=None) -> None:
    """Back to eager mode (what static mode built stays in its Program); a CPU place is accepted."""
    if _recorder["current"] is not None:
        _recorder["stop"]()
        _recorder["current"] = None
    if place is not None:
        set_device(place)
