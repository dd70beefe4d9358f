"""``paddle.amp.GradScaler``: dynamic loss scaling, with Paddle's arithmetic and state machine.

The loss is multiplied by ``scale`` before backward so small float16 gradients do not flush to
zero; ``unscale_`` divides the gradients by it (``grad * (1 / scale)``, as Paddle's
``check_finite_and_unscale``) and notes whether any is NaN/Inf; ``step`` skips the optimizer's
step when one is; ``update`` halves the scale after ``decr_every_n_nan_or_inf`` bad steps and
doubles it after ``incr_every_n_steps`` good ones in a row.
"""

from __future__ import annotations

import numpy as np

from ..core.dtype import bfloat16, float32
from ..core.tensor import Tensor
from ..errors import ConfigError

_INIT, _UNSCALED, _STEPPED = "init", "unscaled", "stepped"


def _positive(name: str, value, kind) -> None:
    if isinstance(value, bool) or not isinstance(value, kind) or value <= 0:
        raise ConfigError(f"GradScaler: {name} must be a positive number, got {value!r}")


class GradScaler:
    """Paddle's ``GradScaler(enable, init_loss_scaling=65536, incr_ratio=2, decr_ratio=0.5,
    incr_every_n_steps=2000, decr_every_n_nan_or_inf=1, use_dynamic_loss_scaling=True)``."""

    def __init__(
        self,
        enable=True,
        init_loss_scaling=65536.0,
        incr_ratio=2.0,
        decr_ratio=0.5,
        incr_every_n_steps=2000,
        decr_every_n_nan_or_inf=1,
        use_dynamic_loss_scaling=True,
    ):
        _positive("init_loss_scaling", init_loss_scaling, (int, float))
        _positive("incr_every_n_steps", incr_every_n_steps, int)
        _positive("decr_every_n_nan_or_inf", decr_every_n_nan_or_inf, int)
        if not incr_ratio > 1.0:
            raise ConfigError(f"GradScaler: incr_ratio must be > 1.0, got {incr_ratio!r}")
        if not 0.0 < decr_ratio < 1.0:
            raise ConfigError(f"GradScaler: decr_ratio must be in (0, 1), got {decr_ratio!r}")
        self._enable = bool(enable)
        self._init_loss_scaling = float(init_loss_scaling)
        self._scale = np.float32(init_loss_scaling)
        self._incr_ratio = float(incr_ratio)
        self._decr_ratio = float(decr_ratio)
        self._incr_every_n_steps = incr_every_n_steps
        self._decr_every_n_nan_or_inf = decr_every_n_nan_or_inf
        self._use_dynamic_loss_scaling = bool(use_dynamic_loss_scaling)
        self._incr_count = 0
        self._decr_count = 0
        self._found_inf = False
        self._states: dict[int, str] = {}

    # ----- the training step -------------------------------------------------------------------
    def scale(self, var: Tensor) -> Tensor:
        """``var * scale`` (``var`` unchanged when disabled)."""
        if not isinstance(var, Tensor):
            raise ConfigError(f"GradScaler.scale: expected the loss Tensor, got {type(var).__name__}")
        if not self._enable:
            return var
        return var * Tensor(np.array([self._scale], dtype=float32))

    def unscale_(self, optimizer) -> None:
        """Divide ``optimizer``'s gradients by the scale and note whether any is NaN/Inf."""
        if not self._enable:
            return
        state = self._states.get(id(optimizer), _INIT)
        if state == _UNSCALED:
            raise RuntimeError("unscale_() has already been called on this optimizer since the last update().")
        if state == _STEPPED:
            raise RuntimeError("unscale_() is being called after step().")
        inverse = np.float32(1.0) / self._scale
        found = False
        for param in _parameters(optimizer):
            grad = param.grad
            if grad is None:
                continue
            wide = grad._data.astype(float32) if grad.dtype == bfloat16 else grad._data
            found = found or not bool(np.isfinite(wide).all())
            grad._data = (wide * inverse).astype(grad.dtype, copy=False)
        self._found_inf = found
        self._states[id(optimizer)] = _UNSCALED

    def step(self, optimizer) -> None:
        """``optimizer.step()`` on the unscaled gradients, skipped when one is NaN/Inf."""
        if not self._enable:
            return optimizer.step()
        if self._states.get(id(optimizer), _INIT) == _STEPPED:
            raise RuntimeError("step() has already been called since the last update().")
        if self._states.get(id(optimizer), _INIT) == _INIT:
            self.unscale_(optimizer)
        if not self._found_inf:
            optimizer.step()
        self._states[id(optimizer)] = _STEPPED
        if not self._use_dynamic_loss_scaling:
            self._states.clear()
        return None

    def update(self) -> None:
        """Adjust the scale from the last step's NaN/Inf (dynamic loss scaling only)."""
        if not (self._enable and self._use_dynamic_loss_scaling):
            return
        if self._found_inf:
            self._incr_count = 0
            self._decr_count += 1
            if self._decr_count == self._decr_every_n_nan_or_inf:
                self._scale = np.float32(self._scale * np.float32(self._decr_ratio))
                self._decr_count = 0
        else:
            self._decr_count = 0
            self._incr_count += 1
            if self._incr_count == self._incr_every_n_steps:
                self._scale = np.float32(self._scale * np.float32(self._incr_ratio))
                self._incr_count = 0
        self._states.clear()

    def minimize(self, optimizer, *args, **kwargs):
        """``step`` then ``update`` in one call; returns what ``optimizer.minimize`` does (None, [])
        when the step is skipped."""
        if not self._enable:
            return optimizer.minimize(*args, **kwargs)
        if self._states.get(id(optimizer), _INIT) == _INIT:
            self.unscale_(optimizer)
        result = (None, []) if self._found_inf else optimizer.minimize(*args, **kwargs)
        self._states[id(optimizer)] = _STEPPED
        self.update()
        self._states.clear()
        return result

    # ----- settings and state ------------------------------------------------------------------
    def is_enable(self) -> bool:
        return self._enable

    def is_use_dynamic_loss_scaling(self) -> bool:
        return self._use_dynamic_loss_scaling

    def get_init_loss_scaling(self) -> float:
        return self._init_loss_scaling

    def get_loss_scaling(self) -> float:
        """The current scale (Paddle keeps it as the tensor ``_scale``)."""
        return float(self._scale)

    def state_dict(self) -> dict:
        """Paddle's keys; empty when disabled."""
        if not self._enable:
            return {}
        return {
            "scale": np.array([self._scale], dtype=float32),
            "incr_ratio": self._incr_ratio,
            "decr_ratio": self._decr_ratio,
            "incr_every_n_steps": self._incr_every_n_steps,
            "decr_every_n_nan_or_inf": self._decr_every_n_nan_or_inf,
            "incr_count": self._incr_count,
            "decr_count": self._decr_count,
            "use_dynamic_loss_scaling": self._use_dynamic_loss_scaling,
        }

    def load_state_dict(self, state_dict: dict) -> None:
        """Restore what ``state_dict`` returned; a missing key is a ConfigError naming it."""
        if not self._enable:
            return
        if not state_dict:
            raise ConfigError(
                "GradScaler.load_state_dict: the state dict is empty, possibly saved from a disabled GradScaler"
            )
        missing = sorted(set(self.state_dict()) - set(state_dict))
        if missing:
            raise ConfigError(f"GradScaler.load_state_dict: missing keys {missing}; pass what state_dict() returned")
        scale = np.asarray(
            state_dict["scale"].numpy() if isinstance(state_dict["scale"], Tensor) else state_dict["scale"]
        )
        self._scale = np.float32(scale.reshape(-1)[0])
        self._init_loss_scaling = float(self._scale)
        self._incr_ratio = float(state_dict["incr_ratio"])
        self._decr_ratio = float(state_dict["decr_ratio"])
        self._incr_every_n_steps = int(state_dict["incr_every_n_steps"])
        self._decr_every_n_nan_or_inf = int(state_dict["decr_every_n_nan_or_inf"])
        self._incr_count = int(state_dict["incr_count"])
        self._decr_count = int(state_dict["decr_count"])
        self._use_dynamic_loss_scaling = bool(state_dict["use_dynamic_loss_scaling"])


def _parameters(optimizer) -> list:
    groups = getattr(optimizer, "_param_groups", None) or getattr(optimizer, "_parameter_list", None)
    if groups is None:
        raise ConfigError(f"GradScaler: {type(optimizer).__name__} is not a paddle optimizer (no parameter list)")
    params = []
    for item in groups:
        params.extend(item["params"] if isinstance(item, dict) else [item])
    return params
