"""Collectives on Tensors (``paddle.distributed.all_reduce`` and friends) as MPI calls.

Before moving data, the ranks of a group exchange a small fixed-size header (shape and dtype) with
one ``Allgather``, so a rank that passes another shape makes *every* rank raise the same one-line
error naming each rank's tensor, instead of MPI reading past a buffer or waiting forever. Results
are written back into the tensor the caller passed, as Paddle's in-place collectives do. 16-bit
floats travel as float32 (MPI has no reduction for them) and are rounded back.
"""

from __future__ import annotations

import numpy as np

from ..core.tensor import Tensor
from .comm import Group, mpi, resolve
from .env import DistributedError

MAX_DIMS = 12
_NAME_BYTES = 16


class ReduceOp:
    """Paddle's reduction names for ``all_reduce``/``reduce``/``reduce_scatter``."""

    SUM = 0
    MAX = 1
    MIN = 2
    PROD = 3
    AVG = 4


_MPI_OP_NAMES = {
    ReduceOp.SUM: "SUM",
    ReduceOp.MAX: "MAX",
    ReduceOp.MIN: "MIN",
    ReduceOp.PROD: "PROD",
    ReduceOp.AVG: "SUM",
}


class Task:
    """What a collective returns: ``wait()`` completes it (at once for a blocking call)."""

    def __init__(self, request=None, finish=None) -> None:
        self._request = request
        self._finish = finish

    def wait(self) -> bool:
        if self._request is not None:
            self._request.Wait()
            self._request = None
        if self._finish is not None:
            finish, self._finish = self._finish, None
            finish()
        return True

    def is_completed(self) -> bool:
        return self._request is None or self._request.Test()


def mpi_op(op: int, what: str):
    if op not in _MPI_OP_NAMES:
        raise DistributedError(
            f"{what}: op must be a paddle.distributed.ReduceOp (SUM, MAX, MIN, PROD, AVG), got {op!r}"
        )
    return getattr(mpi(), _MPI_OP_NAMES[op])


def describe(dtype, shape) -> str:
    return f"{np.dtype(dtype).name}{list(shape)}"


def _header(array: np.ndarray, what: str) -> np.ndarray:
    if array.ndim > MAX_DIMS:
        raise DistributedError(f"{what}: tensors of more than {MAX_DIMS} dimensions cannot be communicated; reshape it")
    name = np.frombuffer(array.dtype.name.encode().ljust(_NAME_BYTES, b" ")[:_NAME_BYTES], dtype=np.int64)
    dims = np.full(MAX_DIMS, -1, dtype=np.int64)
    dims[: array.ndim] = array.shape
    return np.concatenate([[array.ndim], dims, name]).astype(np.int64)


def _read_header(row: np.ndarray) -> tuple[str, tuple[int, ...]]:
    ndim = int(row[0])
    name = row[1 + MAX_DIMS :].astype(np.int64).tobytes().decode().strip()
    return name, tuple(int(d) for d in row[1 : 1 + ndim])


def agree(group: Group, array: np.ndarray, what: str) -> None:
    """Every rank of ``group`` holds an array of this shape and dtype, or every rank raises the same
    DistributedError naming what each rank passed."""
    mine = _header(array, what)
    table = np.empty((group.nranks, mine.size), dtype=np.int64)
    group.comm.Allgather(mine, table)
    if (table == table[0]).all():
        return
    seen = ", ".join(f"rank {group.ranks[i]} has {describe(*_read_header(row))}" for i, row in enumerate(table))
    raise DistributedError(
        f"{what}: the ranks passed different tensors ({seen}); every rank must pass the same shape and dtype"
    )


def as_tensor(tensor, what: str) -> Tensor:
    if not isinstance(tensor, Tensor):
        raise DistributedError(f"{what} expects a paddle Tensor, got {type(tensor).__name__}")
    return tensor


def work_buffer(tensor: Tensor) -> np.ndarray:
    """A contiguous, writable array MPI can reduce in: the tensor's own when it can be."""
    array = tensor._data
    if array.dtype.itemsize == 2 and array.dtype.kind not in "iu":  # float16/bfloat16: no MPI reduction
        return array.astype(np.float32)
    if array.flags.c_contiguous and array.flags.writeable:
        return array
    return np.array(array, order="C", copy=True)


