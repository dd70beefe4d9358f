"""Samplers: which indices a DataLoader visits, and how they are grouped into batches.

Random draws come from ``paddle.seed``'s generator, so shuffling repeats under the same seed.
"""

from __future__ import annotations

import math
from collections.abc import Iterable

import numpy as np

from ..core.tensor import Tensor
from ..ops.random import generator
from .dataset import IterableDataset
from .world import env_rank, env_world_size

__all__ = [
    "BatchSampler",
    "DistributedBatchSampler",
    "RandomSampler",
    "Sampler",
    "SequenceSampler",
    "SubsetRandomSampler",
    "WeightedRandomSampler",
]


def _rng() -> np.random.Generator:
    return generator()


class Sampler:
    """Base of samplers: subclasses define ``__iter__`` (and ``__len__`` when they can)."""

    def __init__(self, data_source=None) -> None:
        self.data_source = data_source

    def __iter__(self):
        raise TypeError(f"{type(self).__name__} is a Sampler without __iter__; define __iter__(self)")


class SequenceSampler(Sampler):
    """0, 1, ..., len(data_source) - 1."""

    def __iter__(self):
        return iter(range(len(self.data_source)))

    def __len__(self) -> int:
        return len(self.data_source)


class RandomSampler(Sampler):
    """A random permutation (or, with ``replacement``, independent draws) of the dataset's indices."""

    def __init__(self, data_source, replacement: bool = False, num_samples: int | None = None, generator=None) -> None:
        self.data_source = data_source
        self.replacement = replacement
        self._num_samples = num_samples
        self.generator = generator
        if not isinstance(replacement, bool):
            raise TypeError(f"expect boolean value for replacement, but got replacement={replacement}")
        if not isinstance(self.num_samples, int) or self.num_samples <= 0:
            raise ValueError(f"num_samples should be a positive integer, but got num_samples={self.num_samples}")
        if not replacement and self.num_samples > len(data_source):
            raise ValueError(
                "num_samples should be smaller than or equal to length of data_source when replacement is False, "
                f"but got num_samples: {self.num_samples} > data_source: {len(data_source)}"
            )

    @property
    def num_samples(self) -> int:
        return len(self.data_source) if self._num_samples is None else self._num_samples

    def __iter__(self):
        if self.generator is not None:  # Paddle: a Python generator of indices
            for _, index in zip(range(self.num_samples), self.generator, strict=False):
                yield index
            return
        n = len(self.data_source)
        if self.replacement:
            yield from _rng().integers(0, n, size=self.num_samples).tolist()
        else:
            yield from _rng().permutation(n)[: self.num_samples].tolist()

    def __len__(self) -> int:
        return self.num_samples


class SubsetRandomSampler(Sampler):
    """The given indices in a random order."""

    def __init__(self, indices) -> None:
        if len(indices) == 0:
            raise ValueError("The length of `indices` in SubsetRandomSampler should be greater than 0.")
        self.indices = indices

    def __iter__(self):
        for i in _rng().permutation(len(self.indices)).tolist():
            yield self.indices[i]

    def __len__(self) -> int:
        return len(self.indices)


class WeightedRandomSampler(Sampler):
    """``num_samples`` indices drawn with probability proportional to ``weights`` (per row if 2-D)."""

    def __init__(self, weights, num_samples: int, replacement: bool = True) -> None:
        if not isinstance(num_samples, int) or num_samples <= 0:
            raise ValueError("num_samples should be a positive integer")
        if not isinstance(replacement, bool):
            raise ValueError("replacement should be a boolean value")
        w = np.asarray(weights.numpy() if isinstance(weights, Tensor) else weights, dtype="float64")
        if w.ndim not in (1, 2) or not np.all(np.isfinite(w)) or np.any(w < 0):
            raise ValueError("weights should be a 1-D or 2-D array of finite, non-negative values")
        w = w.reshape(-1, w.shape[-1])
        positive = (w > 0).sum(axis=1)
        if np.any(positive == 0) or (not replacement and np.any(positive < num_samples)):
            raise ValueError("every row of weights needs positive values (at least num_samples without replacement)")
        self.weights = w / w.sum(axis=1, keepdims=True)
        self.num_samples = num_samples
        self.replacement = replacement

    def __iter__(self):
        rows = [_rng().choice(row.size, self.num_samples, self.replacement, row) for row in self.weights]
        return iter(np.concatenate(rows).tolist())

    def __len__(self) -> int:
        return self.num_samples * self.weights.shape[0]


