"""``paddle.static.ExponentialMovingAverage``: shadow averages of a static program's parameters,
swapped in for evaluation.

``update()`` makes every later ``Executor.run`` of the program (after its optimizer step) fold
the parameters into their averages, ``EMA_t = decay * EMA_{t-1} + (1 - decay) * param``;
``apply(executor)`` puts the bias-corrected averages ``EMA_t / (1 - decay^t)`` into the
parameters for the block and restores them after (``restore`` does it by hand). With
``thres_steps`` the decay starts low: ``min(decay, (1 + t) / (10 + t))`` at step ``t``, counted
here as the number of updates (Paddle takes it from a step variable, usually the same count).
Like Paddle's, it works in static mode only.
"""

from __future__ import annotations

import contextlib

import numpy as np

from .. import modes
from ..errors import ConfigError


class ExponentialMovingAverage:
    def __init__(self, decay: float = 0.999, thres_steps=None, name=None) -> None:
        program = modes.recording()
        if program is None:
            raise ConfigError("ExponentialMovingAverage works in static mode; call paddle.enable_static() first")
        if not 0.0 <= float(decay) <= 1.0:
            raise ConfigError(f"ExponentialMovingAverage: decay must be in [0, 1], got {decay}")
        self._program, self._decay, self._scheduled = program, float(decay), thres_steps is not None
        self._params = [p for p in program.all_parameters() if p.do_model_average is not False]
        self._averages = {id(p): np.zeros(p.shape, p.dtype) for p in self._params}
        self._last_rate, self._steps = self._decay, 0
        self._saved: list[np.ndarray] | None = None

    def _rate(self) -> float:
        t = self._steps
        return min(self._decay, (1.0 + t) / (10.0 + t)) if self._scheduled else self._decay

    def update(self) -> None:
        """Fold the parameters into their averages after every run of the program from now on."""
        self._program._after_run.append(self._fold)

    def _fold(self) -> None:
        rate = self._rate()
        for p in self._params:
            average = self._averages[id(p)]
            average *= rate
            average += (1.0 - rate) * p.numpy()
        self._last_rate = rate
        self._steps += 1

    @contextlib.contextmanager
    def apply(self, executor=None, need_restore: bool = True):
        """The bias-corrected averages in the parameters inside the block (restored after it
        unless ``need_restore`` is False)."""
        self._saved = [p.numpy().copy() for p in self._params]
        correction = 1.0 - self._last_rate**self._steps if self._steps else 1.0  # Paddle's: last decay ^ t
        for p in self._params:
            p.set_value((self._averages[id(p)] / correction).astype(p.dtype))
        try:
            yield
        finally:
            if need_restore:
                self.restore(executor)

    def restore(self, executor=None) -> None:
        """Put back the parameters ``apply`` replaced."""
        if self._saved is None:
            raise ConfigError("ExponentialMovingAverage.restore: nothing to restore; apply() first")
        for p, value in zip(self._params, self._saved, strict=True):
            p.set_value(value)
        self._saved = None