def store(tensor: Tensor, buffer: np.ndarray) -> None:
    if buffer is not tensor._data:
        tensor._data = buffer.astype(tensor._data.dtype, copy=False)


def _root(group: Group, rank: int, what: str) -> int:
    root = group.get_group_rank(rank) if isinstance(rank, int) else -1
    if root < 0:
        raise DistributedError(f"{what}: rank {rank!r} is not a member of the group (its ranks are {group.ranks})")
    return root


def all_reduce(tensor, op: int = ReduceOp.SUM, group: Group | None = None, sync_op: bool = True) -> Task:
    """Reduce ``tensor`` over the group's ranks; every rank ends with the result in ``tensor``."""
    tensor = as_tensor(tensor, "all_reduce")
    reduction = mpi_op(op, "all_reduce")
    group = resolve(group)
    if group.nranks == 1:
        return Task()
    agree(group, tensor._data, "all_reduce")
    buffer = work_buffer(tensor)

    def finish() -> None:
        if op == ReduceOp.AVG:
            np.divide(buffer, group.nranks, out=buffer, casting="unsafe")
        store(tensor, buffer)

    if sync_op:
        group.comm.Allreduce(mpi().IN_PLACE, buffer, op=reduction)
        finish()
        return Task()
    return Task(group.comm.Iallreduce(mpi().IN_PLACE, buffer, op=reduction), finish)


def _rooted(tensor, rank: int, group: Group | None, what: str):
    """The tensor, its group, the group rank of global ``rank`` and the array to communicate in
    (None in a group of one, where there is nothing to do), the ranks' tensors agreed."""
    tensor = as_tensor(tensor, what)
    group = resolve(group)
    root = _root(group, rank, what)
    if group.nranks == 1:
        return tensor, group, root, None
    agree(group, tensor._data, what)
    return tensor, group, root, work_buffer(tensor)


def reduce(tensor, dst: int, op: int = ReduceOp.SUM, group: Group | None = None, sync_op: bool = True) -> Task:
    """Reduce ``tensor`` over the group onto global rank ``dst`` (the others keep theirs)."""
    reduction = mpi_op(op, "reduce")
    tensor, group, root, buffer = _rooted(tensor, dst, group, "reduce")
    if buffer is None:
        return Task()
    if group.rank == root:
        group.comm.Reduce(mpi().IN_PLACE, buffer, op=reduction, root=root)
        if op == ReduceOp.AVG:
            np.divide(buffer, group.nranks, out=buffer, casting="unsafe")
        store(tensor, buffer)
    else:
        group.comm.Reduce(buffer, None, op=reduction, root=root)
    return Task()


def broadcast(tensor, src: int, group: Group | None = None, sync_op: bool = True) -> Task:
    """Every rank's ``tensor`` becomes global rank ``src``'s."""
    tensor, group, root, buffer = _rooted(tensor, src, group, "broadcast")
    if buffer is not None:
        group.comm.Bcast(buffer, root=root)
        store(tensor, buffer)
    return Task()


def all_gather(tensor_list: list, tensor, group: Group | None = None, sync_op: bool = True) -> Task:
    """``tensor_list`` becomes every rank's ``tensor``, in group rank order."""
    tensor = as_tensor(tensor, "all_gather")
    if not isinstance(tensor_list, list):
        raise DistributedError(f"all_gather: tensor_list must be a list to fill, got {type(tensor_list).__name__}")
    group = resolve(group)
    source = work_buffer(tensor)
    if group.nranks > 1:
        agree(group, tensor._data, "all_gather")
    gathered = np.empty((group.nranks, *source.shape), dtype=source.dtype)
    if group.nranks > 1:
        group.comm.Allgather(source, gathered)
    else:
        gathered[0] = source
    tensor_list.clear()
    tensor_list.extend(Tensor(part.astype(tensor._data.dtype, copy=False)) for part in gathered)
    return Task()


