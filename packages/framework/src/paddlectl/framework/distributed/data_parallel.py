"""``paddle.DataParallel``: every rank runs the model on its share of the batch and the gradients
are averaged over the ranks, bucket by bucket, while backward is still running.

Each parameter's ``.grad`` is a view into a flat bucket buffer. ``forward`` counts, from the graph
it just recorded, how many gradient contributions each parameter will receive; a tensor hook on the
parameter adds each contribution into the buffer itself, and when a bucket has all of its
contributions its non-blocking ``Iallreduce`` starts, so the reduction of the last layers overlaps
the backward of the first. Buckets start strictly in order (the same order on every rank, as MPI
requires of collectives); the hook of the very last contribution waits for all of them and scales
by 1/world_size. Buckets follow Paddle: parameters in reverse order, the first bucket capped at
``last_comm_buffer_size`` MB so communication starts early, the others at ``comm_buffer_size`` MB.
"""

from __future__ import annotations

import time
from contextlib import contextmanager, nullcontext

import numpy as np

from ..core.state import STATE
from ..core.tensor import Tensor
from ..nn.layer.base import Layer
from .comm import Group, init_parallel_env, mpi, resolve
from .env import DistributedError

_MB = 1024 * 1024


class Bucket:
    """Parameters whose gradients are reduced in one message: all-reduced, or (``root`` set,
    sharding stage 2) reduced onto the rank that owns them, the others then dropping theirs."""

    def __init__(self, params: list, root: int | None = None) -> None:
        self.params = params
        self.root = root
        self.dtype = params[0]._data.dtype
        self.size = sum(p._data.size for p in params)
        self.buffer = None
        self.views: dict = {}
        self.pending = 0
        self.wire = None  # what travels: the buffer, or a float32 copy of a 16-bit one
        self.allocate()

    @property
    def nbytes(self) -> int:
        return self.size * self.dtype.itemsize

    def allocate(self) -> None:
        self.buffer = np.zeros(self.size, dtype=self.dtype)
        offset = 0
        for p in self.params:
            self.views[id(p)] = self.buffer[offset : offset + p._data.size].reshape(p._data.shape)
            offset += p._data.size

    def release(self) -> None:
        """Free the gradients of a bucket another rank owns."""
        for p in self.params:
            p._grad = None
        self.buffer, self.views = None, {}

    def start(self, comm):
        self.wire = self.buffer if self.buffer.dtype.itemsize > 2 else self.buffer.astype(np.float32)
        if self.root is None:
            return comm.Iallreduce(mpi().IN_PLACE, self.wire, op=mpi().SUM)
        if comm.Get_rank() == self.root:
            return comm.Ireduce(mpi().IN_PLACE, self.wire, op=mpi().SUM, root=self.root)
        return comm.Ireduce(self.wire, None, op=mpi().SUM, root=self.root)

    def finish(self, comm) -> None:
        if self.root is not None and comm.Get_rank() != self.root:
            self.wire = None
            self.release()
            return
        np.multiply(self.wire, 1.0 / comm.Get_size(), out=self.wire, casting="unsafe")
        if self.wire is not self.buffer:
            self.buffer[...] = self.wire
        self.wire = None


def assign_buckets(params: list, comm_buffer_size: float, last_comm_buffer_size: float) -> list[Bucket]:
    """Paddle's grouping: reverse parameter order, one open bucket per dtype, the first one closed at
    ``last_comm_buffer_size`` MB and later ones at ``comm_buffer_size`` MB."""
    buckets, open_buckets, closed_per_dtype = [], {}, {}
    for p in reversed(params):
        key = p._data.dtype
        members = open_buckets.setdefault(key, [])
        members.append(p)
        limit = (last_comm_buffer_size if closed_per_dtype.get(key, 0) == 0 else comm_buffer_size) * _MB
        if sum(q._data.nbytes for q in members) >= limit:
            buckets.append(Bucket(members))
            open_buckets[key] = []
            closed_per_dtype[key] = closed_per_dtype.get(key, 0) + 1
    buckets.extend(Bucket(members) for members in open_buckets.values() if members)
    return buckets


def _tensors(value):
    if isinstance(value, Tensor):
        yield value
    elif isinstance(value, list | tuple):
        for item in value:
            yield from _tensors(item)
    elif isinstance(value, dict):
        for item in value.values():
            yield from _tensors(item)


