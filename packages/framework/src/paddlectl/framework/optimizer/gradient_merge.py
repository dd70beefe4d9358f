"""Gradient merge (gradient accumulation): k micro-batch steps make one optimizer update.

Fleet's ``DistributedStrategy.gradient_merge`` with ``gradient_merge_configs={"k_steps": k,
"avg": True}`` wraps the optimizer in this. Gradients already add up across ``backward`` calls, so
the wrapper lets them: ``step``/``minimize`` update only every k-th call (after dividing the sum by
k when ``avg``), and ``clear_grad`` clears only after such an update. With a mean loss per micro
batch, k steps of batch b then equal one step of batch k*b, as if memory for k*b were there.
"""

from __future__ import annotations

from ..errors import ConfigError
from .optimizer import Optimizer

__all__ = ["GradientMergeOptimizer", "gradient_merge"]


class GradientMergeOptimizer:
    """``inner_optimizer`` updating once every ``k_steps`` calls of ``step`` (Paddle's names)."""

    def __init__(self, inner_optimizer, k_steps=1, avg=True):
        if not isinstance(inner_optimizer, Optimizer):
            raise ConfigError(
                f"gradient merge wraps a paddle optimizer, got {type(inner_optimizer).__name__}; pass e.g. paddle.optimizer.SGD"
            )
        if isinstance(k_steps, bool) or not isinstance(k_steps, int) or k_steps < 1:
            raise ConfigError(f"gradient merge: k_steps must be a positive integer, got {k_steps!r}")
        self.inner_optimizer = inner_optimizer
        self.k_steps = k_steps
        self.avg = bool(avg)
        self._calls = 0
        self._updated = False

    def _ready(self) -> bool:
        """Count a call; True on every k-th, after averaging the summed gradients when asked."""
        self._calls += 1
        self._updated = self._calls % self.k_steps == 0
        if self._updated and self.avg and self.k_steps > 1:
            for param in self.inner_optimizer._parameter_list:
                for p in param["params"] if isinstance(param, dict) else [param]:
                    grad = p.grad
                    if grad is not None:  # rebinding the data keeps a sparse gradient's rows
                        grad._data = grad._data / grad.dtype.type(self.k_steps)
        return self._updated

    def step(self) -> None:
        if self._ready():
            self.inner_optimizer.step()

    def minimize(self, loss, startup_program=None, parameters=None, no_grad_set=None):
        if self._ready():
            return self.inner_optimizer.minimize(loss, startup_program, parameters, no_grad_set)
        return None, []

    def clear_grad(self, set_to_zero: bool = True) -> None:
        """Clear only right after an update: between them the gradients keep adding up."""
        if self._updated:
            self.inner_optimizer.clear_grad(set_to_zero)
            self._updated = False

    clear_gradients = clear_grad

    def __getattr__(self, name):  # get_lr, set_lr, state_dict, _parameter_list... are the inner optimizer's
        return getattr(self.inner_optimizer, name)


def gradient_merge(optimizer, k_steps=1, avg=True) -> GradientMergeOptimizer:
    """``optimizer`` accumulating ``k_steps`` micro-batch gradients per update (fleet's gradient_merge)."""
    return GradientMergeOptimizer(optimizer, k_steps, avg)
