"""The trainer behind ``paddlectl train``: a task and a config in, checkpoints, a log and a curve out.

What a run leaves in ``Global.output_dir``::

    latest/  best/  epoch_N/     checkpoints (see checkpoint_dir), written atomically
    metrics.jsonl                train records every log_interval steps, eval records
    loss_curve.png               drawn from metrics.jsonl at the end (also after Ctrl-C)

Resuming is exact: the checkpoint holds the model, the optimizer (with its scheduler), the
random generator's state at the start of the interrupted epoch and at the checkpoint, and the
step counters. The epoch's batch order is drawn from the first state and the remaining batches
replayed, so a resumed run computes the same losses as one that never stopped (bit for bit with
``num_workers: 0``; with worker processes, random augmentation happens in the workers and is
reproducible per epoch, not across an interruption). Ctrl-C finishes the current step, writes
``latest/`` and returns; a second Ctrl-C aborts at once.
"""

from __future__ import annotations

import math
import random
import shutil
import signal
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from ..core.autograd import no_grad
from ..distributed.rank_share import RankShare
from ..errors import CheckpointError, ConfigError, DataError
from ..io import DataLoader
from ..ops.random import get_rng_state as _framework_rng_state
from ..ops.random import seed
from ..ops.random import set_rng_state as _set_framework_rng_state
from . import checkpoint_dir
from .lineage import build_lineage
from .precision import training_precision
from .task import Task, compute_metrics
from .train_log import CURVE_FILE, LOG_FILE, MetricsLog, plot_loss_curve


def _seed_globals(value: int) -> None:
    """Python's and NumPy's global streams, which Paddle's transforms draw augmentations from. Seeded
    per epoch: a library imported lazily may draw from them (rich does), which must not shift them."""
    random.seed(value)
    np.random.seed(value % 2**32)


def get_rng_state() -> dict:
    """Every stream a training step draws from, as JSON-able values (a checkpoint keeps them)."""
    version, words, gauss = random.getstate()
    name, keys, pos, has_gauss, cached = np.random.get_state()
    return {
        **_framework_rng_state(),
        "python": [version, list(words), gauss],
        "numpy_global": [name, keys.tolist(), pos, has_gauss, cached],
    }


def set_rng_state(state: dict) -> None:
    _set_framework_rng_state(state)
    if "python" not in state:  # a checkpoint from before these streams were kept
        return
    try:
        version, words, gauss = state["python"]
        random.setstate((version, tuple(words), gauss))
        name, keys, pos, has_gauss, cached = state["numpy_global"]
        np.random.set_state((name, np.asarray(keys, dtype=np.uint32), pos, has_gauss, cached))
    except (KeyError, TypeError, ValueError) as exc:
        raise DataError(f"random state: the Python/NumPy global streams are malformed ({exc})") from None


@dataclass
class TrainResult:
    output_dir: Path
    epochs_done: int
    global_step: int
    interrupted: bool
    best: dict | None
    last_eval: dict = field(default_factory=dict)

    @property
    def latest(self) -> Path:
        return self.output_dir / "latest"


@dataclass
class _Counters:
    """Where training stands; what state.json records besides the RNG states."""

    epoch: int = 0  # completed epochs
    step_in_epoch: int = 0  # batches done in the epoch in progress
    global_step: int = 0
    best: dict | None = None
    last_eval: dict = field(default_factory=dict)


class _StopFlag:
    """First SIGINT asks the loop to stop after the current step; a second one interrupts now."""

    def __init__(self) -> None:
        self.requested = False
        self._previous = None

    def __enter__(self):
        if threading.current_thread() is threading.main_thread():
            self._previous = signal.signal(signal.SIGINT, self._handle)
        return self

    def _handle(self, signum, frame) -> None:
        if self.requested:
            raise KeyboardInterrupt
        self.requested = True

    def __exit__(self, *exc) -> None:
        if self._previous is not None:
            signal.signal(signal.SIGINT, self._previous)


def _global(config: dict, key: str, default):
    value = (config.get("Global") or {}).get(key)
    return default if value is None else value


def _positive(config: dict, key: str, default: int) -> int:
    value = _global(config, key, default)
    if not isinstance(value, int) or value < 1:
        raise ConfigError(f"Global.{key} must be a positive integer, got {value!r}")
    return value