def _batches(indices, batch_size: int, drop_last: bool):
    batch = []
    for idx in indices:
        batch.append(idx)
        if len(batch) == batch_size:
            yield batch
            batch = []
    if batch and not drop_last:
        yield batch


def _check_batch_args(batch_size, drop_last) -> None:
    if not isinstance(batch_size, int) or isinstance(batch_size, bool) or batch_size <= 0:
        raise ValueError(f"batch_size should be a positive integer, but got {batch_size!r}")
    if not isinstance(drop_last, bool):
        raise TypeError(f"drop_last should be a boolean value, but got {type(drop_last).__name__}")


class BatchSampler(Sampler):
    """Lists of ``batch_size`` indices from ``sampler`` (or a Sequence/RandomSampler over ``dataset``)."""

    def __init__(self, dataset=None, sampler=None, shuffle: bool = False, batch_size: int = 1, drop_last: bool = False):
        if dataset is None:
            if sampler is None:
                raise ValueError("BatchSampler: either dataset or sampler should be set")
            if not isinstance(sampler, Sampler | Iterable):
                raise TypeError(f"sampler should be either paddle.io.Sampler or Iterable, but got {type(sampler)}")
            if shuffle:
                raise ValueError("BatchSampler: shuffle should be False when sampler is set (shuffle in the sampler)")
            self.sampler = sampler
        else:
            if isinstance(dataset, IterableDataset):
                raise TypeError("BatchSampler: dataset should not be a paddle.io.IterableDataset")
            if sampler is not None:
                raise ValueError("BatchSampler: should not set both dataset and sampler")
            if not isinstance(shuffle, bool):
                raise TypeError(f"shuffle should be a boolean value, but got {type(shuffle).__name__}")
            self.sampler = RandomSampler(dataset) if shuffle else SequenceSampler(dataset)
        _check_batch_args(batch_size, drop_last)
        self.batch_size = batch_size
        self.shuffle = shuffle
        self.drop_last = drop_last

    def __iter__(self):
        return _batches(self.sampler, self.batch_size, self.drop_last)

    def __len__(self) -> int:
        n = len(self.sampler)
        return n // self.batch_size if self.drop_last else math.ceil(n / self.batch_size)


class DistributedBatchSampler(BatchSampler):
    """This rank's share of the batches: indices padded to a multiple of ``num_replicas``, as Paddle does.

    With ``shuffle`` the permutation is ``np.random.RandomState(epoch)``, identical on every rank,
    exactly as PaddlePaddle draws it; call ``set_epoch`` each epoch.
    """

    def __init__(self, dataset, batch_size: int, num_replicas=None, rank=None, shuffle=False, drop_last=False):
        _check_batch_args(batch_size, drop_last)
        if not isinstance(shuffle, bool):
            raise TypeError("shuffle should be a boolean value")
        self.dataset = dataset
        self.batch_size = batch_size
        self.shuffle = shuffle
        self.drop_last = drop_last
        self.nranks = env_world_size() if num_replicas is None else num_replicas  # Paddle: the launcher's
        self.local_rank = env_rank() if rank is None else rank
        if not isinstance(self.nranks, int) or self.nranks <= 0:
            raise ValueError(f"num_replicas should be a positive integer, got {num_replicas!r}")
        if not isinstance(self.local_rank, int) or not 0 <= self.local_rank < self.nranks:
            raise ValueError(f"rank should be in [0, {self.nranks}), got {rank!r}")
        self.epoch = 0
        self.num_samples = math.ceil(len(dataset) / self.nranks)
        self.total_size = self.num_samples * self.nranks

    def _local_indices(self) -> list[int]:
        n = len(self.dataset)
        indices = np.resize(np.arange(n), self.total_size).tolist()  # pads by wrapping around, as Paddle does
        if self.shuffle:
            np.random.RandomState(self.epoch).shuffle(indices)
            self.epoch += 1
        if self.nranks == 1:
            return indices
        step = self.batch_size * self.nranks
        tail = self.total_size % step
        local = []
        for start in range(self.local_rank * self.batch_size, len(indices) - tail, step):
            local.extend(indices[start : start + self.batch_size])
        last = tail // self.nranks
        rest = indices[len(indices) - tail :]
        local.extend(rest[self.local_rank * last : (self.local_rank + 1) * last])
        return local

    def __iter__(self):
        return _batches(self._local_indices(), self.batch_size, self.drop_last)

    def __len__(self) -> int:
        n = self.num_samples
        return n // self.batch_size if self.drop_last else math.ceil(n / self.batch_size)

    def set_epoch(self, epoch: int) -> None:
        self.epoch = epoch
