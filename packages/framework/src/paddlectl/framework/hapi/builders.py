"""Objects from config sections: ``{name: Class, key: value...}`` -> ``Class(key=value...)``, checked.

Every section that names a class passes its other keys as keyword arguments; a key the class does
not accept is refused with the nearest valid one, so ``-o Optimizer.lerning_rate=0.1`` fails at
once instead of silently training with the default.
"""

from __future__ import annotations

import difflib
import inspect
from collections.abc import Iterable, Mapping
from typing import Any

from .. import optimizer as optim
from ..errors import ConfigError, PaddlectlError
from ..optimizer import clip, lr


def _nearest(key: str, choices: Iterable[str]) -> str:
    choices = sorted(set(choices))
    close = difflib.get_close_matches(key, choices, n=3, cutoff=0.5)
    if close:
        return "did you mean " + " or ".join(repr(c) for c in close) + "?"
    return "valid keys: " + (", ".join(choices) or "none")


def require_mapping(section: Any, where: str) -> None:
    if not isinstance(section, Mapping):
        raise ConfigError(f"config key {where!r} must be a mapping, got {type(section).__name__} {section!r}")


def check_keys(section: Mapping[str, Any], where: str, allowed: Iterable[str]) -> None:
    """Raise ConfigError for the first key of ``section`` that is not in ``allowed``."""
    require_mapping(section, where)
    allowed = list(allowed)
    for key in section:
        if key not in allowed:
            raise ConfigError(f"unknown config key {where + '.' + str(key)!r}; {_nearest(str(key), allowed)}")


def accepted_kwargs(factory) -> list[str] | None:
    """The keyword names ``factory`` accepts, or None when it takes ``**kwargs`` (anything goes)."""
    params = inspect.signature(factory).parameters.values()
    if any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params):
        return None
    return [p.name for p in params if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY) and p.name != "self"]


def resolve(name: Any, choices: Mapping[str, Any], where: str):
    """The factory called ``name`` among ``choices`` (a name -> class mapping)."""
    if not isinstance(name, str) or name not in choices:
        raise ConfigError(
            f"{where}.name is {name!r}; {_nearest(str(name), choices).replace('valid keys', 'choose from')}"
        )
    return choices[name]


def instantiate(section: Mapping[str, Any], choices: Mapping[str, Any], where: str, skip=(), **extra):
    """``choices[section['name']](**rest, **extra)`` with every key of ``rest`` checked first.

    ``skip`` lists keys of the section that the caller consumes itself (not passed on).
    """
    require_mapping(section, where)
    if "name" not in section:
        raise ConfigError(f"config section {where!r} needs a 'name'; choose from {', '.join(sorted(choices))}")
    factory = resolve(section["name"], choices, where)
    kwargs = {k: v for k, v in section.items() if k != "name" and k not in skip}
    allowed = accepted_kwargs(factory)
    if allowed is not None:
        check_keys(kwargs, where, [k for k in allowed if k not in extra] + ["name", *skip])
    try:
        return factory(**kwargs, **extra)
    except PaddlectlError:  # already typed: a dataset's DataError names its file:line, keep it a DataError
        raise
    except (TypeError, ValueError, AttributeError) as exc:
        raise ConfigError(f"config section {where!r} ({section['name']}): {exc}") from None


def _public_classes(module, base) -> dict[str, Any]:
    return {
        n: obj
        for n, obj in vars(module).items()
        if inspect.isclass(obj) and issubclass(obj, base) and obj is not base and not n.startswith("_")
    }


def build_optimizer(section: Mapping[str, Any], parameters) -> tuple[Any, Any]:
    """``(optimizer, scheduler or None)`` from an ``Optimizer`` section.

    ``name`` is a ``paddle.optimizer`` class; ``lr`` (optional) is ``{name: <paddle.optimizer.lr
    class>, interval: epoch|step, ...}``, otherwise ``learning_rate`` is a constant;
    ``grad_clip`` is ``{name: ClipGradByGlobalNorm, clip_norm: 1.0}``; every other key
    (``weight_decay``, ``beta1``, ``momentum`` ...) goes to the optimizer.
    """
    require_mapping(section or {}, "Optimizer")
    section = dict(section or {})
    if "name" not in section:
        section["name"] = "Adam"
    optimizers = _public_classes(optim, optim.Optimizer)
    allowed = accepted_kwargs(resolve(section["name"], optimizers, "Optimizer"))
    if allowed is not None:
        check_keys(section, "Optimizer", [k for k in allowed if k != "parameters"] + ["name", "lr"])
    scheduler = None
    lr_section = section.pop("lr", None)
    if lr_section is not None:
        require_mapping(lr_section, "Optimizer.lr")
        interval = lr_section.get("interval", "epoch")
        if interval not in ("epoch", "step"):
            raise ConfigError(f"Optimizer.lr.interval is {interval!r}; use 'epoch' or 'step'")
        scheduler = instantiate(lr_section, _public_classes(lr, lr.LRScheduler), "Optimizer.lr", skip=("interval",))
        if "learning_rate" in section:
            raise ConfigError(
                "Optimizer has both learning_rate and lr; put the base rate in Optimizer.lr.learning_rate "
                "and remove Optimizer.learning_rate"
            )
    learning_rate = scheduler if scheduler is not None else float(section.pop("learning_rate", 0.001))
    section.pop("learning_rate", None)
    grad_clip = section.pop("grad_clip", None)
    if grad_clip is not None:
        grad_clip = instantiate(grad_clip, _public_classes(clip, clip.ClipGradBase), "Optimizer.grad_clip")
    optimizer = instantiate(
        section, optimizers, "Optimizer", learning_rate=learning_rate, parameters=parameters, grad_clip=grad_clip
    )
    return optimizer, scheduler
