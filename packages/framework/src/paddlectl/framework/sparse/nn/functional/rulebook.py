"""The rulebook of a sparse convolution or pooling: which stored input site feeds which output
site through which kernel tap (Paddle's ``rulebook``), computed from the indices alone.

Sites are (batch, *spatial) rows of a COO tensor laid out channels-last (N[D]HW + C values).
A regular window produces an output site wherever a tap reaches a stored input site (sorted
row-major, as Paddle's coalesced output); a submanifold one keeps the input sites and centres
the kernel on them, so the shape never changes."""

from __future__ import annotations

import itertools
from dataclasses import dataclass

import numpy as np

from ....errors import ShapeError
from ...tensor import INDEX


@dataclass
class Rulebook:
    out_indices: np.ndarray  # [1 + dims, n_out]
    out_spatial: list[int]
    pairs: list[tuple[int, np.ndarray, np.ndarray]]  # (tap, input rows, output rows), taps with pairs only


def _site_codes(batch: np.ndarray, coords: np.ndarray, dims: tuple[int, ...]) -> np.ndarray:
    return np.ravel_multi_index((batch, *coords), dims)


def build(op: str, indices: np.ndarray, spatial: list[int], kernel, stride, padding, dilation, subm: bool):
    """``indices`` [1 + dims, nnz]; kernel/stride/padding/dilation one int per spatial dim."""
    batch, coords = indices[0], indices[1:]
    if subm:
        if any(s != 1 for s in stride):
            raise ShapeError(f"{op}: a submanifold convolution keeps the sites, so its stride must be 1, got {stride}")
        out_spatial = list(spatial)
        offsets = [(k - 1) // 2 * d for k, d in zip(kernel, dilation, strict=True)]
    else:
        out_spatial = [
            (n + 2 * p - d * (k - 1) - 1) // s + 1
            for n, k, s, p, d in zip(spatial, kernel, stride, padding, dilation, strict=True)
        ]  # fmt: skip
        if any(n <= 0 for n in out_spatial):
            raise ShapeError(f"{op}: the window {list(kernel)} does not fit the padded input {spatial}")
        offsets = list(padding)
    found = []
    for tap, taps in enumerate(itertools.product(*(range(k) for k in kernel))):
        position = coords + np.asarray([o - t * d for o, t, d in zip(offsets, taps, dilation, strict=True)])[:, None]
        step = np.asarray(stride)[:, None]
        ok = ((position % step == 0) & (position >= 0)).all(axis=0)
        position = position // step
        ok &= (position < np.asarray(out_spatial)[:, None]).all(axis=0)
        rows = np.flatnonzero(ok)
        found.append((tap, rows, batch[rows], position[:, rows]))
    dims = (int(batch.max(initial=0)) + 1, *out_spatial)
    if subm:
        out_indices = indices
        sites = _site_codes(batch, coords, dims)
    else:
        sites = np.unique(np.concatenate([_site_codes(b, p, dims) for _, _, b, p in found]))
        out_indices = np.stack(np.unravel_index(sites, dims)).astype(INDEX)
    order = np.argsort(sites, kind="stable")
    pairs = []
    for tap, rows, b, p in found:
        codes = _site_codes(b, p, dims)
        slot = np.searchsorted(sites[order], codes)
        hit = slot < sites.size
        hit[hit] = sites[order][slot[hit]] == codes[hit]
        if hit.any():
            pairs.append((tap, rows[hit].astype(INDEX), order[slot[hit]].astype(INDEX)))
    return Rulebook(out_indices.reshape(1 + len(spatial), -1), out_spatial, pairs)
