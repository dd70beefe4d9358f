"""``paddle.set_flags`` / ``paddle.get_flags``: Paddle's global ``FLAGS_*`` switches.

Paddle keeps a registry of typed flags and refuses a name it does not know; here the registry is
the flags of Paddle 3.3.1's CPU build a script commonly sets, with their defaults (a GPU-only flag
such as ``FLAGS_cudnn_deterministic`` is unknown to Paddle's CPU build too), and a value
is converted to the flag's type as Paddle converts it (``1`` sets a bool flag to True).
``FLAGS_check_nan_inf`` acts: it turns ``paddle.amp.debugging``'s tensor checker on and off, which
is what Paddle's flag does (abort at the first op whose output holds NaN or Inf). The others are
recorded and read back: they tune Paddle's allocators, GPU kernels and executors, which have no
counterpart on this CPU runtime.
"""

from __future__ import annotations

from .amp.debugging import TensorCheckerConfig, disable_tensor_checker, enable_tensor_checker
from .errors import ConfigError

_DEFAULTS: dict[str, bool | int | float | str] = {
    "FLAGS_check_nan_inf": False,
    "FLAGS_check_nan_inf_level": 0,
    "FLAGS_eager_delete_tensor_gb": 0.0,
    "FLAGS_use_stride_kernel": True,
    "FLAGS_use_mkldnn": False,
    "FLAGS_call_stack_level": 1,
    "FLAGS_enable_pir_api": True,
    "FLAGS_set_to_1d": False,
    "FLAGS_fraction_of_gpu_memory_to_use": 0.92,
    "FLAGS_allocator_strategy": "auto_growth",
    "FLAGS_benchmark": False,
    "FLAGS_paddle_num_threads": 1,
    "FLAGS_print_ir": False,
    "FLAGS_low_precision_op_list": 0,
}
_values = dict(_DEFAULTS)


def _known(name, verb: str) -> str:
    if not isinstance(name, str) or name not in _DEFAULTS:
        raise ConfigError(
            f"Flag {name} cannot {verb} its value through this function; the flags known here are {sorted(_DEFAULTS)}"
        )
    return name


def _converted(name: str, value):
    kind = type(_DEFAULTS[name])
    if isinstance(value, str) != (kind is str) or not isinstance(value, bool | int | float | str):
        raise ConfigError(f"set_flags: {name} takes a {kind.__name__}, got {value!r}")
    return kind(value)


def set_flags(flags: dict) -> None:
    """Set each ``FLAGS_*`` name in ``flags`` to its value (converted to the flag's type)."""
    if not isinstance(flags, dict):
        raise ConfigError(f"set_flags: pass a dict of flag names to values, got {type(flags).__name__}")
    converted = {_known(name, "set"): _converted(name, value) for name, value in flags.items()}
    _values.update(converted)
    if "FLAGS_check_nan_inf" in converted:
        if converted["FLAGS_check_nan_inf"]:
            enable_tensor_checker(TensorCheckerConfig(True))
        else:
            disable_tensor_checker()


def get_flags(flags) -> dict:
    """``{name: value}`` for one flag name or a list/tuple of them."""
    names = [flags] if isinstance(flags, str) else flags
    if not isinstance(names, list | tuple):
        raise ConfigError(f"get_flags: pass a flag name or a list/tuple of them, got {type(flags).__name__}")
    return {_known(name, "get"): _values[name] for name in names}
