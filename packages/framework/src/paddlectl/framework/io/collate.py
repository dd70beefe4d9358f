"""Turning a list of samples into one batch, and a batch's arrays into Tensors, as Paddle's DataLoader does."""

from __future__ import annotations

import numbers
from collections.abc import Mapping, Sequence

import numpy as np

from ..core.tensor import Tensor

__all__ = ["default_collate_fn", "default_convert_fn"]


def default_collate_fn(batch):
    """Stack each field across samples: arrays, Tensors and numbers become one array per field.

    Dicts and sequences are collated field by field; strings are gathered into a list.
    """
    sample = batch[0]
    if isinstance(sample, np.ndarray):
        return np.stack(batch, axis=0)
    if isinstance(sample, Tensor):
        return Tensor._wrap(np.stack([t.numpy() for t in batch], axis=0))
    if isinstance(sample, numbers.Number):
        return np.array(batch)
    if isinstance(sample, str | bytes):
        return batch
    if isinstance(sample, Mapping):
        return {key: default_collate_fn([d[key] for d in batch]) for key in sample}
    if isinstance(sample, Sequence):
        if any(len(s) != len(sample) for s in batch):
            raise RuntimeError(f"fields number not same among samples in a batch: {[len(s) for s in batch]}")
        return [default_collate_fn(list(fields)) for fields in zip(*batch, strict=True)]
    raise TypeError(
        f"batch data can only contain Tensor, numpy.ndarray, dict, list, number and str, but got {type(sample)}; "
        "pass a collate_fn for other types"
    )


def default_convert_fn(batch):
    """Without automatic batching (``batch_size=None``) a sample is passed on as it is."""
    return batch


def map_structure(fn, obj):
    """``fn`` applied to every leaf of nested dicts/lists/tuples (the containers are rebuilt)."""
    if isinstance(obj, Mapping):
        return {key: map_structure(fn, value) for key, value in obj.items()}
    if isinstance(obj, list | tuple):
        return type(obj)(map_structure(fn, value) for value in obj)
    return fn(obj)


def to_arrays(batch):
    """Tensors -> ndarrays, so a batch crosses a process boundary as plain arrays."""
    return map_structure(lambda x: x.numpy() if isinstance(x, Tensor) else x, batch)


def to_tensors(batch):
    """ndarrays -> Tensors, what the DataLoader hands to the training loop."""
    return map_structure(lambda x: Tensor._wrap(x) if isinstance(x, np.ndarray) else x, batch)
