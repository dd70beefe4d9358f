"""The ``Optimizer`` section in PaddleSeg's terms: an optimizer and a per-step schedule, by default
``PolynomialDecay`` over the whole run after a linear warm-up (PaddleSeg's ``warmup_iters``).

``Optimizer: {name: Momentum, momentum: 0.9, weight_decay: 4.0e-5, lr: {name: PolynomialDecay,
learning_rate: 0.01, end_lr: 0, power: 0.9, warmup_iters: 100, warmup_start_lr: 1.0e-5}}``.
``decay_steps`` defaults to the steps left after warm-up, so the schedule follows ``Global.epochs``.
"""

from __future__ import annotations

import inspect

from paddlectl.framework import optimizer as optim
from paddlectl.framework.errors import ConfigError
from paddlectl.framework.hapi.builders import instantiate, require_mapping
from paddlectl.framework.optimizer import lr

OPTIMIZERS = {n: c for n, c in vars(optim).items() if inspect.isclass(c) and issubclass(c, optim.Optimizer)}
SCHEDULERS = {n: c for n, c in vars(lr).items() if inspect.isclass(c) and issubclass(c, lr.LRScheduler)}


def build_schedule(section: dict, total_steps: int):
    """The per-step learning rate (a scheduler, or a float when ``lr`` is absent)."""
    section = dict(section)
    warmup = section.pop("warmup_iters", 0)
    start = float(section.pop("warmup_start_lr", 0.0))
    if not isinstance(warmup, int) or warmup < 0:
        raise ConfigError(f"Optimizer.lr.warmup_iters is {warmup!r}; give a number of steps >= 0")
    section.setdefault("name", "PolynomialDecay")
    if section["name"] == "PolynomialDecay":
        section.setdefault("decay_steps", max(1, total_steps - warmup))
        section.setdefault("end_lr", 0.0)
    schedule = instantiate(section, SCHEDULERS, "Optimizer.lr")
    if not warmup:
        return schedule
    return lr.LinearWarmup(schedule, warmup, start, float(section.get("learning_rate", schedule.base_lr)))


def build_optimizer(section, parameters, total_steps: int):
    """``(optimizer, scheduler or None)``; the scheduler steps once per training step."""
    section = dict(section or {"name": "Momentum", "lr": {}})
    require_mapping(section, "Optimizer")
    section.setdefault("name", "Momentum")
    lr_section = section.pop("lr", None)
    if lr_section is not None and "learning_rate" in section:
        raise ConfigError("Optimizer has both learning_rate and lr; put the rate in Optimizer.lr.learning_rate")
    scheduler = None
    if lr_section is not None:
        require_mapping(lr_section, "Optimizer.lr")
        scheduler = build_schedule(lr_section, total_steps)
    rate = scheduler if scheduler is not None else float(section.pop("learning_rate", 0.01))
    return instantiate(section, OPTIMIZERS, "Optimizer", learning_rate=rate, parameters=parameters), scheduler