def reduce_scatter(
    tensor, tensor_list: list, op: int = ReduceOp.SUM, group: Group | None = None, sync_op: bool = True
) -> Task:
    """Rank ``r`` gets ``tensor_list[r]`` reduced over the group, in ``tensor``."""
    tensor = as_tensor(tensor, "reduce_scatter")
    reduction = mpi_op(op, "reduce_scatter")
    group = resolve(group)
    if not isinstance(tensor_list, list | tuple) or len(tensor_list) != group.nranks:
        raise DistributedError(
            f"reduce_scatter: tensor_list must hold one tensor per rank ({group.nranks}), got "
            f"{len(tensor_list) if isinstance(tensor_list, list | tuple) else type(tensor_list).__name__}"
        )
    parts = [as_tensor(t, "reduce_scatter")._data for t in tensor_list]
    for part in parts:
        if part.shape != tensor._data.shape or part.dtype != tensor._data.dtype:
            raise DistributedError(
                f"reduce_scatter: every entry of tensor_list must be {describe(tensor._data.dtype, tensor.shape)} "
                f"like the output tensor, got {describe(part.dtype, part.shape)}"
            )
    if group.nranks > 1:
        agree(group, tensor._data, "reduce_scatter")
    send = np.stack(parts)
    send = send.astype(np.float32) if send.dtype.itemsize == 2 and send.dtype.kind not in "iu" else send
    out = np.empty(send.shape[1:], dtype=send.dtype)
    if group.nranks > 1:
        group.comm.Reduce_scatter_block(send, out, op=reduction)
    else:
        out[...] = send[0]
    if op == ReduceOp.AVG:
        np.divide(out, group.nranks, out=out, casting="unsafe")
    store(tensor, out)
    return Task()


def barrier(group: Group | None = None) -> None:
    """Wait until every rank of the group reaches this call."""
    group = resolve(group)
    if group.nranks > 1:
        group.comm.Barrier()


_HEADER_TAG, _DATA_TAG = 7001, 7002


def send(tensor, dst: int = 0, group: Group | None = None, sync_op: bool = True) -> Task:
    """Send ``tensor`` to global rank ``dst`` (which calls ``recv``); its header travels first."""
    tensor = as_tensor(tensor, "send")
    group = resolve(group)
    peer = _root(group, dst, "send")
    buffer = np.ascontiguousarray(tensor._data)
    group.comm.Send(_header(buffer, "send"), dest=peer, tag=_HEADER_TAG)
    group.comm.Send(buffer, dest=peer, tag=_DATA_TAG)
    return Task()


def recv(tensor, src: int = 0, group: Group | None = None, sync_op: bool = True) -> Task:
    """Receive into ``tensor`` what global rank ``src`` sends; a different shape or dtype raises
    (after draining the message, so the peer is not left blocked)."""
    tensor = as_tensor(tensor, "recv")
    group = resolve(group)
    peer = _root(group, src, "recv")
    mine = _header(tensor._data, "recv")
    theirs = np.empty_like(mine)
    group.comm.Recv(theirs, source=peer, tag=_HEADER_TAG)
    if not (theirs == mine).all():
        name, shape = _read_header(theirs)
        group.comm.Recv(np.empty(int(np.prod(shape)) * np.dtype(name).itemsize, np.uint8), source=peer, tag=_DATA_TAG)
        raise DistributedError(
            f"recv: rank {src} sent {describe(name, shape)} but rank {group.ranks[group.rank]} receives into "
            f"{describe(tensor._data.dtype, tensor.shape)}; pass a tensor of the sender's shape and dtype"
        )
    buffer = np.empty(tensor._data.shape, dtype=tensor._data.dtype)
    group.comm.Recv(buffer, source=peer, tag=_DATA_TAG)
    tensor._data = buffer
    return Task()


def exchange_json(group: Group, value) -> list:
    """Every rank's JSON-able ``value``, in group rank order (bytes over MPI; never a pickle)."""
    import json

    if group.nranks == 1:
        return [value]
    mine = np.frombuffer(json.dumps(value).encode(), dtype=np.uint8)
    sizes = np.empty(group.nranks, dtype=np.int64)
    group.comm.Allgather(np.array([mine.size], dtype=np.int64), sizes)
    gathered = np.empty(int(sizes.sum()), dtype=np.uint8)
    group.comm.Allgatherv(mine, [gathered, sizes.tolist()])
    bounds = np.concatenate([[0], np.cumsum(sizes)])
    return [json.loads(gathered[bounds[i] : bounds[i + 1]].tobytes()) for i in range(group.nranks)]
