"""``paddle.callbacks``: hooks into Model.fit/evaluate/predict (progress, checkpoints, early stop, LR)."""

from __future__ import annotations

import math
import os

import numpy as np


class Callback:
    """Every hook receives the step or epoch and a dict of logs (loss, metrics, batch_size...)."""

    def __init__(self) -> None:
        self.model = None
        self.params: dict = {}

    def set_model(self, model) -> None:
        self.model = model

    def set_params(self, params: dict) -> None:
        self.params = params

    def on_train_begin(self, logs=None): ...
    def on_train_end(self, logs=None): ...
    def on_epoch_begin(self, epoch, logs=None): ...
    def on_epoch_end(self, epoch, logs=None): ...
    def on_train_batch_begin(self, step, logs=None): ...
    def on_train_batch_end(self, step, logs=None): ...
    def on_eval_begin(self, logs=None): ...
    def on_eval_end(self, logs=None): ...
    def on_eval_batch_begin(self, step, logs=None): ...
    def on_eval_batch_end(self, step, logs=None): ...
    def on_predict_begin(self, logs=None): ...
    def on_predict_end(self, logs=None): ...
    def on_predict_batch_begin(self, step, logs=None): ...
    def on_predict_batch_end(self, step, logs=None): ...


class CallbackList:
    """Fans each hook out to every callback."""

    def __init__(self, callbacks, model, params: dict) -> None:
        self.callbacks = list(callbacks)
        for cb in self.callbacks:
            cb.set_model(model)
            cb.set_params(params)

    def __getattr__(self, hook: str):
        def call(*args, **kwargs):
            for cb in self.callbacks:
                getattr(cb, hook)(*args, **kwargs)

        return call


def _format(logs: dict) -> str:
    parts = []
    for key, value in logs.items():
        if key in ("batch_size", "step"):
            continue
        value = np.asarray(value).reshape(-1)
        parts.append(f"{key}: " + " ".join(f"{v:.4f}" if isinstance(v, float | np.floating) else str(v) for v in value))
    return " - ".join(parts)


class ProgBarLogger(Callback):
    """A rich progress bar per epoch with loss, metrics and throughput; verbose=0 silences it."""

    def __init__(self, log_freq: int = 1, verbose: int = 2) -> None:
        super().__init__()
        self.log_freq, self.verbose = log_freq, verbose
        self._progress = None

    def _start(self, description: str, total) -> None:
        if not self.verbose:
            return
        from rich.progress import (
            BarColumn,
            MofNCompleteColumn,
            Progress,
            TextColumn,
            TimeElapsedColumn,
            TimeRemainingColumn,
        )

        self._progress = Progress(
            TextColumn("[bold]{task.description}"), BarColumn(), MofNCompleteColumn(),
            TimeElapsedColumn(), TimeRemainingColumn(), TextColumn("{task.fields[logs]}"), transient=False,
        )  # fmt: skip
        self._progress.start()
        self._task = self._progress.add_task(description, total=total, logs="")

    def _update(self, step: int, logs) -> None:
        if self._progress is not None and (step + 1) % self.log_freq == 0:
            self._progress.update(self._task, completed=step + 1, logs=_format(logs or {}))

    def _stop(self, logs) -> None:
        if self._progress is not None:
            self._progress.update(self._task, logs=_format(logs or {}))
            self._progress.stop()
            self._progress = None

    def on_epoch_begin(self, epoch, logs=None):
        self._start(f"Epoch {epoch + 1}/{self.params.get('epochs', '?')}", self.params.get("steps"))

    def on_train_batch_end(self, step, logs=None):
        self._update(step, logs)

    def on_epoch_end(self, epoch, logs=None):
        self._stop(logs)

    def on_eval_begin(self, logs=None):
        self._start("Eval", (logs or {}).get("steps"))

    def on_eval_batch_end(self, step, logs=None):
        self._update(step, logs)

    def on_eval_end(self, logs=None):
        self._stop(logs)


class ModelCheckpoint(Callback):
    """Save ``save_dir/{epoch}`` every ``save_freq`` epochs and ``save_dir/final`` at the end."""

    def __init__(self, save_freq: int = 1, save_dir: str | None = None) -> None:
        super().__init__()
        self.save_freq, self.save_dir = save_freq, save_dir

    def on_epoch_end(self, epoch, logs=None):
        if self.save_dir and (epoch + 1) % self.save_freq == 0:
            self.model.save(os.path.join(self.save_dir, str(epoch)))

    def on_train_end(self, logs=None):
        if self.save_dir:
            self.model.save(os.path.join(self.save_dir, "final"))


class LRScheduler(Callback):
    """Step the optimizer's LR scheduler after every batch (``by_step``) or every epoch (``by_epoch``)."""

    def __init__(self, by_step: bool = True, by_epoch: bool = False) -> None:
        super().__init__()
        if by_step == by_epoch:
            raise ValueError("LRScheduler callback: set exactly one of by_step and by_epoch")
        self.by_step, self.by_epoch = by_step, by_epoch

    def _step(self) -> None:
        scheduler = getattr(self.model._optimizer, "_learning_rate", None)
        if hasattr(scheduler, "step"):
            scheduler.step()

    def on_train_batch_end(self, step, logs=None):
        if self.by_step:
            self._step()

    def on_epoch_end(self, epoch, logs=None):
        if self.by_epoch:
            self._step()


class EarlyStopping(Callback):
    """Stop fitting when ``monitor`` (an eval metric) has not improved by ``min_delta`` for ``patience`` evals."""

    def __init__(
        self,
        monitor: str = "loss",
        mode: str = "auto",
        patience: int = 0,
        verbose: int = 1,
        min_delta: float = 0,
        baseline=None,
        save_best_model: bool = True,
    ) -> None:
        super().__init__()
        if mode not in ("auto", "min", "max"):
            raise ValueError(f"EarlyStopping: mode must be 'auto', 'min' or 'max', got {mode!r}")
        if mode == "auto":
            mode = "max" if "acc" in monitor else "min"
        self.monitor, self.mode, self.patience, self.verbose = monitor, mode, patience, verbose
        self.min_delta = abs(min_delta)
        self.baseline, self.save_best_model = baseline, save_best_model
        self.wait = 0
        self.best = None
        self.stopped_epoch = 0

    def on_train_begin(self, logs=None):
        self.wait = 0
        self.best = self.baseline if self.baseline is not None else (math.inf if self.mode == "min" else -math.inf)

    def _improved(self, value: float) -> bool:
        if self.mode == "min":
            return value < self.best - self.min_delta
        return value > self.best + self.min_delta

    def on_eval_end(self, logs=None):
        if not logs or self.monitor not in logs:
            raise KeyError(
                f"EarlyStopping: monitor {self.monitor!r} is not among the eval results {sorted(logs or {})}"
            )
        value = float(np.asarray(logs[self.monitor]).reshape(-1)[0])
        if self._improved(value):
            self.best, self.wait = value, 0
            save_dir = self.params.get("save_dir")
            if self.save_best_model and save_dir:
                self.model.save(os.path.join(save_dir, "best_model"))
            return
        self.wait += 1
        if self.wait > self.patience:
            self.model.stop_training = True
