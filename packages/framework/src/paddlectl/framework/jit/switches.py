"""``paddle.jit``'s global switches: ``enable_to_static``, ``ignore_module``, ``set_code_level`` and
``set_verbosity``.

``enable_to_static(False)`` makes every ``to_static`` function run its Python eagerly, as Paddle
does for debugging. The other three steer Paddle's source-to-source translator (which modules it
leaves alone, how much of the rewritten code and of its log it prints); ``to_static`` here traces
op calls and never rewrites source, so there is nothing to skip or print: the settings are checked
and kept, and ``settings()`` reads them back.
"""

from __future__ import annotations

import types

from ..errors import ConfigError

_settings = {"to_static": True, "code_level": -1, "verbosity": 0, "ignored_modules": ()}


def enable_to_static(enable_to_static_bool: bool) -> None:
    """Run ``to_static`` functions as programs (True, the default) or as plain Python (False)."""
    if not isinstance(enable_to_static_bool, bool):
        raise ConfigError(f"enable_to_static: pass True or False, got {enable_to_static_bool!r}")
    _settings["to_static"] = enable_to_static_bool


def to_static_enabled() -> bool:
    return _settings["to_static"]


def ignore_module(modules: list) -> None:
    """Modules whose functions the translator must not convert (kept; nothing is converted here)."""
    if not isinstance(modules, list | tuple) or not all(isinstance(m, types.ModuleType) for m in modules):
        raise ConfigError(f"ignore_module: pass a list of modules, got {modules!r}")
    _settings["ignored_modules"] += tuple(m for m in modules if m not in _settings["ignored_modules"])


def _level(what: str, level) -> int:
    if isinstance(level, bool) or not isinstance(level, int):
        raise ConfigError(f"{what}: level must be an int, got {level!r}")
    return level


def set_code_level(level: int = 100, also_to_stdout: bool = False) -> None:
    """How much translated code to log (kept: tracing translates no code)."""
    _settings["code_level"] = _level("set_code_level", level)


def set_verbosity(level: int = 0, also_to_stdout: bool = False) -> None:
    """How much of the translator's log to print (kept: tracing has no translator log)."""
    _settings["verbosity"] = _level("set_verbosity", level)


def settings() -> dict:
    return dict(_settings)