def _rename_optimizer_state(state: dict, names: dict[str, str], what: str) -> dict:
    """Optimizer state with accumulator keys ``<param name>_<accumulator>`` re-prefixed by ``names``.

    Paddle names accumulators after parameter names (``linear_0.w_0_moment1_0``), and those
    names depend on how many layers the process built before; checkpoints store them under the
    parameter's structured name (``fc.0.weight``) so a resume in any process finds its state.
    """
    prefixes = sorted(names, key=len, reverse=True)
    renamed = {}
    for key, value in state.items():
        if key == "master_weights":  # amp O2's float32 masters, by parameter name
            renamed[key] = {names.get(name, name): master for name, master in value.items()}
            continue
        if key == "LR_Scheduler":
            renamed[key] = value
            continue
        prefix = next((p for p in prefixes if key.startswith(p + "_")), None)
        if prefix is None:
            raise CheckpointError(
                f"{what}: optimizer state {key!r} belongs to no parameter of the model; "
                "the checkpoint was written for another architecture"
            )
        renamed[names[prefix] + key[len(prefix) :]] = value
    return renamed


def _lr_of(optimizer) -> float:
    lr = optimizer._learning_rate
    return float(lr() if callable(lr) else lr)


class _Progress:
    """A rich bar per epoch: epoch, step, loss, lr, throughput, ETA."""

    def __init__(self, console, enabled: bool) -> None:
        self.console, self.enabled = console, enabled
        self._bar = None

    def start(self, epoch: int, epochs: int, total: int, done: int) -> None:
        if not self.enabled:
            return
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

        self._bar = Progress(
            TextColumn("[bold]epoch {task.fields[epoch]}"), BarColumn(), MofNCompleteColumn(),
            TextColumn("loss {task.fields[loss]}"), TextColumn("lr {task.fields[lr]}"),
            TextColumn("{task.fields[ips]} img/s"), TextColumn("ETA"), TimeRemainingColumn(),
            console=self.console, transient=False,
        )  # fmt: skip
        self._bar.start()
        self._task = self._bar.add_task(
            "train", total=total, completed=done, epoch=f"{epoch}/{epochs}", loss="-", lr="-", ips="-"
        )

    def update(self, done: int, loss: float, lr: float, ips: float) -> None:
        if self._bar is not None:
            self._bar.update(self._task, completed=done, loss=f"{loss:.4f}", lr=f"{lr:.3g}", ips=f"{ips:.0f}")

    def stop(self) -> None:
        if self._bar is not None:
            self._bar.stop()
            self._bar = None

    def print(self, text: str) -> None:
        if self.console is not None:
            self.console.print(text, highlight=False)


