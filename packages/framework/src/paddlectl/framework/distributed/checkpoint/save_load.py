"""``paddle.distributed.save_state_dict`` / ``load_state_dict``: each rank writes its shard, rank 0
the metadata; any world size loads it back.

A state dict maps names to Tensors (the same value on every rank, written once by the lowest rank
that holds it: replicated weights, or optimizer states only their owner holds under sharding) or to
``Sharded`` parts (rank r holds the r-th piece along an axis; every rank writes its piece). The
ranks first agree on who writes what (one JSON exchange), write into a staging directory, and
rank 0 renames it into place after the metadata, so a crash mid-save leaves the old checkpoint.
Loading reads from the shared directory exactly the rows this rank needs under the current world
size, so a checkpoint saved by 2 ranks loads on 1 or 3 (the reshard).
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import safetensors.numpy

from ...core.tensor import Tensor
from ...errors import CheckpointError
from ...utils.fileio import atomic_write
from ..collective import barrier, exchange_json
from ..comm import Group, get_rank, get_world_size, init_parallel_env, resolve
from .metadata import FORMAT, METADATA_FILE, VERSION, ShardReader, digest, read_metadata, shard_file, stored


class Sharded:
    """This rank's piece of a tensor split evenly along ``axis`` over the ranks of ``group``."""

    def __init__(self, local, axis: int = 0, group: Group | None = None) -> None:
        if not isinstance(local, Tensor):
            raise CheckpointError(f"Sharded wraps this rank's piece as a Tensor, got {type(local).__name__}")
        if isinstance(axis, bool) or not isinstance(axis, int) or not 0 <= axis < max(local.ndim, 1):
            raise CheckpointError(f"Sharded: axis {axis!r} is not a dimension of a {local.ndim}-D tensor")
        self.local = local
        self.axis = axis
        self.group = group


def _describe(name: str, value) -> dict:
    if isinstance(value, Sharded):
        array, axis = value.local._data, value.axis
    elif isinstance(value, Tensor):
        array, axis = value._data, None
    else:
        raise CheckpointError(
            f"save_state_dict: {name!r} is a {type(value).__name__}; values must be Tensors or Sharded"
        )
    return {"dtype": array.dtype.name, "shape": list(array.shape), "axis": axis}


def _plan(table: list[dict]) -> dict:
    """The metadata (without checksums) from every rank's description of its state dict."""
    tensors = {}
    for name in sorted({n for entries in table for n in entries}):
        held = [(rank, entries[name]) for rank, entries in enumerate(table) if name in entries]
        first = held[0][1]
        if any(e["dtype"] != first["dtype"] or e["axis"] != first["axis"] for _, e in held):
            seen = ", ".join(f"rank {r}: {e['dtype']} axis {e['axis']}" for r, e in held)
            raise CheckpointError(
                f"save_state_dict: the ranks disagree on {name!r} ({seen}); save the same kind of value on every rank"
            )
        axis = first["axis"]
        if axis is None:
            if any(e["shape"] != first["shape"] for _, e in held):
                seen = ", ".join(f"rank {r}: {e['shape']}" for r, e in held)
                raise CheckpointError(
                    f"save_state_dict: replicated {name!r} has different shapes ({seen}); wrap per-rank pieces in Sharded"
                )
            shards = [{"file": shard_file(held[0][0]), "key": name, "offset": 0, "shape": first["shape"]}]
            shape = first["shape"]
        else:
            if len(held) != len(table):
                raise CheckpointError(
                    f"save_state_dict: Sharded {name!r} is missing on ranks {sorted(set(range(len(table))) - {r for r, _ in held})}"
                )
            shards, offset = [], 0
            for rank, entry in held:
                shards.append({"file": shard_file(rank), "key": name, "offset": offset, "shape": entry["shape"]})
                offset += entry["shape"][axis]
            shape = list(first["shape"])
            shape[axis] = offset
        tensors[name] = {"dtype": first["dtype"], "global_shape": shape, "axis": axis, "shards": shards}
    return tensors