def contribution_counts(outputs, params: dict[int, object]) -> dict[int, int]:
    """For each parameter (by id), how many gradient messages backward from ``outputs`` sends it."""
    counts = dict.fromkeys(params, 0)
    stack = [t._node for t in _tensors(outputs) if t._node is not None]
    seen = set()
    while stack:
        node = stack.pop()
        if id(node) in seen or node.released:
            continue
        seen.add(id(node))
        for tensor, edge in zip(node.inputs, node.edges, strict=True):
            if tensor is None:
                continue
            if edge[0] is None:
                if id(tensor) in counts:
                    counts[id(tensor)] += 1
            else:
                stack.append(edge[0])
    return counts


class Reducer:
    """The buckets of one DataParallel model and the state of the current backward."""

    def __init__(self, params: list, group: Group, buckets: list[Bucket]) -> None:
        self.group = group
        self.params = {id(p): p for p in params}
        self.buckets = buckets
        self.bucket_of = {id(p): b for b in self.buckets for p in b.params}
        self.remaining: dict[int, int] = {}
        self.requests: list = []
        self.next_bucket = 0
        self.active = False
        self.started = False  # a contribution of the current backward has arrived
        self.wait_seconds = 0.0  # time blocked waiting for reductions, for the benchmark's comm share
        self.bytes_reduced = 0
        for p in params:
            p.register_hook(lambda grad, p=p: self._on_grad(p, grad))

    def install_grads(self) -> None:
        """Make each ``.grad`` the bucket view again (an optimizer may have dropped or replaced it)."""
        for bucket in self.buckets:
            if bucket.buffer is None:
                bucket.allocate()
        for pid, p in self.params.items():
            view = self.bucket_of[pid].views[pid]
            grad = p._grad
            if grad is not None and grad._data is view:
                continue
            view[...] = 0 if grad is None else grad._data
            p._grad = Tensor._wrap(view)

    def prepare(self, outputs) -> None:
        if self.active:  # the last forward had no backward (an evaluation with gradients on)
            if self.started:
                self._abandon()
            mpi().Request.Waitall(self.requests)
        self.install_grads()
        counts = contribution_counts(outputs, self.params)
        self.remaining = {pid: n for pid, n in counts.items() if n}
        for bucket in self.buckets:
            bucket.pending = sum(counts[id(p)] for p in bucket.params)
        self.next_bucket = 0
        self.requests = []
        self.active = True
        self.started = False
        if not self.remaining:  # nothing to wait for: no parameter is reached from the outputs
            self._complete()
        else:
            self._launch_ready()

    def _abandon(self) -> None:
        missing = [p.name for pid, p in self.params.items() if self.remaining.get(pid)]
        self.active = False
        for request in self.requests:
            request.Wait()
        raise DistributedError(
            "DataParallel: forward ran again before the previous backward reached parameters "
            f"{missing[:5]}{' ...' if len(missing) > 5 else ''}; every output of a DataParallel forward must "
            "take part in the loss (or run that forward under paddle.no_grad())"
        )

    def _on_grad(self, param, grad):
        if not self.active or grad._node is not None:
            return None  # no_sync, or a differentiable gradient: accumulate as usual
        pid = id(param)
        self.started = True
        bucket = self.bucket_of[pid]
        view = bucket.views[pid]
        np.add(view, grad._data, out=view)
        self.remaining[pid] -= 1
        bucket.pending -= 1
        if bucket.pending == 0:
            self._launch_ready()
        elif self.requests:
            mpi().Request.Testall(self.requests)  # let MPI progress the reductions in flight
        if all(b.pending == 0 for b in self.buckets):
            self._complete()
        return Tensor._wrap(np.broadcast_to(np.zeros((), view.dtype), view.shape))  # already added above

    def _launch_ready(self) -> None:
        while self.next_bucket < len(self.buckets) and self.buckets[self.next_bucket].pending == 0:
            bucket = self.buckets[self.next_bucket]
            self.requests.append(bucket.start(self.group.comm))
            self.bytes_reduced += bucket.nbytes
            self.next_bucket += 1

    def _complete(self) -> None:
        self._launch_ready()
        start = time.perf_counter()
        mpi().Request.Waitall(self.requests)
        self.wait_seconds += time.perf_counter() - start
        for bucket in self.buckets:
            bucket.finish(self.group.comm)
        self.requests = []
        self.active = False


