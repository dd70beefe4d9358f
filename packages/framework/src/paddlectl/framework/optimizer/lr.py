"""``paddle.optimizer.lr``: learning-rate schedulers, step for step the formulas Paddle 3.x uses.

A scheduler is plain Python over floats; the optimizer reads ``scheduler()`` at every ``step()``
and casts it to the parameters' dtype, so these values match Paddle's exactly.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable, Sequence

import numpy as np

__all__ = [
    "LRScheduler",
    "NoamDecay",
    "PiecewiseDecay",
    "NaturalExpDecay",
    "InverseTimeDecay",
    "PolynomialDecay",
    "LinearWarmup",
    "ExponentialDecay",
    "MultiStepDecay",
    "StepDecay",
    "LambdaDecay",
    "ReduceOnPlateau",
    "CosineAnnealingDecay",
    "MultiplicativeDecay",
    "OneCycleLR",
    "LinearLR",
    "CyclicLR",
    "CosineAnnealingWarmRestarts",
]


def _require(condition: bool, message: str) -> None:
    if not condition:
        raise ValueError(message)


class LRScheduler:
    """Base: ``step()`` advances ``last_epoch`` and recomputes ``last_lr`` with ``get_lr()``.

    Construction performs the first ``step()``, so a fresh scheduler sits at epoch 0 (Paddle).
    """

    def __init__(self, learning_rate: float = 0.1, last_epoch: int = -1, verbose: bool = False) -> None:
        if not isinstance(learning_rate, float | int) or isinstance(learning_rate, bool):
            raise TypeError(f"The type of learning rate must be float, but received {type(learning_rate)}")
        _require(learning_rate >= 0, f"Invalid learning rate: {learning_rate}")
        self.base_lr = float(learning_rate)
        self.last_lr = float(learning_rate)
        self.last_epoch = last_epoch
        self.verbose = verbose
        self._var_name = None
        self.step()

    def __call__(self) -> float:
        return self.last_lr

    def step(self, epoch: int | None = None) -> None:
        if epoch is None:
            self.last_epoch += 1
            self.last_lr = self.get_lr()
        else:
            self.last_epoch = epoch
            closed_form = getattr(self, "_get_closed_form_lr", None)
            self.last_lr = closed_form() if closed_form is not None else self.get_lr()
        self._report()

    def _report(self) -> None:
        if self.verbose:
            print(f"Epoch {self.last_epoch}: {type(self).__name__} set learning rate to {self.last_lr}.")

    def get_lr(self) -> float:
        """The learning rate at ``self.last_epoch``; every scheduler defines it."""
        raise TypeError(f"{type(self).__name__} must define get_lr(); LRScheduler is a base class")

    # ----- checkpoints -----------------------------------------------------------------------
    def state_keys(self) -> None:
        self.keys = ["last_epoch", "last_lr"]

    def state_dict(self) -> dict:
        self.state_keys()
        state = {}
        for key in self.keys:
            if key in self.__dict__:
                value = self.__dict__[key]
                state[key] = float(np.asarray(value)) if hasattr(value, "shape") else value
        return state

    def set_state_dict(self, state_dict: dict) -> None:
        self.state_keys()
        for key in self.keys:
            if key not in state_dict:
                raise RuntimeError(
                    f"Please check whether state_dict is correct for optimizer. Can't find [ {key} ] in state_dict"
                )
            self.__dict__[key] = state_dict[key]
        if len(state_dict) > len(self.keys):
            warnings.warn(
                "There are some unused values in state_dict. Maybe the optimizer have different "
                "'LearningRateDecay' when invoking state_dict and set_dict",
                stacklevel=2,
            )

    set_dict = set_state_dict


class NoamDecay(LRScheduler):
    """The Transformer schedule: ``lr * d_model^-0.5 * min(t^-0.5, t * warmup^-1.5)``."""

    def __init__(self, d_model: int, warmup_steps: int, learning_rate: float = 1.0, last_epoch=-1, verbose=False):
        _require(d_model > 0, "d_model should be grater than 0")
        self.d_model, self.warmup_steps = d_model, warmup_steps
        super().__init__(learning_rate, last_epoch, verbose)

    def get_lr(self) -> float:
        a = 1 if self.last_epoch == 0 else self.last_epoch**-0.5
        b = self.warmup_steps**-1.5 * self.last_epoch
        return self.base_lr * (self.d_model**-0.5) * min(a, b)


class PiecewiseDecay(LRScheduler):
    """``values[i]`` while ``last_epoch < boundaries[i]``, then the last value."""

    def __init__(self, boundaries: Sequence[int], values: Sequence[float], last_epoch=-1, verbose=False):
        _require(len(boundaries) > 0, "The boundaries cannot be empty.")
        _require(
            len(values) > len(boundaries),
            f"The values have one more element than boundaries, but received len(values) [{len(values)}] "
            f"< len(boundaries) + 1 [{len(boundaries) + 1}].",
        )
        self.boundaries, self.values = boundaries, values
        super().__init__(last_epoch=last_epoch, verbose=verbose)

    def get_lr(self) -> float:
        for boundary, value in zip(self.boundaries, self.values, strict=False):
            if self.last_epoch < boundary:
                return value
        return self.values[-1]


class NaturalExpDecay(LRScheduler):
    """``lr * exp(-gamma * epoch)``."""

    def __init__(self, learning_rate: float, gamma: float, last_epoch=-1, verbose=False):
        _require(gamma > 0.0, "'gamma' must be a positive number so that the learning rate will decay.")
        self.gamma = gamma
        super().__init__(learning_rate, last_epoch, verbose)

    def get_lr(self) -> float:
        return self.base_lr * math.exp(-1 * self.gamma * self.last_epoch)


class InverseTimeDecay(LRScheduler):
    """``lr / (1 + gamma * epoch)``."""

    def __init__(self, learning_rate: float, gamma: float, last_epoch=-1, verbose=False):
        self.gamma = gamma
        super().__init__(learning_rate, last_epoch, verbose)

    def get_lr(self) -> float:
        return self.base_lr / (1 + self.gamma * self.last_epoch)


class PolynomialDecay(LRScheduler):
    """``(lr - end_lr) * (1 - t/T)^power + end_lr``; with ``cycle`` T grows to the next multiple."""

    def __init__(
        self,
        learning_rate: float,
        decay_steps: int,
        end_lr=0.0001,
        power=1.0,
        cycle=False,
        last_epoch=-1,
        verbose=False,
    ):
        _require(isinstance(decay_steps, int) and decay_steps > 0, "'decay_steps' must be a positive integer.")
        _require(power > 0.0, "'power' must be greater than 0.0 so that the learning rate will decay.")
        self.decay_steps, self.end_lr, self.power, self.cycle = decay_steps, end_lr, power, cycle
        super().__init__(learning_rate, last_epoch, verbose)

    def get_lr(self) -> float:
        epoch, decay_steps = self.last_epoch, self.decay_steps
        if self.cycle:
            div = 1 if self.last_epoch == 0 else math.ceil(float(self.last_epoch) / float(self.decay_steps))
            decay_steps = self.decay_steps * div
        else:
            epoch = min(self.last_epoch, self.decay_steps)
        return (self.base_lr - self.end_lr) * ((1 - float(epoch) / float(decay_steps)) ** self.power) + self.end_lr


class LinearWarmup(LRScheduler):
    """Linear ramp ``start_lr -> end_lr`` over ``warmup_steps``, then ``learning_rate`` (a float or a
    scheduler that is stepped to ``epoch - warmup_steps``)."""

    def __init__(self, learning_rate, warmup_steps: int, start_lr: float, end_lr: float, last_epoch=-1, verbose=False):
        if not isinstance(learning_rate, float | int | LRScheduler):
            raise TypeError(
                f"the type of learning_rate should be [int, float or LRScheduler], the current type is {learning_rate}"
            )
        _require(isinstance(warmup_steps, int) and warmup_steps > 0, "'warmup_steps' must be a positive integer.")
        _require(end_lr > start_lr, f"end_lr {end_lr} must be greater than start_lr {start_lr}")
        self.learning_rate, self.warmup_steps, self.start_lr, self.end_lr = (
            learning_rate,
            warmup_steps,
            start_lr,
            end_lr,
        )
        super().__init__(start_lr, last_epoch, verbose)

    def state_dict(self) -> dict:
        state = super().state_dict()
        if isinstance(self.learning_rate, LRScheduler):
            state["LinearWarmup_LR"] = self.learning_rate.state_dict()
        return state

    def set_state_dict(self, state_dict: dict) -> None:
        super().set_state_dict(state_dict)
        if isinstance(self.learning_rate, LRScheduler):
            self.learning_rate.set_state_dict(state_dict["LinearWarmup_LR"])

    def get_lr(self) -> float:
        if self.last_epoch < self.warmup_steps:
            return (self.end_lr - self.start_lr) * float(self.last_epoch) / float(self.warmup_steps) + self.start_lr
        if isinstance(self.learning_rate, LRScheduler):
            self.learning_rate.step(self.last_epoch - self.warmup_steps)
            return self.learning_rate()
        return self.learning_rate


class ExponentialDecay(LRScheduler):
    """``lr * gamma^epoch``."""

    def __init__(self, learning_rate: float, gamma: float, last_epoch=-1, verbose=False):
        _require(0.0 < gamma < 1.0, "'gamma' must be in interval (0.0, 1.0) so that the learning rate will decay.")
        self.gamma = gamma
        super().__init__(learning_rate, last_epoch, verbose)

    def get_lr(self) -> float:
        return self.base_lr * (self.gamma**self.last_epoch)


def _check_gamma(gamma: float) -> None:
    _require(gamma < 1.0, "gamma should be < 1.0.")


class MultiStepDecay(LRScheduler):
    """``lr * gamma^k`` where k counts the milestones already passed."""

    def __init__(self, learning_rate: float, milestones: Sequence[int], gamma=0.1, last_epoch=-1, verbose=False):
        if not isinstance(milestones, tuple | list):
            raise TypeError(
                f"The type of 'milestones' in 'MultiStepDecay' must be 'tuple, list', but received {type(milestones)}."
            )
        _require(
            all(a < b for a, b in zip(milestones, milestones[1:], strict=False)),
            "The elements of milestones must be incremented",
        )
        _check_gamma(gamma)
        self.milestones, self.gamma = milestones, gamma
        super().__init__(learning_rate, last_epoch, verbose)

    def get_lr(self) -> float:
        for i, milestone in enumerate(self.milestones):
            if self.last_epoch < milestone:
                return self.base_lr * (self.gamma**i)
        return self.base_lr * (self.gamma ** len(self.milestones))


class StepDecay(LRScheduler):
    """``lr * gamma^(epoch // step_size)``."""

    def __init__(self, learning_rate: float, step_size: int, gamma=0.1, last_epoch=-1, verbose=False):
        if not isinstance(step_size, int):
            raise TypeError(f"The type of 'step_size' must be 'int', but received {type(step_size)}.")
        _check_gamma(gamma)
        _require(step_size > 0, "'step_size' must be a positive integer.")
        self.step_size, self.gamma = step_size, gamma
        super().__init__(learning_rate, last_epoch, verbose)

    def get_lr(self) -> float:
        return self.base_lr * (self.gamma ** (self.last_epoch // self.step_size))


def _check_callable(fn, owner: str) -> None:
    if not callable(fn):
        raise TypeError(f"The type of 'lr_lambda' in '{owner}' must be 'function', but received {type(fn)}.")


class LambdaDecay(LRScheduler):
    """``lr * lr_lambda(epoch)``."""

    def __init__(self, learning_rate: float, lr_lambda: Callable[[int], float], last_epoch=-1, verbose=False):
        _check_callable(lr_lambda, "LambdaDecay")
        self.lr_lambda = lr_lambda
        super().__init__(learning_rate, last_epoch, verbose)

    def get_lr(self) -> float:
        return self.base_lr * self.lr_lambda(self.last_epoch)


class MultiplicativeDecay(LRScheduler):
    """``lr * prod(lr_lambda(e) for e in 1..epoch)``."""

    def __init__(self, learning_rate: float, lr_lambda: Callable[[int], float], last_epoch=-1, verbose=False):
        _check_callable(lr_lambda, "MultiplicativeDecay")
        self.lr_lambda = lr_lambda
        super().__init__(learning_rate, last_epoch, verbose)

    def get_lr(self) -> float:
        lr = self.base_lr
        for epoch in range(1, self.last_epoch + 1):
            lr = lr * self.lr_lambda(epoch)
        return lr


class ReduceOnPlateau(LRScheduler):
    """Multiply the rate by ``factor`` once ``metrics`` has not improved for ``patience`` steps."""

    def __init__(
        self,
        learning_rate: float,
        mode: str = "min",
        factor: float = 0.1,
        patience: int = 10,
        threshold: float = 1e-4,
        threshold_mode: str = "rel",
        cooldown: int = 0,
        min_lr: float = 0,
        epsilon: float = 1e-8,
        verbose: bool = False,
    ) -> None:
        mode, threshold_mode = mode.lower(), threshold_mode.lower()
        _require(mode in ("min", "max"), f"mode: {mode} is unknown!")
        _require(factor < 1.0, "new_lr = origin_lr * gamma and gamma should be < 1.0.")
        _require(threshold_mode in ("rel", "abs"), f"threshold mode: {threshold_mode} is unknown!")
        if not isinstance(learning_rate, float | int):
            raise TypeError(
                f"The type of 'learning_rate' in 'ReduceOnPlateau' must be 'float', but received {type(learning_rate)}."
            )
        self.mode, self.factor, self.threshold_mode = mode, factor, threshold_mode
        self.patience, self.threshold, self.cooldown = patience, threshold, cooldown
        self.min_lr, self.epsilon = min_lr, epsilon
        self.cooldown_counter, self.best, self.num_bad_epochs = 0, None, 0
        self.base_lr = self.last_lr = float(learning_rate)
        self.last_epoch, self.verbose, self._var_name = 0, verbose, None

    def state_keys(self) -> None:
        self.keys = ["cooldown_counter", "best", "num_bad_epochs", "last_epoch", "last_lr"]

    def step(self, metrics, epoch: int | None = None) -> None:
        self.last_epoch = self.last_epoch + 1 if epoch is None else epoch
        metrics = self._as_number(metrics)
        if self.cooldown_counter > 0:
            self.cooldown_counter -= 1
            return
        if self.best is None or self._is_better(metrics, self.best):
            self.best, self.num_bad_epochs = metrics, 0
        else:
            self.num_bad_epochs += 1
        if self.num_bad_epochs > self.patience:
            self.cooldown_counter, self.num_bad_epochs = self.cooldown, 0
            new_lr = max(self.last_lr * self.factor, self.min_lr)
            if self.last_lr - new_lr > self.epsilon:
                self.last_lr = new_lr
                self._report()

    @staticmethod
    def _as_number(metrics) -> float:
        if hasattr(metrics, "shape") and not isinstance(metrics, np.generic):
            array = np.asarray(metrics)
            if array.size != 1:
                raise ValueError(
                    f"the size of metrics must be 1, but the current metrics.size is {array.size}. "
                    "Maybe that you should call paddle.mean to process it first."
                )
            return array.reshape(-1)[0].item()
        if not isinstance(metrics, int | float | np.floating):
            raise TypeError(
                "metrics must be 'int', 'float', 'np.float64', 'numpy.ndarray' or 'paddle.Tensor', "
                f"but receive {type(metrics)}"
            )
        return metrics

    def _is_better(self, current, best) -> bool:
        if self.mode == "min":
            bar = best - best * self.threshold if self.threshold_mode == "rel" else best - self.threshold
            return current < bar
        bar = best + best * self.threshold if self.threshold_mode == "rel" else best + self.threshold
        return current > bar


class CosineAnnealingDecay(LRScheduler):
    """Cosine annealing by Paddle's recursive formula (``step(epoch)`` uses the closed form)."""

    def __init__(self, learning_rate: float, T_max: int, eta_min: float = 0, last_epoch=-1, verbose=False):  # noqa: N803
        if not isinstance(T_max, int):
            raise TypeError(f"The type of 'T_max' in 'CosineAnnealingDecay' must be 'int', but received {type(T_max)}.")
        if not isinstance(eta_min, float | int):
            raise TypeError(
                f"The type of 'eta_min' in 'CosineAnnealingDecay' must be 'float, int', but received {type(eta_min)}."
            )
        _require(T_max > 0, "'T_max' must be a positive integer.")
        self.T_max, self.eta_min = T_max, float(eta_min)
        super().__init__(learning_rate, last_epoch, verbose)

    def get_lr(self) -> float:
        if self.last_epoch == 0:
            return self.base_lr
        if (self.last_epoch - 1 - self.T_max) % (2 * self.T_max) == 0:
            return self.last_lr + (self.base_lr - self.eta_min) * (1 - math.cos(math.pi / self.T_max)) / 2
        return (1 + math.cos(math.pi * self.last_epoch / self.T_max)) / (
            1 + math.cos(math.pi * (self.last_epoch - 1) / self.T_max)
        ) * (self.last_lr - self.eta_min) + self.eta_min

    def _get_closed_form_lr(self) -> float:
        return self.eta_min + (self.base_lr - self.eta_min) * (1 + math.cos(math.pi * self.last_epoch / self.T_max)) / 2


class OneCycleLR(LRScheduler):
    """Warm up to ``max_learning_rate`` then anneal to ``end_learning_rate`` (optionally three phases)."""

    def __init__(
        self,
        max_learning_rate: float,
        total_steps: int,
        divide_factor: float = 25.0,
        end_learning_rate: float = 0.0001,
        phase_pct: float = 0.3,
        anneal_strategy: str = "cos",
        three_phase: bool = False,
        last_epoch: int = -1,
        verbose: bool = False,
    ) -> None:
        for name, value in (("max_learning_rate", max_learning_rate), ("end_learning_rate", end_learning_rate)):
            if not isinstance(value, float | int):
                raise TypeError(f"'{name}' must be 'float' or 'int', but received {type(value)}")
            _require(value >= 0, f"'{name}' must be a positive integer.")
        if not isinstance(total_steps, int):
            raise TypeError(f"'total_step' must be 'int', but received {type(total_steps)}")
        _require(total_steps > 0, "'total_step' must be a positive integer.")
        if not isinstance(phase_pct, float):
            raise TypeError(f"'phase_pct' must be 'float', but received {type(phase_pct)}")
        _require(0 <= phase_pct <= 1, f"'phase_pct' must be between 0 and 1, but received {phase_pct}")
        if not isinstance(divide_factor, float | int):
            raise TypeError(f"'divide_factor' must be 'float' or 'int', but received {type(divide_factor)}")
        self.total_steps = total_steps
        initial_lr, min_lr = max_learning_rate / float(divide_factor), float(end_learning_rate)
        last = total_steps - 1
        if three_phase:
            _require(phase_pct < 0.5, "When three_phase is True, 'phase_pct' must be less than 0.5")
            steps = [0, phase_pct * total_steps - 1, 2 * phase_pct * total_steps - 2, last, last]
            sizes = [steps[1] - steps[0], steps[2] - steps[1], steps[3] - steps[2], steps[3] - steps[2]]
            self._lr_config = [initial_lr, max_learning_rate, initial_lr, min_lr]
        else:
            steps = [0, phase_pct * total_steps - 1, last, last]
            sizes = [steps[1] - steps[0], steps[2] - steps[1], steps[2] - steps[1]]
            self._lr_config = [initial_lr, max_learning_rate, min_lr]
        self._step_config, self._steps_size = steps, sizes
        annealers = {"cos": self._cos_annealing, "linear": self._linear_annealing}
        _require(
            anneal_strategy in annealers,
            f"'anneal_strategy' must by one of 'cos' or 'linear', but received {anneal_strategy}",
        )
        self.anneal_func = annealers[anneal_strategy]
        super().__init__(initial_lr, last_epoch, verbose)

    @staticmethod
    def _cos_annealing(start_lr: float, end_lr: float, pct: float) -> float:
        return end_lr + (start_lr - end_lr) / 2.0 * (math.cos(math.pi * pct) + 1)

    @staticmethod
    def _linear_annealing(start_lr: float, end_lr: float, pct: float) -> float:
        return (end_lr - start_lr) * pct + start_lr

    def get_lr(self) -> float:
        step = self.last_epoch
        _require(
            step <= self.total_steps,
            f"Tried to step {step} times. However the number of total steps is {self.total_steps}",
        )
        phases = zip(self._step_config[1:], self._steps_size, strict=False)
        for i, (end_step, size) in enumerate(phases):
            if step <= end_step or i == len(self._lr_config) - 2:
                return self.anneal_func(
                    self._lr_config[i], self._lr_config[i + 1], (step - self._step_config[i]) / size
                )
        return self.last_lr


class LinearLR(LRScheduler):
    """Scale the rate linearly from ``start_factor`` to ``end_factor`` over ``total_steps``."""

    def __init__(
        self, learning_rate: float, total_steps: int, start_factor=1.0 / 3, end_factor=1.0, last_epoch=-1, verbose=False
    ):
        _require(
            0 < start_factor <= 1.0,
            f"`start_factor` must be greater than 0 and less or equal to 1, but got {start_factor}",
        )
        _require(0 <= end_factor <= 1.0, f"`end_factor` must be greater than 0 and less than 1, but got {end_factor}")
        _require(total_steps > 0, f"`total_steps` must be greater than 0, but got {total_steps}")
        self.start_factor, self.end_factor, self.total_steps = start_factor, end_factor, total_steps
        super().__init__(learning_rate, last_epoch, verbose)

    def get_lr(self) -> float:
        if self.last_epoch == 0:
            return self.base_lr * self.start_factor
        if self.last_epoch > self.total_steps:
            return self.last_lr
        base = self.total_steps * self.start_factor
        span = self.end_factor - self.start_factor
        return self.last_lr * (1.0 + span / (base + (self.last_epoch - 1) * span))


class CyclicLR(LRScheduler):
    """Cycle between ``base_learning_rate`` and ``max_learning_rate`` (triangular, triangular2, exp_range)."""

    def __init__(
        self,
        base_learning_rate: float,
        max_learning_rate: float,
        step_size_up: int,
        step_size_down: int | None = None,
        mode: str = "triangular",
        exp_gamma: float = 1.0,
        scale_fn: Callable[[float], float] | None = None,
        scale_mode: str = "cycle",
        last_epoch: int = -1,
        verbose: bool = False,
    ) -> None:
        _require(
            max_learning_rate >= 0, f"'max_learning_rate' must be a positive integer, but received {max_learning_rate}"
        )
        for name, value in (("step_size_up", step_size_up), ("step_size_down", step_size_down)):
            if value is None:
                continue
            if not isinstance(value, int):
                raise TypeError(f"The type of '{name}' must be int, but received {type(value)}")
            _require(value > 0, f"'{name}' must be a positive integer, but received {value}")
        _require(
            mode in ("triangular", "triangular2", "exp_range") or scale_fn is not None,
            "'mode' is invalid and 'scale_fn' is not specified, make sure one of 'mode' or 'scale_fn' is valid",
        )
        _require(scale_mode in ("cycle", "iterations"), "'scale_mode' must be one of 'cycle' or 'iterations")
        up = float(step_size_up)
        down = float(step_size_down) if step_size_down is not None else up
        self.cycle_size = up + down
        self.step_up_pct = up / self.cycle_size
        self.max_lr = float(max_learning_rate)
        self.amplitude = self.max_lr - base_learning_rate
        self.mode, self.gamma = mode, exp_gamma
        if scale_fn is None:
            builtin = {
                "triangular": (lambda x: 1.0, "cycle"),
                "triangular2": (lambda x: 1 / (2.0 ** (x - 1)), "cycle"),
                "exp_range": (lambda x: self.gamma**x, "iterations"),
            }
            self.scale_fn, self.scale_mode = builtin[mode]
        else:
            self.scale_fn, self.scale_mode = scale_fn, scale_mode
        super().__init__(base_learning_rate, last_epoch, verbose)

    def get_lr(self) -> float:
        iterations = self.last_epoch
        cycle = 1 + iterations // self.cycle_size
        pct = 1.0 + iterations / self.cycle_size - cycle
        if pct <= self.step_up_pct:
            scale = pct / self.step_up_pct
        else:
            scale = (1 - pct) / (1 - self.step_up_pct)
        x = cycle if self.scale_mode == "cycle" else iterations
        return self.base_lr + self.amplitude * scale * self.scale_fn(x)


class CosineAnnealingWarmRestarts(LRScheduler):
    """Cosine annealing restarted every ``T_i`` steps, ``T_i`` growing by ``T_mult``."""

    def __init__(
        self, learning_rate: float, T_0: int, T_mult: int = 1, eta_min: float = 0, last_epoch=-1, verbose=False
    ):  # noqa: N803
        _require(isinstance(T_0, int) and T_0 > 0, f"Expected positive integer T_0, but got {T_0}")
        _require(isinstance(T_mult, int) and T_mult >= 1, f"Expected integer T_mult >= 1, but got {T_mult}")
        self.T_0 = self.T_i = T_0
        self.T_mult, self.eta_min, self.T_cur = T_mult, eta_min, last_epoch
        super().__init__(learning_rate, last_epoch, verbose)

    def get_lr(self) -> float:
        return self.eta_min + (self.base_lr - self.eta_min) * (1 + math.cos(math.pi * self.T_cur / self.T_i)) / 2

    def step(self, epoch: int | None = None) -> None:
        if epoch is None and self.last_epoch < 0:
            epoch = 0
        if epoch is None:
            epoch = self.last_epoch + 1
            self.T_cur = self.T_cur + 1
            if self.T_cur >= self.T_i:
                self.T_cur, self.T_i = self.T_cur - self.T_i, self.T_i * self.T_mult
        else:
            _require(epoch >= 0, f"Expected non-negative epoch, but got {epoch}")
            if epoch >= self.T_0:
                if self.T_mult == 1:
                    self.T_cur = epoch % self.T_0
                else:
                    n = int(math.log(epoch / self.T_0 * (self.T_mult - 1) + 1, self.T_mult))
                    self.T_cur = epoch - self.T_0 * (self.T_mult**n - 1) / (self.T_mult - 1)
                    self.T_i = self.T_0 * self.T_mult**n
            else:
                self.T_i, self.T_cur = self.T_0, epoch
        self.last_epoch = math.floor(epoch)
        self.last_lr = self.get_lr()
        self._report()