class Trainer:
    """Train ``task`` as ``config`` says; ``train()`` returns a TrainResult (``interrupted`` after Ctrl-C)."""

    def __init__(self, task: Task, config: dict, console=None, progress: bool = True) -> None:
        self.task, self.config = task, config
        self.console = console
        self.progress = _Progress(console, progress and console is not None)

    # ----- set-up -----------------------------------------------------------------------
    def _build(self, resume) -> None:
        cfg, task = self.config, self.task
        task.check_config(cfg)
        self.epochs = _positive(cfg, "epochs", 1)
        self.eval_interval = _positive(cfg, "eval_interval", 1)
        self.log_interval = _positive(cfg, "log_interval", 10)
        self.save_interval = _positive(cfg, "save_interval", 1)
        self.share = RankShare()  # this rank's part of a `paddlectl train --nproc N` run
        self.output_dir = self.share.output_dir(Path(_global(cfg, "output_dir", "output")))
        checkpoint = checkpoint_dir.read(resume) if resume is not None else None
        self.seed = int(_global(cfg, "seed", 42))
        seed(self.seed)
        self.model = task.build_model(cfg)
        pretrained = _global(cfg, "pretrained_model", None)
        if pretrained and checkpoint is None:
            self._load_weights(checkpoint_dir.model_weights(pretrained), f"Global.pretrained_model {pretrained!r}")
        self.train_set, self.eval_set = task.build_datasets(cfg)
        self.train_opts = task.build_loader_options(cfg, "train")
        self.eval_opts = task.build_loader_options(cfg, "eval")
        try:
            o = self.train_opts
            self.train_sampler = task.train_batch_sampler(cfg, self.train_set, o)  # each pass: one epoch's order
            steps = len(self.train_sampler)
            DataLoader(
                self.eval_set, batch_size=self.eval_opts["batch_size"], num_workers=self.eval_opts["num_workers"]
            )
            DataLoader(self.train_set, batch_size=o["batch_size"], num_workers=o["num_workers"])
        except (TypeError, ValueError) as exc:
            raise ConfigError(f"Train.loader / Eval.loader: {exc}") from None
        if steps == 0:
            raise ConfigError(
                f"the training set has {len(self.train_set)} samples, fewer than one batch of "
                f"{self.train_opts['batch_size']} with drop_last; lower Train.loader.batch_size"
            )
        self.optimizer, self.scheduler = task.build_optimizer(cfg, self.model, steps)
        self.precision = training_precision(cfg, self.model, self.optimizer)
        self.optimizer = self.precision.optimizer
        self.train_model = self.share.wrap(self.model)
        self.interval = task.scheduler_interval(cfg)
        self.loss_fn = task.build_loss(cfg)
        self.indicator = task.main_indicator(cfg)
        self.counters = _Counters()
        self.rng = {"epoch": get_rng_state(), "now": get_rng_state()}
        self.lineage = build_lineage(cfg)
        if checkpoint is not None:
            self._restore(checkpoint)

    def _load_weights(self, weights: dict, what: str) -> None:
        try:
            missing, unexpected = self.model.set_state_dict(weights)
        except (ValueError, TypeError) as exc:
            raise CheckpointError(f"{what} does not fit the model in Architecture: {exc}") from None
        if missing:
            raise CheckpointError(
                f"{what} lacks {len(missing)} of the model's weights (e.g. {missing[0]}); it was saved from "
                "another architecture"
            )

    def _restore(self, checkpoint) -> None:
        state = checkpoint.state
        if state.get("task") != self.task.name:
            raise ConfigError(
                f"checkpoint {str(checkpoint.path)!r} was written by task {state.get('task')!r}, "
                f"the config trains {self.task.name!r}; resume with the config that started it"
            )
        what = f"checkpoint {str(checkpoint.path)!r}"
        self._load_weights(checkpoint.model, what)
        by_structure = {n: p.name for n, p in self.model.named_parameters()}
        self.optimizer.set_state_dict(_rename_optimizer_state(checkpoint.optimizer, by_structure, what))
        c = self.counters
        c.epoch, c.step_in_epoch, c.global_step = state["epoch"], state["step_in_epoch"], state["global_step"]
        c.best, c.last_eval = state.get("best"), state.get("last_eval") or {}
        self.rng = {"epoch": state["rng"]["epoch"], "now": state["rng"]["now"]}
        try:
            set_rng_state(self.rng["epoch"])
            set_rng_state(self.rng["now"])
        except DataError as exc:
            raise CheckpointError(f"{what}: {exc}") from None

    # ----- checkpoints ------------------------------------------------------------------
    def _save(self, name: str) -> Path:
        c = self.counters
        state = {
            "task": self.task.name,
            "epoch": c.epoch,
            "step_in_epoch": c.step_in_epoch,
            "global_step": c.global_step,
            "best": c.best,
            "last_eval": c.last_eval,
            "lr": _lr_of(self.optimizer),
            "rng": {"epoch": self.rng["epoch"], "now": get_rng_state()},
            "saved_at": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
            "lineage": self.lineage,
        }
        by_param = {p.name: n for n, p in self.model.named_parameters()}
        optimizer_state = _rename_optimizer_state(self.optimizer.state_dict(), by_param, "training")
        return checkpoint_dir.write(
            self.output_dir / name, self.model.state_dict(), optimizer_state, state, self.config
        )

    # ----- loops ------------------------------------------------------------------------
    def _epoch_batches(self) -> list[list[int]]:
        """The epoch's batch order, drawn from the generator state at the start of the epoch."""
        c = self.counters
        if c.step_in_epoch == 0:
            _seed_globals(self.seed + 7919 * c.epoch)
            self.rng["epoch"] = get_rng_state()
        else:
            set_rng_state(self.rng["epoch"])
        batches = list(self.train_sampler)
        if c.step_in_epoch:
            set_rng_state(self.rng["now"])
        return batches

    def _train_epoch(self, stop: _StopFlag) -> bool:
        """One (remaining) epoch; False if Ctrl-C stopped it."""
        c = self.counters
        batches = self._epoch_batches()
        loader = DataLoader(
            self.train_set,
            batch_sampler=self.share.batches(batches[c.step_in_epoch :]),
            collate_fn=self.task.train_collate_fn(self.config),
            num_workers=self.train_opts["num_workers"],
        )
        self.model.train()
        self.progress.start(c.epoch + 1, self.epochs, len(batches), c.step_in_epoch)
        window_start, window_cpu, window_samples = time.perf_counter(), time.process_time(), 0
        try:
            for inputs, labels in loader:
                loss = self.share.mean(self.precision.step(self.train_model, self.loss_fn, inputs, labels))
                lr = _lr_of(self.optimizer)
                if self.scheduler is not None and self.interval == "step":
                    self.scheduler.step()
                window_samples += len(batches[c.step_in_epoch])  # the global batch: every rank's rows
                c.step_in_epoch += 1
                c.global_step += 1
                value = float(loss.item())
                if not math.isfinite(value):
                    raise FloatingPointError(
                        f"the training loss became {value} at step {c.global_step}; lower the learning rate "
                        "(Optimizer.lr.learning_rate) or resume from an earlier checkpoint"
                    )
                elapsed = time.perf_counter() - window_start
                ips = window_samples / elapsed if elapsed > 0 else 0.0
                cpu = time.process_time() - window_cpu  # this process's CPU time: unlike ips, blind to other load
                if c.global_step % self.log_interval == 0 or c.step_in_epoch == len(batches):
                    self.log.append(
                        {
                            "kind": "train",
                            "epoch": c.epoch + 1,
                            "step": c.global_step,
                            "loss": value,
                            "lr": lr,
                            "samples": window_samples,
                            "samples_per_s": ips,
                            "samples_per_cpu_s": window_samples / cpu if cpu > 0 else 0.0,
                        }
                    )
                    window_start, window_cpu, window_samples = time.perf_counter(), time.process_time(), 0
                self.progress.update(c.step_in_epoch, value, lr, ips)
                if stop.requested:
                    return False
        finally:
            self.progress.stop()
        c.epoch += 1
        c.step_in_epoch = 0
        if self.scheduler is not None and self.interval == "epoch":
            self.scheduler.step()
        return True

    @no_grad()
    def evaluate(self) -> dict[str, float]:
        """Loss and every metric of the task over the whole eval set."""
        self.model.eval()
        loader = DataLoader(
            self.eval_set,
            batch_size=self.eval_opts["batch_size"],
            shuffle=False,
            num_workers=self.eval_opts["num_workers"],
        )
        outputs, labels, loss_sum = [], [], 0.0
        for inputs, batch_labels in loader:
            out = self.model(inputs)
            loss_sum += float(self.loss_fn(out, batch_labels).item()) * int(inputs.shape[0])
            outputs.append(out.numpy())
            labels.append(batch_labels.numpy())
        self.model.train()
        stacked = np.concatenate(outputs)
        results = compute_metrics(self.task, self.config, [stacked], np.concatenate(labels))
        return {"loss": loss_sum / len(stacked), **results}

    def _after_epoch(self) -> None:
        c = self.counters
        is_best = False
        if c.epoch % self.eval_interval == 0 or c.epoch == self.epochs:
            c.last_eval = self.evaluate()
            self.log.append({"kind": "eval", "epoch": c.epoch, "step": c.global_step, **c.last_eval})
            value = c.last_eval[self.indicator]
            is_best = c.best is None or value > c.best["value"]
            if is_best:
                c.best = {"indicator": self.indicator, "value": value, "epoch": c.epoch}
            shown = ", ".join(f"{k}={v:.4f}" for k, v in c.last_eval.items())
            self.progress.print(
                f"epoch {c.epoch}/{self.epochs} eval: {shown}" + (" [green](best)[/]" if is_best else "")
            )
        latest = self._save("latest")
        if is_best:
            checkpoint_dir.publish(latest, self.output_dir / "best")
        if c.epoch % self.save_interval == 0 or c.epoch == self.epochs:
            checkpoint_dir.publish(latest, self.output_dir / f"epoch_{c.epoch}")

    def train(self, resume=None) -> TrainResult:
        """Run (or, with ``resume`` = a checkpoint directory, continue) training to ``Global.epochs``."""
        self._build(resume)
        c = self.counters
        fresh = not self.output_dir.exists()
        self.output_dir.mkdir(parents=True, exist_ok=True)
        self.log = MetricsLog(self.output_dir / LOG_FILE)
        self.log.truncate_after(c.global_step)
        interrupted = False
        try:
            with _StopFlag() as stop:
                while c.epoch < self.epochs:
                    if not self._train_epoch(stop):
                        interrupted = True
                        self._save("latest")
                        break
                    self._after_epoch()
                    if stop.requested and c.epoch < self.epochs:
                        interrupted = True
                        break
        except Exception:
            if fresh and not (self.output_dir / "latest").exists():
                shutil.rmtree(self.output_dir, ignore_errors=True)  # nothing worth keeping: leave no half run
            raise
        plot_loss_curve(self.log.records(), self.output_dir / CURVE_FILE, self.indicator)
        self.share.finish(self.output_dir)
        return TrainResult(self.output_dir, c.epoch, c.global_step, interrupted, c.best, c.last_eval)


def train(task: Task, config: dict, resume=None, console=None, progress: bool = True) -> TrainResult:
    """``Trainer(task, config).train(resume)``."""
    return Trainer(task, config, console=console, progress=progress).train(resume)


__all__ = ["TrainResult", "Trainer", "train"]
