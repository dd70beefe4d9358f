"""``paddle.Model``: prepare / fit / evaluate / predict / save / load around a Layer."""

from __future__ import annotations

import os

import numpy as np

from ..core.autograd import no_grad
from ..core.tensor import Tensor
from ..io import DataLoader, Dataset
from ..metric import Metric
from ..serialization import load, save
from .callbacks import CallbackList, ModelCheckpoint, ProgBarLogger


def _to_list(value) -> list:
    if value is None:
        return []
    return list(value) if isinstance(value, list | tuple) else [value]


def _as_tensors(values) -> list[Tensor]:
    return [v if isinstance(v, Tensor) else Tensor._wrap(np.asarray(v)) for v in _to_list(values)]


class Model:
    """Trains and evaluates ``network``; batches are ``inputs + labels`` in that order, as in Paddle."""

    def __init__(self, network, inputs=None, labels=None) -> None:
        self.network = network
        self._inputs, self._labels = _to_list(inputs), _to_list(labels)
        self._optimizer = None
        self._loss = None
        self._metrics = []
        self.stop_training = False

    # ----- set-up -----------------------------------------------------------------------
    def prepare(self, optimizer=None, loss=None, metrics=None, amp_configs=None) -> None:
        if loss is not None and not callable(loss):
            raise TypeError(f"Model.prepare: loss must be a Layer or a callable, got {type(loss).__name__}")
        self._metrics = _to_list(metrics)
        for m in self._metrics:
            if not isinstance(m, Metric):
                raise TypeError(
                    f"Model.prepare: metrics must be paddle.metric.Metric instances, got {type(m).__name__}"
                )
        self._optimizer, self._loss = optimizer, loss

    def parameters(self, *args, **kwargs):
        return self.network.parameters(*args, **kwargs)

    def _split(self, batch) -> tuple[list[Tensor], list[Tensor]]:
        batch = _to_list(batch)
        n_inputs = len(self._inputs) or max(1, len(batch) - (len(self._labels) or 1))
        return _as_tensors(batch[:n_inputs]), _as_tensors(batch[n_inputs:])

    def _metric_logs(self, outputs, labels) -> dict:
        logs = {}
        for metric in self._metrics:
            state = metric.compute(*outputs, *labels)
            metric.update(*[s.numpy() if isinstance(s, Tensor) else s for s in _to_list(state)])
            names, values = _to_list(metric.name()), _to_list(metric.accumulate())
            logs.update(zip(names, values, strict=False))
        return logs

    # ----- one batch --------------------------------------------------------------------
    def train_batch(self, inputs, labels=None, update: bool = True):
        if self._optimizer is None or self._loss is None:
            raise RuntimeError("Model.train_batch: call model.prepare(optimizer, loss) first")
        self.network.train()
        inputs, labels = _as_tensors(inputs), _as_tensors(labels)
        outputs = _to_list(self.network(*inputs))
        loss = self._loss(*outputs, *labels)
        loss.backward()
        if update:
            self._optimizer.step()
            self._optimizer.clear_grad()
        metrics = [m.accumulate() for m in self._metrics] if self._metrics else []
        return ([float(loss.item())], metrics) if self._metrics else [float(loss.item())]

    @no_grad()
    def eval_batch(self, inputs, labels=None):
        self.network.eval()
        inputs, labels = _as_tensors(inputs), _as_tensors(labels)
        outputs = _to_list(self.network(*inputs))
        losses = [float(self._loss(*outputs, *labels).item())] if self._loss is not None and labels else []
        return losses

    @no_grad()
    def predict_batch(self, inputs):
        self.network.eval()
        return [o.numpy() for o in _to_list(self.network(*_as_tensors(inputs)))]

    # ----- loops ------------------------------------------------------------------------
    def _loader(self, data, batch_size: int, shuffle: bool, drop_last: bool, num_workers: int):
        if data is None or isinstance(data, DataLoader):
            return data
        if not isinstance(data, Dataset):
            raise TypeError(f"expected a paddle.io.Dataset or DataLoader, got {type(data).__name__}")
        return DataLoader(data, batch_size=batch_size, shuffle=shuffle, drop_last=drop_last, num_workers=num_workers)

    def fit(
        self,
        train_data=None,
        eval_data=None,
        batch_size: int = 1,
        epochs: int = 1,
        eval_freq: int = 1,
        log_freq: int = 10,
        save_dir=None,
        save_freq: int = 1,
        verbose: int = 2,
        drop_last: bool = False,
        shuffle: bool = True,
        num_workers: int = 0,
        callbacks=None,
        accumulate_grad_batches: int = 1,
        num_iters=None,
    ):
        """Train for ``epochs``; evaluate every ``eval_freq`` epochs; returns nothing, as in Paddle."""
        if self._optimizer is None or self._loss is None:
            raise RuntimeError("Model.fit: call model.prepare(optimizer, loss, metrics) first")
        train_loader = self._loader(train_data, batch_size, shuffle, drop_last, num_workers)
        eval_loader = self._loader(eval_data, batch_size, False, False, num_workers)
        steps = len(train_loader) if hasattr(train_loader, "__len__") else None
        cbs = self._callbacks(callbacks, verbose, log_freq, save_freq, save_dir)
        cbs = CallbackList(cbs, self, {"epochs": epochs, "steps": steps, "verbose": verbose, "save_dir": save_dir})
        self.stop_training = False
        cbs.on_train_begin()
        iters = 0
        for epoch in range(epochs):
            cbs.on_epoch_begin(epoch)
            logs = self._run_train_epoch(train_loader, cbs, accumulate_grad_batches)
            iters += logs["step"]
            cbs.on_epoch_end(epoch, logs)
            if eval_loader is not None and (epoch + 1) % eval_freq == 0:
                self._run_eval(eval_loader, cbs)
            if self.stop_training or (num_iters is not None and iters >= num_iters):
                break
        cbs.on_train_end()

    def _callbacks(self, callbacks, verbose, log_freq, save_freq, save_dir):
        cbs = _to_list(callbacks)
        if not any(isinstance(c, ProgBarLogger) for c in cbs):
            cbs.insert(0, ProgBarLogger(log_freq, verbose))
        if save_dir and not any(isinstance(c, ModelCheckpoint) for c in cbs):
            cbs.append(ModelCheckpoint(save_freq, save_dir))
        return cbs

    def _run_train_epoch(self, loader, cbs, accumulate: int) -> dict:
        self.network.train()
        for m in self._metrics:
            m.reset()
        logs = {"step": 0}
        for step, batch in enumerate(loader):
            cbs.on_train_batch_begin(step)
            inputs, labels = self._split(batch)
            outputs = _to_list(self.network(*inputs))
            loss = self._loss(*outputs, *labels)
            (loss / accumulate if accumulate > 1 else loss).backward()
            if (step + 1) % accumulate == 0:
                self._optimizer.step()
                self._optimizer.clear_grad()
            with no_grad():
                logs = {"loss": float(loss.item()), **self._metric_logs(outputs, labels)}
            logs.update(step=step + 1, batch_size=len(inputs[0]))
            cbs.on_train_batch_end(step, logs)
        return logs

    def _run_eval(self, loader, cbs) -> dict:
        self.network.eval()
        for m in self._metrics:
            m.reset()
        steps = len(loader) if hasattr(loader, "__len__") else None
        cbs.on_eval_begin({"steps": steps})
        losses, logs = [], {}
        with no_grad():
            for step, batch in enumerate(loader):
                cbs.on_eval_batch_begin(step)
                inputs, labels = self._split(batch)
                outputs = _to_list(self.network(*inputs))
                if self._loss is not None and labels:
                    losses.append(float(self._loss(*outputs, *labels).item()))
                logs = self._metric_logs(outputs, labels)
                if losses:
                    logs = {"loss": float(np.mean(losses)), **logs}
                cbs.on_eval_batch_end(step, logs)
        cbs.on_eval_end(logs)
        self.network.train()
        return logs

    def evaluate(
        self,
        eval_data,
        batch_size: int = 1,
        log_freq: int = 10,
        verbose: int = 2,
        num_workers: int = 0,
        callbacks=None,
        num_samples=None,
    ) -> dict:
        """Loss (mean over batches) and every metric's accumulated value, by name."""
        loader = self._loader(eval_data, batch_size, False, False, num_workers)
        cbs = CallbackList(self._callbacks(callbacks, verbose, log_freq, 1, None), self, {"verbose": verbose})
        return self._run_eval(loader, cbs)

    def predict(
        self,
        test_data,
        batch_size: int = 1,
        num_workers: int = 0,
        stack_outputs: bool = False,
        verbose: int = 1,
        callbacks=None,
    ):
        """Outputs per network output: a list of per-batch arrays, or one stacked array each."""
        loader = self._loader(test_data, batch_size, False, False, num_workers)
        cbs = CallbackList(_to_list(callbacks), self, {"verbose": verbose})
        cbs.on_predict_begin()
        outputs: list[list[np.ndarray]] = []
        for step, batch in enumerate(loader):
            cbs.on_predict_batch_begin(step)
            inputs = self._split(batch)[0] if self._labels or len(_to_list(batch)) > 1 else _as_tensors(batch)
            results = self.predict_batch(inputs)
            if not outputs:
                outputs = [[] for _ in results]
            for slot, result in zip(outputs, results, strict=True):
                slot.append(result)
            cbs.on_predict_batch_end(step, {"batch_size": len(inputs[0])})
        cbs.on_predict_end()
        return [np.concatenate(slot) for slot in outputs] if stack_outputs else outputs

    # ----- persistence ------------------------------------------------------------------
    def save(self, path: str, training: bool = True) -> None:
        """``path.pdparams`` (and ``path.pdopt`` when training) with the safe checkpoint format."""
        directory = os.path.dirname(path)
        if directory:
            os.makedirs(directory, exist_ok=True)
        save(self.network.state_dict(), path + ".pdparams")
        if training and self._optimizer is not None:
            save(self._optimizer.state_dict(), path + ".pdopt")

    def load(self, path: str, skip_mismatch: bool = False, reset_optimizer: bool = False):
        params = load(path + ".pdparams")
        if skip_mismatch:
            own = self.network.state_dict()
            params = {k: v for k, v in params.items() if k in own and list(np.shape(v)) == own[k].shape}
        missing, unexpected = self.network.set_state_dict(params)
        if not reset_optimizer and self._optimizer is not None and os.path.exists(path + ".pdopt"):
            self._optimizer.set_state_dict(load(path + ".pdopt"))
        return missing, unexpected
