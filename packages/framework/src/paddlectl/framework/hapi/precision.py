"""The trainer's numerics: ``Global.amp`` (O0, O1, O2), ``Global.amp_dtype`` and
``Global.gradient_merge_steps``, as one object that runs a training step.

O1 runs the forward under ``amp.auto_cast``; O2 also stores the weights in the low dtype
(``amp.decorate``, float32 master weights, float32 checkpoints so export and an FP32 resume read
them). float16 scales the loss with a ``GradScaler`` (a step whose gradients overflowed is skipped);
bfloat16 has float32's range and needs none. Gradient merge wraps the optimizer.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..amp import GradScaler, auto_cast, decorate
from ..errors import ConfigError
from ..optimizer.gradient_merge import gradient_merge


@dataclass
class TrainingPrecision:
    optimizer: object
    level: str
    dtype: str
    scaler: GradScaler

    def step(self, model, loss_fn, inputs, labels):
        """Forward (under auto_cast when on), backward, update; returns the (unscaled) loss."""
        with auto_cast(enable=self.level != "O0", level=self.level, dtype=self.dtype):
            loss = loss_fn(model(inputs), labels)
        self.scaler.scale(loss).backward()
        self.scaler.step(self.optimizer)
        self.scaler.update()
        self.optimizer.clear_grad()
        return loss


def training_precision(config: dict, model, optimizer) -> TrainingPrecision:
    """Read the Global keys, decorate ``model``/``optimizer`` as they ask, and return the stepper."""
    settings = config.get("Global") or {}
    level, dtype, merge = (
        settings.get(k, d) for k, d in (("amp", "O0"), ("amp_dtype", "float16"), ("gradient_merge_steps", 1))
    )
    if level not in ("O0", "O1", "O2"):
        raise ConfigError(f"Global.amp must be O0, O1 or O2, got {level!r}")
    if dtype not in ("float16", "bfloat16"):
        raise ConfigError(f"Global.amp_dtype must be float16 or bfloat16, got {dtype!r}")
    if isinstance(merge, bool) or not isinstance(merge, int) or merge < 1:
        raise ConfigError(f"Global.gradient_merge_steps must be a positive integer, got {merge!r}")
    scaled = level != "O0" and dtype == "float16"
    if scaled and merge > 1:
        raise ConfigError(
            "Global.gradient_merge_steps with float16 AMP would unscale the summed gradients once per micro "
            "batch; set Global.amp_dtype=bfloat16 (no loss scaling) to combine them"
        )
    if level == "O2":
        decorate(model, optimizer, level="O2", dtype=dtype, save_dtype="float32")
    if merge > 1:
        optimizer = gradient_merge(optimizer, k_steps=merge)
    return TrainingPrecision(optimizer, level, dtype, GradScaler(enable=scaled))
