"""``fleet.DistributedStrategy``: the switches of a collective job, each checked when set.

Paddle's names and defaults for the parts that exist in dynamic-graph data parallelism on CPU:
``amp``/``amp_configs``, ``recompute``/``recompute_configs``, ``sharding``/``sharding_configs``
(stage 1: optimizer states, stage 2: plus gradients), ``gradient_merge``/``gradient_merge_configs``
and ``fuse_all_reduce_ops``/``fuse_grad_size_in_MB`` (the gradient bucket size). An unknown field
or config key is a ConfigError naming the known ones, not a silently ignored attribute.
"""

from __future__ import annotations

import difflib

from ...errors import ConfigError

_CONFIG_DEFAULTS = {
    "amp_configs": {
        "init_loss_scaling": 32768.0,
        "incr_every_n_steps": 1000,
        "decr_every_n_nan_or_inf": 2,
        "incr_ratio": 2.0,
        "decr_ratio": 0.8,
        "use_dynamic_loss_scaling": True,
        "custom_white_list": [],
        "custom_black_list": [],
        "use_pure_fp16": False,
        "use_fp16_guard": True,
        "use_bf16": False,
    },
    "recompute_configs": {"checkpoints": [], "enable_offload": False},
    "sharding_configs": {"stage": 1, "sharding_degree": -1, "segment_broadcast_MB": 32.0},
    "gradient_merge_configs": {"k_steps": 1, "avg": True},
}
_FLAGS = {"amp": False, "recompute": False, "sharding": False, "gradient_merge": False, "fuse_all_reduce_ops": True}
_NUMBERS = {"fuse_grad_size_in_MB": 32}


def _suggest(name: str, known) -> str:
    close = difflib.get_close_matches(name, list(known), n=1)
    return f"; did you mean {close[0]!r}?" if close else f"; known: {', '.join(sorted(known))}"


class DistributedStrategy:
    """Paddle's ``paddle.distributed.fleet.DistributedStrategy`` (collective mode)."""

    def __init__(self) -> None:
        for name, value in {**_FLAGS, **_NUMBERS}.items():
            object.__setattr__(self, name, value)
        for name, defaults in _CONFIG_DEFAULTS.items():
            object.__setattr__(self, name, dict(defaults))

    def __setattr__(self, name: str, value) -> None:
        if name in _FLAGS:
            if not isinstance(value, bool):
                raise ConfigError(f"DistributedStrategy.{name} is a switch: set True or False, got {value!r}")
        elif name in _NUMBERS:
            if isinstance(value, bool) or not isinstance(value, int | float) or value <= 0:
                raise ConfigError(f"DistributedStrategy.{name} must be a positive number, got {value!r}")
        elif name in _CONFIG_DEFAULTS:
            value = self._merged(name, value)
        else:
            raise ConfigError(
                f"DistributedStrategy has no field {name!r}{_suggest(name, [*_FLAGS, *_NUMBERS, *_CONFIG_DEFAULTS])}"
            )
        object.__setattr__(self, name, value)

    def _merged(self, name: str, value) -> dict:
        """Paddle updates a config dict key by key: unset keys keep their values."""
        if not isinstance(value, dict):
            raise ConfigError(f"DistributedStrategy.{name} takes a dict, got {type(value).__name__}")
        known = _CONFIG_DEFAULTS[name]
        for key in value:
            if key not in known:
                raise ConfigError(f"DistributedStrategy.{name} has no key {key!r}{_suggest(key, known)}")
        merged = {**getattr(self, name), **value}
        if name == "sharding_configs" and merged["stage"] not in (1, 2):
            raise ConfigError(
                f"sharding_configs['stage'] must be 1 (optimizer states) or 2 (plus gradients), got {merged['stage']!r}"
            )
        if name == "gradient_merge_configs" and (
            isinstance(merged["k_steps"], bool) or not isinstance(merged["k_steps"], int) or merged["k_steps"] < 1
        ):
            raise ConfigError(
                f"gradient_merge_configs['k_steps'] must be a positive integer, got {merged['k_steps']!r}"
            )
        return merged

    def __repr__(self) -> str:
        on = [name for name in _FLAGS if getattr(self, name)]
        return f"DistributedStrategy(on={on}, fuse_grad_size_in_MB={self.fuse_grad_size_in_MB})"
