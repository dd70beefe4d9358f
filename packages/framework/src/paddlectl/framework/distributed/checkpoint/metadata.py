"""The distributed checkpoint on disk, read without MPI: ``metadata.json`` plus one safetensors
file per rank (``rank-R.safetensors``).

``metadata.json`` maps each tensor to its dtype, global shape, the axis it is sharded along (or
null) and its shards: file, key, offset along the axis, shape and the SHA-256 of the shard's bytes.
Everything is checked before a value is used: a shard whose shape or dtype disagrees with the
metadata, a checksum that fails, or shards that do not tile the tensor raise CheckpointError
naming the tensor, the file and the fix. bfloat16 shards are stored as their uint16 bits
(safetensors' NumPy reader has no BF16); the metadata keeps the real dtype.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import numpy as np
import safetensors.numpy

from ...core.dtype import SUPPORTED
from ...errors import CheckpointError

FORMAT = "paddlectl-distributed-checkpoint"
VERSION = 1
METADATA_FILE = "metadata.json"


def shard_file(rank: int) -> str:
    return f"rank-{rank}.safetensors"


def digest(array: np.ndarray) -> str:
    return hashlib.sha256(np.ascontiguousarray(array).tobytes()).hexdigest()


def stored(array: np.ndarray) -> np.ndarray:
    """What the safetensors file holds for ``array`` (bfloat16 as its bits)."""
    return array.view(np.uint16) if array.dtype == SUPPORTED["bfloat16"] else np.ascontiguousarray(array)


def read_metadata(directory) -> dict:
    """The validated metadata of the checkpoint in ``directory``."""
    path = Path(directory) / METADATA_FILE
    if not path.is_file():
        raise CheckpointError(f"{directory} is not a distributed checkpoint: {METADATA_FILE} is missing")
    try:
        meta = json.loads(path.read_text())
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise CheckpointError(f"{path} is not valid JSON ({exc}); the checkpoint is damaged") from None
    if not isinstance(meta, dict) or meta.get("format") != FORMAT or meta.get("version") != VERSION:
        raise CheckpointError(f"{path} is not a {FORMAT} version {VERSION} metadata file")
    tensors = meta.get("tensors")
    if not isinstance(tensors, dict):
        raise CheckpointError(f"{path}: 'tensors' must map names to entries")
    for name, entry in tensors.items():
        _check_entry(path, name, entry)
    return meta


def _check_entry(path: Path, name: str, entry) -> None:
    try:
        dtype, shape, axis, shards = entry["dtype"], entry["global_shape"], entry["axis"], entry["shards"]
        if dtype not in SUPPORTED or not all(isinstance(d, int) and d >= 0 for d in shape):
            raise ValueError("unknown dtype or a bad global_shape")
        for shard in shards:
            if not isinstance(shard["file"], str) or "/" in shard["file"] or "\\" in shard["file"]:
                raise ValueError(f"file {shard['file']!r} is not a file name")
            if not isinstance(shard["sha256"], str) or not isinstance(shard["key"], str):
                raise ValueError("key and sha256 must be strings")
        if axis is None:
            if len(shards) != 1 or shards[0]["shape"] != shape or shards[0]["offset"] != 0:
                raise ValueError("a replicated tensor has one shard of the global shape")
            return
        if not 0 <= axis < len(shape):
            raise ValueError(f"axis {axis} is outside the tensor's {len(shape)} dimensions")
        others = [d for i, d in enumerate(shape) if i != axis]
        covered = 0
        for shard in sorted(shards, key=lambda s: s["offset"]):
            if shard["offset"] != covered or [d for i, d in enumerate(shard["shape"]) if i != axis] != others:
                raise ValueError("the shards do not tile the tensor")
            covered += shard["shape"][axis]
        if covered != shape[axis]:
            raise ValueError(f"the shards cover {covered} of {shape[axis]} along axis {axis}")
    except (KeyError, TypeError, ValueError, IndexError) as exc:
        raise CheckpointError(
            f"{path}: the entry of tensor {name!r} is malformed ({exc}); the checkpoint is damaged"
        ) from None


class ShardReader:
    """Reads shards of one checkpoint, each file once, each shard checked against the metadata."""

    def __init__(self, directory, meta: dict) -> None:
        self.directory = Path(directory)
        self.meta = meta
        self._files: dict[str, dict] = {}

    def _file(self, name: str) -> dict:
        if name not in self._files:
            path = self.directory / name
            if not path.is_file():
                raise CheckpointError(f"shard file {path} is missing; copy every rank's file into {self.directory}")
            try:
                self._files[name] = safetensors.numpy.load(path.read_bytes())
            except Exception as exc:  # noqa: BLE001 - safetensors raises its own error types on corrupt files
                raise CheckpointError(f"shard file {path} is not a readable safetensors file: {exc}") from None
        return self._files[name]

    def shard(self, name: str, shard: dict) -> np.ndarray:
        dtype = SUPPORTED[self.meta["tensors"][name]["dtype"]]
        found = self._file(shard["file"]).get(shard["key"])
        where = f"shard of {name!r} in {self.directory / shard['file']}"
        if found is None:
            raise CheckpointError(f"{where} is missing (key {shard['key']!r}); the file does not match {METADATA_FILE}")
        array = found.view(dtype) if dtype == SUPPORTED["bfloat16"] and found.dtype == np.uint16 else found
        if shard["shape"] == [] and array.shape == (1,):
            array = array.reshape(())  # safetensors' NumPy writer stores a 0-d array as shape [1]
        if array.dtype != dtype or list(array.shape) != shard["shape"]:
            raise CheckpointError(
                f"{where} is {array.dtype.name}{list(array.shape)} but {METADATA_FILE} says "
                f"{dtype.name}{shard['shape']}; the shard and its metadata disagree"
            )
        if digest(array) != shard["sha256"]:
            raise CheckpointError(f"{where} fails its SHA-256 checksum; the file is damaged or was changed")
        return array

    def read(self, name: str, start: int | None = None, stop: int | None = None) -> np.ndarray:
        """Tensor ``name``, or its rows ``start:stop`` along its sharded axis, from the shards."""
        entry = self.meta["tensors"][name]
        axis = entry["axis"]
        if axis is None:
            return self.shard(name, entry["shards"][0])
        start, stop = (0, entry["global_shape"][axis]) if start is None else (start, stop)
        parts = []
        for shard in sorted(entry["shards"], key=lambda s: s["offset"]):
            lo, hi = shard["offset"], shard["offset"] + shard["shape"][axis]
            if hi <= start or lo >= stop:
                continue
            array = self.shard(name, shard)
            parts.append(np.take(array, range(max(start, lo) - lo, min(stop, hi) - lo), axis=axis))
        if not parts:
            shape = list(entry["global_shape"])
            shape[axis] = 0
            return np.empty(shape, SUPPORTED[entry["dtype"]])
        return np.concatenate(parts, axis=axis)
