"""One loaded model version: its predictor clones (one per worker thread), its task, its warm-up.

A ``Predictor`` is not thread-safe but its clones share the program and weights read-only, so a
model keeps ``workers`` clones in a pool and each batch borrows one; with several workers each
clone runs on its share of the cores (2 workers on 2 cores: one thread each, as the two batches
run at once), with one it picks its threads by model size as every predictor does. Reloading builds a whole new
``ServedModel`` beside the old one, so batches already running finish on the version they began on.
"""

from __future__ import annotations

import logging
import math
import queue
import time
from pathlib import Path

import numpy as np

from paddlectl.framework.errors import PaddlectlError

from .errors import ServeConfigError
from .protocol import BY_DTYPE, tensor_metadata

WARMUP_RUNS = 3
WARMUP_SIZES = (1, 64)
log = logging.getLogger(__name__)


def open_export(path: Path):
    """The export at ``path`` and its task (None for a model saved without task processing)."""
    from paddlectl.cli.plugins import MissingProviderError, load_task
    from paddlectl.cli.predict import open_model

    try:
        saved = open_model(str(path))
    except PaddlectlError as exc:
        raise ServeConfigError(f"cannot serve {str(path)!r}: {exc}") from None
    pre = saved.meta.get("preprocess")
    name = pre.get("task") if isinstance(pre, dict) else None
    if not name:
        return saved, None
    try:
        task = load_task(name)
    except MissingProviderError as exc:
        raise ServeConfigError(f"cannot serve {str(path)!r}: {exc}") from None
    return saved, task() if isinstance(task, type) else task


class ServedModel:
    """The model at ``path`` loaded as ``version``, with ``workers`` predictor clones."""

    def __init__(self, name: str, path: Path, version: int, workers: int) -> None:
        from paddlectl.framework.inference import Config
        from paddlectl.framework.inference.predictor import Predictor

        self.name, self.path, self.version = name, Path(path), version
        self.saved, self.task = open_export(self.path)
        self.inputs, self.outputs = self.saved.meta["inputs"], self.saved.meta["outputs"]
        for spec in [*self.inputs, *self.outputs]:
            if np.dtype(spec["dtype"]).name not in BY_DTYPE:
                raise ServeConfigError(
                    f"{name}: tensor {spec['name']!r} has dtype {spec['dtype']}, which KServe v2 cannot carry"
                )
        config = Config(str(self.path))
        if workers > 1:  # clones run at once: share the cores out rather than each asking for all of them
            from paddlectl.framework.kernels.cores import physical_cores

            config.set_cpu_math_library_num_threads(max(1, physical_cores() // workers))
        base = Predictor(config, self.saved)
        self._pool: queue.SimpleQueue = queue.SimpleQueue()
        for _ in range(workers):
            self._pool.put(base.clone())
        self.throughput: float | None = None

    @property
    def task_name(self) -> str | None:
        return None if self.task is None else self.task.name

    @property
    def batchable(self) -> bool:
        """Requests can be stacked when every input and output has a symbolic first (batch) dim."""
        return all(s["shape"] and not isinstance(s["shape"][0], int) for s in [*self.inputs, *self.outputs])

    def input_names(self) -> list[str]:
        return [s["name"] for s in self.inputs]

    def output_names(self) -> list[str]:
        return [s["name"] for s in self.outputs]

    def run(self, arrays: list[np.ndarray]) -> list[np.ndarray]:
        """One model run on a borrowed predictor clone (called on a worker thread)."""
        predictor = self._pool.get()
        try:
            return predictor.run(arrays)
        finally:
            self._pool.put(predictor)

    def warm_up(self, max_batch_size: int) -> None:
        """Compile and plan every kernel for batch 1 and the largest batch before the model is ready,
        and measure its throughput (items/s) for the cost of a request.

        Symbolic sizes other than the batch are guessed (1, then 64: a recogniser's height may not
        shrink to 1); a model that refuses both is served cold, with a warning, and costs nothing."""
        batch = max_batch_size if self.batchable else 1
        for size in WARMUP_SIZES:
            try:
                self.run(self._zeros(1, size))
                break
            except (PaddlectlError, ValueError) as exc:
                refused = exc
        else:
            log.warning("model %s: warm-up skipped, no guessed input size runs (%s)", self.name, refused)
            return
        self.run(self._zeros(batch, size))
        start = time.perf_counter()
        for _ in range(WARMUP_RUNS):
            self.run(self._zeros(batch, size))
        self.throughput = WARMUP_RUNS * batch / max(time.perf_counter() - start, 1e-9)

    def _zeros(self, batch: int, size: int = 1) -> list[np.ndarray]:
        shapes = [[d if isinstance(d, int) else size for d in s["shape"]] for s in self.inputs]
        if self.batchable:
            for shape in shapes:
                shape[0] = batch
        return [np.zeros(shape, dtype=s["dtype"]) for shape, s in zip(shapes, self.inputs, strict=True)]

    def metadata(self) -> dict:
        """``GET /v2/models/{name}``: the protocol's model metadata, plus where it came from."""
        return {
            "name": self.name,
            "versions": [str(self.version)],
            "platform": "paddlectl",
            "inputs": [tensor_metadata(s) for s in self.inputs],
            "outputs": [tensor_metadata(s) for s in self.outputs],
            "parameters": {"task": self.task_name, "path": str(self.path), "batchable": self.batchable},
        }

    def elements(self, arrays: list[np.ndarray]) -> int:
        """Rows in a request (its batch size; 1 for a model that does not batch)."""
        return int(arrays[0].shape[0]) if self.batchable and arrays and arrays[0].ndim else 1


def cost_per_item(settings: dict | None, throughput: float | None) -> float:
    """Machine cost of one prediction by the eval harness's cost model at the warm-up throughput;
    0 when the model's ``cost`` settings name no price."""
    if not settings or not throughput:
        return 0.0
    from paddlectl.eval_harness.cost import cost_model, cost_per_1k

    per_1k = cost_per_1k(cost_model(settings), throughput)
    return 0.0 if per_1k is None or math.isinf(per_1k) else per_1k / 1000.0