def save_state_dict(state_dict: dict, path, process_group: Group | None = None, coordinator_rank: int = 0) -> None:
    """Write ``state_dict`` as a distributed checkpoint directory; every rank of the group calls it."""
    if not isinstance(state_dict, dict):
        raise CheckpointError(f"save_state_dict expects a dict of name -> Tensor, got {type(state_dict).__name__}")
    group = resolve(process_group) if process_group is not None else init_parallel_env()
    target = Path(path)
    if target.exists() and not (target / METADATA_FILE).is_file() and (not target.is_dir() or any(target.iterdir())):
        raise CheckpointError(f"{target} exists and is not a distributed checkpoint; choose another path")
    table = exchange_json(group, {name: _describe(name, value) for name, value in state_dict.items()})
    tensors = _plan(table)
    staging = target.with_name(f".{target.name}.staging")
    if group.rank == coordinator_rank:
        shutil.rmtree(staging, ignore_errors=True)
        staging.mkdir(parents=True)
    barrier(group)
    mine = shard_file(group.rank)
    arrays = {}
    for name, entry in tensors.items():
        if any(s["file"] == mine for s in entry["shards"]):
            value = state_dict[name]
            arrays[name] = (value.local if isinstance(value, Sharded) else value)._data
    with atomic_write(staging / mine) as handle:
        handle.write(safetensors.numpy.save({name: stored(a) for name, a in arrays.items()}))
    digests = exchange_json(group, {name: digest(a) for name, a in arrays.items()})
    if group.rank == coordinator_rank:
        for name, entry in tensors.items():
            for shard in entry["shards"]:
                shard["sha256"] = digests[int(shard["file"].split("-")[1].split(".")[0])][name]
        meta = {"format": FORMAT, "version": VERSION, "world_size": group.nranks, "tensors": tensors}
        with atomic_write(staging / METADATA_FILE, "w", encoding="utf-8") as handle:
            json.dump(meta, handle, indent=1)
        old = target.with_name(f".{target.name}.old")
        if target.exists():
            shutil.rmtree(old, ignore_errors=True)
            target.rename(old)
        staging.rename(target)
        shutil.rmtree(old, ignore_errors=True)
    barrier(group)


def load_state_dict(state_dict: dict, path, process_group: Group | None = None, coordinator_rank: int = 0) -> None:
    """Fill ``state_dict``'s Tensors (whole) and ``Sharded`` pieces (this rank's rows under the current
    world size) in place from the checkpoint at ``path``, whatever world size saved it."""
    if not isinstance(state_dict, dict):
        raise CheckpointError(f"load_state_dict expects a dict of name -> Tensor, got {type(state_dict).__name__}")
    meta = read_metadata(path)
    missing = [name for name in state_dict if name not in meta["tensors"]]
    if missing:
        raise CheckpointError(f"{path} has no tensors {missing[:5]}; it holds {sorted(meta['tensors'])[:5]} ...")
    reader = ShardReader(path, meta)
    for name, value in state_dict.items():
        entry = meta["tensors"][name]
        target = value.local if isinstance(value, Sharded) else value
        if not isinstance(target, Tensor):
            raise CheckpointError(
                f"load_state_dict: {name!r} is a {type(value).__name__}; values must be Tensors or Sharded"
            )
        if isinstance(value, Sharded):
            array = _this_rank_rows(reader, name, entry, value)
        else:
            array = reader.read(name)
        if array.dtype != target._data.dtype or list(array.shape) != target.shape:
            raise CheckpointError(
                f"{path}: {name!r} is {array.dtype.name}{list(array.shape)} for this rank but the tensor to fill is "
                f"{target._data.dtype.name}{target.shape}"
            )
        target._data = np.array(array, copy=True)


def load_tensors(path, names=None) -> dict:
    """Whole tensors of the checkpoint at ``path`` by name (all, or ``names``): what a state dict
    whose keys are only known from the checkpoint (an optimizer's lazily made states) loads from."""
    meta = read_metadata(path)
    wanted = list(meta["tensors"]) if names is None else list(names)
    missing = [n for n in wanted if n not in meta["tensors"]]
    if missing:
        raise CheckpointError(f"{path} has no tensors {missing[:5]}")
    reader = ShardReader(path, meta)
    return {name: Tensor(np.array(reader.read(name), copy=True)) for name in wanted}


def _this_rank_rows(reader: ShardReader, name: str, entry: dict, value: Sharded) -> np.ndarray:
    size, axis = entry["global_shape"][value.axis] if value.axis < len(entry["global_shape"]) else None, value.axis
    rank, world = get_rank(value.group), get_world_size(value.group)
    if size is None or (entry["axis"] is not None and entry["axis"] != axis):
        raise CheckpointError(f"{name!r} is sharded along axis {entry['axis']} in the checkpoint, not {axis}")
    if size % world:
        raise CheckpointError(
            f"{name!r}: world size {world} does not divide its dimension {axis} ({size}); "
            f"launch a number of ranks that divides {size}"
        )
    piece = size // world
    if entry["axis"] is None:
        return np.take(reader.read(name), range(rank * piece, (rank + 1) * piece), axis=axis)
    return reader.read(name, rank * piece, (rank + 1) * piece)


def merge(directory, out) -> int:
    """Write the checkpoint in ``directory`` as one ordinary safetensors file ``out`` (whole tensors,
    real dtypes); returns how many tensors it holds."""
    meta = read_metadata(directory)
    reader = ShardReader(directory, meta)
    tensors = {name: np.ascontiguousarray(reader.read(name)) for name in meta["tensors"]}
    with atomic_write(out) as handle:
        handle.write(safetensors.numpy.save(tensors, metadata={"format": "pt", "merged_from": str(directory)}))
    return len(tensors)