def _refuse_sparse_tables(layers: Layer) -> None:
    """A row-sparse gradient has no place in a bucket: Paddle all-gathers its rows, which this
    reducer does not do; densifying it would silently turn lazy Adam into dense Adam."""
    for name, layer in layers.named_sublayers(include_self=True):
        if getattr(layer, "_sparse", False):
            raise DistributedError(
                f"DataParallel: embedding {name or type(layer).__name__!r} has sparse=True, and row-sparse "
                "gradients are not reduced across ranks yet; build it with sparse=False under DataParallel "
                "(its gradient is then all-reduced densely)"
            )


class DataParallel(Layer):
    """Paddle's ``paddle.DataParallel(layers, strategy=None, comm_buffer_size=25,
    last_comm_buffer_size=1, find_unused_parameters=False, group=None)``.

    Parameters and buffers start equal on every rank (rank 0's are broadcast); after each
    ``loss.backward()`` every rank holds the gradients averaged over the ranks. ``no_sync()``
    accumulates locally (gradient accumulation); the first backward outside it reduces the sum.
    """

    def __init__(
        self,
        layers,
        strategy=None,
        comm_buffer_size: float = 25,
        last_comm_buffer_size: float = 1,
        find_unused_parameters: bool = False,
        group: Group | None = None,
    ) -> None:
        super().__init__()
        if not isinstance(layers, Layer):
            raise DistributedError(f"DataParallel wraps a paddle.nn.Layer, got {type(layers).__name__}")
        for name, value in (("comm_buffer_size", comm_buffer_size), ("last_comm_buffer_size", last_comm_buffer_size)):
            if isinstance(value, bool) or not isinstance(value, int | float) or value <= 0:
                raise DistributedError(f"DataParallel: {name} is a size in MB and must be positive, got {value!r}")
        if group is None:
            init_parallel_env()
        self._layers = layers
        self.find_unused_parameters = bool(find_unused_parameters)
        self.group = resolve(group)
        self._grad_sync = True
        self._forward_context = nullcontext  # fleet's amp strategy puts auto_cast here
        params = [p for p in layers.parameters() if not p.stop_gradient]
        self._reducer = None
        if self.group.nranks > 1:
            _refuse_sparse_tables(layers)
            self._check_same_model(params)
            self._sync_params_buffers()
            self._reducer = Reducer(params, self.group, self._buckets(params, comm_buffer_size, last_comm_buffer_size))

    def _buckets(self, params: list, comm_buffer_size: float, last_comm_buffer_size: float) -> list[Bucket]:
        return assign_buckets(params, comm_buffer_size, last_comm_buffer_size)

    def _check_same_model(self, params: list) -> None:
        mine = np.array([len(params), sum(p._data.size for p in params)], dtype=np.int64)
        table = np.empty((self.group.nranks, 2), dtype=np.int64)
        self.group.comm.Allgather(mine, table)
        if not (table == table[0]).all():
            seen = ", ".join(
                f"rank {self.group.ranks[i]} has {n} parameters ({size} values)" for i, (n, size) in enumerate(table)
            )
            raise DistributedError(
                f"DataParallel: the ranks built different models ({seen}); build the same model on every rank"
            )

    def _sync_params_buffers(self) -> None:
        """Rank 0's parameters and buffers on every rank (Paddle's ``sync_params_buffers``)."""
        root = 0
        for tensor in [*self._layers.parameters(), *self._layers.buffers()]:
            array = np.ascontiguousarray(tensor._data)
            self.group.comm.Bcast(array.view(np.uint8), root=root)
            tensor._data = array

    def forward(self, *inputs, **kwargs):
        with self._forward_context():
            outputs = self._layers(*inputs, **kwargs)
        if self._reducer is not None and self._grad_sync and STATE.grad_enabled:
            self._reducer.prepare(outputs)
        return outputs

    @contextmanager
    def no_sync(self):
        """Backward inside accumulates gradients on this rank only (no communication)."""
        previous, self._grad_sync = self._grad_sync, False
        try:
            yield
        finally:
            self._grad_sync = previous

    def state_dict(self, *args, **kwargs):
        return self._layers.state_dict(*args, **kwargs)

    def set_state_dict(self, state_dict, use_structured_name: bool = True):
        return self._layers.set_state_dict(state_dict, use_structured_name)

    set_dict = set_state_dict
    load_dict = set_state_dict

    def scale_loss(self, loss):
        return loss  # Paddle 2.x API: gradients are averaged by the reducer, the loss stays as it is

    def apply_collective_grads(self) -> None:
        """Kept for Paddle 2.x scripts: the reduction already happened during backward."""

    def __repr__(self) -> str:
        return f"DataParallel(nranks={self.group.nranks}, layers={self._layers!r})"
