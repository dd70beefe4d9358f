"""A small real task for the harness's tests: scikit-learn's 8x8 digits, served to LeNet at 28x28.

Raw inputs are ``(index, image)`` so the hooks can act on chosen inputs: ``fail_on`` raises
in pre-processing, ``nan_on`` feeds NaN pixels to the model, ``delay_s`` sleeps in
post-processing (a deliberately slowed request), ``after_samples`` runs a callback once that
many evaluation samples have been handed out (used to stop a tracking server mid-run).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
from matplotlib.figure import Figure
from sklearn.datasets import load_digits

import paddlectl.framework as paddle
from paddlectl.framework.vision.models import LeNet

EVAL_START = 1500


def _images() -> tuple[np.ndarray, np.ndarray]:
    digits = load_digits()
    return (digits.images / 16.0).astype("float32"), digits.target.astype("int64")


def to_model_input(images: Sequence[np.ndarray]) -> np.ndarray:
    """8x8 digits upscaled 3x and padded to LeNet's 1x28x28."""
    batch = np.stack(images).astype("float32")
    batch = np.repeat(np.repeat(batch, 3, axis=1), 3, axis=2)
    return np.pad(batch, ((0, 0), (2, 2), (2, 2)))[:, None]


def train_lenet(steps: int = 60, seed: int = 0) -> LeNet:
    """LeNet trained for a few Adam steps on the first 1500 digits (about 0.85-0.9 accuracy)."""
    images, labels = _images()
    paddle.seed(seed)
    net = LeNet()
    opt = paddle.optimizer.Adam(learning_rate=3e-3, parameters=net.parameters())
    loss_fn = paddle.nn.CrossEntropyLoss()
    rng = np.random.default_rng(seed)
    for _ in range(steps):
        idx = rng.integers(0, EVAL_START, 64)
        loss = loss_fn(net(paddle.to_tensor(to_model_input(images[idx]))), paddle.to_tensor(labels[idx]))
        loss.backward()
        opt.step()
        opt.clear_grad()
    net.eval()
    return net


def load_lenet(weights: Path) -> LeNet:
    net = LeNet()
    net.set_state_dict(paddle.load(str(weights)))
    net.eval()
    return net


class EagerRunner:
    """Runs a framework Layer eagerly on input arrays (tests only; the CLI uses the Predictor)."""

    def __init__(self, net: LeNet) -> None:
        self.net = net

    def run(self, inputs: list[np.ndarray]) -> list[np.ndarray]:
        with paddle.no_grad():
            return [self.net(paddle.to_tensor(inputs[0])).numpy()]


class DigitsTask:
    name = "vision.digits"

    def __init__(
        self,
        delay_s: float = 0.0,
        fail_on: Sequence[int] = (),
        nan_on: Sequence[int] = (),
        after_samples: tuple[int, Callable[[], None]] | None = None,
    ) -> None:
        self.images, self.labels = _images()
        self.delay_s, self.fail_on, self.nan_on = delay_s, set(fail_on), set(nan_on)
        self.after_samples = after_samples

    def eval_samples(self):
        for n, i in enumerate(range(EVAL_START, len(self.images))):
            if self.after_samples is not None and n == self.after_samples[0]:
                self.after_samples[1]()
            yield (i, self.images[i]), int(self.labels[i])

    def preprocess(self, raw_inputs: Sequence[Any]) -> list[np.ndarray]:
        for index, _ in raw_inputs:
            if index in self.fail_on:
                raise ValueError(f"digit {index} is unreadable")
        images = [np.full((8, 8), np.nan, "float32") if i in self.nan_on else img for i, img in raw_inputs]
        return [to_model_input(images)]

    def postprocess(self, outputs: list[np.ndarray]) -> list[tuple[int, float]]:
        if self.delay_s:
            time.sleep(self.delay_s)
        logits = outputs[0] - outputs[0].max(axis=1, keepdims=True)
        probs = np.exp(logits) / np.exp(logits).sum(axis=1, keepdims=True)
        return [(int(p.argmax()), float(p.max())) for p in probs]

    def compute_metrics(self, predictions, labels, outputs) -> dict[str, float]:
        hits = sum(int(p[0] == y) for p, y in zip(predictions, labels, strict=True))
        return {"accuracy": hits / len(labels)}

    def check_prediction(self, prediction) -> str | None:
        label, score = prediction
        if not 0.0 <= score <= 1.0 or not np.isfinite(score):
            return f"score {score} outside [0, 1]"
        return None if 0 <= label < 10 else f"label {label} is not a digit"

    def plots(self, predictions, labels, out_dir: Path) -> list[Path]:
        matrix = np.zeros((10, 10), dtype=int)
        for (p, _), y in zip(predictions, labels, strict=True):
            matrix[y, p] += 1
        fig = Figure(figsize=(4, 4))
        ax = fig.add_subplot()
        ax.imshow(matrix)
        ax.set_xlabel("predicted")
        ax.set_ylabel("true")
        out_dir.mkdir(parents=True, exist_ok=True)
        path = out_dir / "confusion.png"
        fig.savefig(path)
        return [path]


class SlowDigitsTask(DigitsTask):
    """The same task with 50 ms of post-processing per request: a deliberate, real slowdown."""

    def __init__(self) -> None:
        super().__init__(delay_s=0.05)


class BrokenDigitsTask(DigitsTask):
    """Every request fails as a jit.save model did under vision.cls before its processing was found."""

    def preprocess(self, raw_inputs: Sequence[Any]) -> list[np.ndarray]:
        raise KeyError("image_mode")


class BracketedDigitsTask(DigitsTask):
    """Names that rich would read as markup: they must be printed as they are."""

    def compute_metrics(self, predictions, labels, outputs) -> dict[str, float]:
        return {"acc[top1]": super().compute_metrics(predictions, labels, outputs)["accuracy"]}


def export_lenet(net: LeNet, path: Path) -> Path:
    """Save ``net`` as an inference model directory the Predictor opens."""
    paddle.jit.save(net, str(path), input_spec=[paddle.jit.InputSpec([None, 1, 28, 28], "float32", "x")])
    return path
