"""Datasets (Paddle's ``paddle.io`` names): map-style and iterable sources of samples, and their combinators."""

from __future__ import annotations

import bisect
import itertools
import math
import warnings

import numpy as np

from ..core.tensor import Tensor
from ..ops.random import generator as global_generator

__all__ = [
    "ChainDataset",
    "ComposeDataset",
    "ConcatDataset",
    "Dataset",
    "IterableDataset",
    "Subset",
    "TensorDataset",
    "random_split",
]


class Dataset:
    """A map-style dataset: subclasses define ``__getitem__(idx)`` and ``__len__()``."""

    def __getitem__(self, idx):
        raise TypeError(f"{type(self).__name__} is a Dataset without __getitem__; define __getitem__(self, idx)")

    def __len__(self) -> int:
        raise TypeError(f"{type(self).__name__} is a Dataset without __len__; define __len__(self)")


class IterableDataset(Dataset):
    """A stream of samples: subclasses define ``__iter__``; it has no length and no random access."""

    def __iter__(self):
        raise TypeError(f"{type(self).__name__} is an IterableDataset without __iter__; define __iter__(self)")

    def __getitem__(self, idx):
        raise RuntimeError(f"'__getitem__' should not be called for IterableDataset {type(self).__name__}")

    def __len__(self):
        raise RuntimeError(f"'__len__' should not be called for IterableDataset {type(self).__name__}")


class TensorDataset(Dataset):
    """Row ``i`` of every tensor, as a tuple; all tensors share their first dimension."""

    def __init__(self, tensors) -> None:
        lengths = {t.shape[0] for t in tensors}
        if len(lengths) != 1:
            raise ValueError(
                f"TensorDataset: tensors must share their first dimension, got {[t.shape for t in tensors]}"
            )
        self.tensors = tensors

    def __getitem__(self, index):
        return tuple(Tensor._wrap(t.numpy()[index]) for t in self.tensors)

    def __len__(self) -> int:
        return self.tensors[0].shape[0]

    def _batch(self, indices) -> list[np.ndarray]:
        """What ``default_collate_fn`` makes of ``[self[i] for i in indices]``, with one indexing per
        tensor instead of a Python call and a stacked array per row (a 512-row batch of a CTR
        matrix: ~1 ms of the ~7 ms training step)."""
        return [t.numpy()[indices] for t in self.tensors]


def _as_list(value) -> list:
    return list(value) if isinstance(value, list | tuple) else [value]


def _require_map_style(datasets, who: str) -> list:
    datasets = list(datasets)
    if not datasets:
        raise ValueError(f"{who}: input datasets should not be empty")
    for d in datasets:
        if not isinstance(d, Dataset) or isinstance(d, IterableDataset):
            raise TypeError(f"{who}: every dataset must be a map-style paddle.io.Dataset, got {type(d).__name__}")
    return datasets


class ComposeDataset(Dataset):
    """Sample ``i`` of several equally long datasets, their fields concatenated into one tuple."""

    def __init__(self, datasets) -> None:
        self.datasets = _require_map_style(datasets, "ComposeDataset")
        if len({len(d) for d in self.datasets}) != 1:
            raise ValueError(
                f"ComposeDataset: lengths of datasets should be same, got {[len(d) for d in self.datasets]}"
            )

    def __len__(self) -> int:
        return len(self.datasets[0])

    def __getitem__(self, idx):
        return tuple(itertools.chain.from_iterable(_as_list(d[idx]) for d in self.datasets))


class ConcatDataset(Dataset):
    """The datasets one after another, indexed as one."""

    def __init__(self, datasets) -> None:
        self.datasets = _require_map_style(datasets, "ConcatDataset")
        self.cumulative_sizes = list(itertools.accumulate(len(d) for d in self.datasets))

    def __len__(self) -> int:
        return self.cumulative_sizes[-1]

    def __getitem__(self, idx):
        if idx < 0:
            if -idx > len(self):
                raise ValueError("absolute value of index should not exceed dataset length")
            idx += len(self)
        which = bisect.bisect_right(self.cumulative_sizes, idx)
        return self.datasets[which][idx - (self.cumulative_sizes[which - 1] if which else 0)]


class ChainDataset(IterableDataset):
    """Several iterable datasets streamed one after another."""

    def __init__(self, datasets) -> None:
        self.datasets = list(datasets)
        if not self.datasets:
            raise ValueError("ChainDataset: input datasets should not be empty")
        for d in self.datasets:
            if not isinstance(d, IterableDataset):
                raise TypeError(f"ChainDataset only supports paddle.io.IterableDataset, got {type(d).__name__}")

    def __iter__(self):
        for dataset in self.datasets:
            yield from dataset


class Subset(Dataset):
    """The samples of ``dataset`` at ``indices``, in that order."""

    def __init__(self, dataset, indices) -> None:
        self.dataset = dataset
        self.indices = indices

    def __getitem__(self, idx):
        return self.dataset[self.indices[idx]]

    def __len__(self) -> int:
        return len(self.indices)


def _fraction_lengths(n: int, fractions) -> list[int]:
    lengths = []
    for i, frac in enumerate(fractions):
        if frac < 0 or frac > 1:
            raise ValueError(f"Fraction at index {i} is not between 0 and 1")
        lengths.append(math.floor(n * frac))
    for i in range(n - sum(lengths)):
        lengths[i % len(lengths)] += 1
    for i, length in enumerate(lengths):
        if length == 0:
            warnings.warn(f"Length of split at index {i} is 0. This might result in an empty dataset.", stacklevel=3)
    return lengths


def random_split(dataset, lengths, generator=None) -> list[Subset]:
    """Split into non-overlapping random subsets of the given lengths (or fractions summing to 1).

    The permutation comes from ``paddle.seed``'s generator, or from ``generator`` (a numpy Generator).
    """
    if math.isclose(sum(lengths), 1) and sum(lengths) <= 1:
        lengths = _fraction_lengths(len(dataset), lengths)
    if sum(lengths) != len(dataset):
        raise ValueError(
            f"Sum of input lengths ({sum(lengths)}) does not equal the length of the input dataset ({len(dataset)})"
        )
    rng = generator if isinstance(generator, np.random.Generator) else global_generator()
    indices = rng.permutation(sum(lengths)).tolist()
    return [
        Subset(dataset, indices[end - length : end])
        for end, length in zip(itertools.accumulate(lengths), lengths, strict=True)
    ]
