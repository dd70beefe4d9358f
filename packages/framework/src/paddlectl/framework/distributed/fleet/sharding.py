"""Sharding (ZeRO) stages 1 and 2 over DataParallel's buckets.

The gradient buckets are dealt out to the ranks, largest first to the least loaded, and a rank
*owns* the parameters of its buckets: only the owner keeps optimizer states for them (stage 1,
states per rank ~1/world_size), and under stage 2 a bucket's gradients are reduced onto its owner
alone (``Ireduce`` instead of ``Iallreduce``) and freed on the other ranks, so gradients held
between backward and step are ~1/world_size too. After each owner steps its parameters it
broadcasts them, and every rank again holds the whole model. Buckets are made small enough (at
most a quarter of an even share) that the deal is balanced.
"""

from __future__ import annotations

import numpy as np

from ...optimizer.clip import ClipGradByGlobalNorm
from ..comm import mpi
from ..data_parallel import _MB, Bucket, DataParallel, assign_buckets
from ..env import DistributedError


def deal(buckets: list[Bucket], nranks: int) -> list[int]:
    """The owner of each bucket: largest first, to the least loaded rank (ties to the lowest)."""
    load = [0] * nranks
    owners = [0] * len(buckets)
    for index in sorted(range(len(buckets)), key=lambda i: (-buckets[i].nbytes, i)):
        rank = min(range(nranks), key=lambda r: (load[r], r))
        owners[index] = rank
        load[rank] += buckets[index].nbytes
    return owners


class ShardedDataParallel(DataParallel):
    """DataParallel whose buckets have owners; with ``stage=2`` gradients are reduced to owners only."""

    def __init__(
        self, layers, stage: int = 1, comm_buffer_size: float = 25, last_comm_buffer_size: float = 1, group=None
    ):
        object.__setattr__(self, "_stage", stage)  # read by _buckets, which Layer's constructor path reaches
        object.__setattr__(self, "owner", {})
        super().__init__(
            layers, comm_buffer_size=comm_buffer_size, last_comm_buffer_size=last_comm_buffer_size, group=group
        )
        if not self.owner:  # one rank: it owns everything
            self.owner = {id(p): 0 for p in layers.parameters()}

    def _buckets(self, params: list, comm_buffer_size: float, last_comm_buffer_size: float) -> list[Bucket]:
        share = sum(p._data.nbytes for p in params) / self.group.nranks / 4 / _MB
        cap = min(comm_buffer_size, max(share, 1e-6))
        buckets = assign_buckets(params, cap, min(last_comm_buffer_size, cap))
        for bucket, owner in zip(buckets, deal(buckets, self.group.nranks), strict=True):
            bucket.root = owner if self._stage == 2 else None
            self.owner.update({id(p): owner for p in bucket.params})
        return buckets


class ShardingOptimizer:
    """Wraps an optimizer so that each rank updates (and keeps states for) only what it owns."""

    def __init__(self, optimizer, model: ShardedDataParallel) -> None:
        if not isinstance(model, ShardedDataParallel):
            raise DistributedError(
                "sharding needs the model from fleet.distributed_model(model) with strategy.sharding on"
            )
        self._inner = optimizer
        self._model = model
        self._rank = model.group.rank
        self._params = [p for g in optimizer._groups for p in g["params"]]
        unknown = [p.name for p in self._params if id(p) not in model.owner]
        if unknown:
            raise DistributedError(
                f"sharding: the optimizer's parameters {unknown[:3]} are not parameters of the distributed model"
            )
        self._global_clip = None
        clip = optimizer._grad_clip
        if isinstance(clip, ClipGradByGlobalNorm):  # the norm must be taken over every rank's share
            self._global_clip = clip
            optimizer._grad_clip = None
        for group in optimizer._groups:
            if isinstance(group.get("grad_clip"), ClipGradByGlobalNorm):
                self._global_clip = group["grad_clip"]
                group["grad_clip"] = None
            group["params"] = [p for p in group["params"] if self.owns(p)]

    def owns(self, param) -> bool:
        return self._model.owner[id(param)] == self._rank

    def __getattr__(self, name: str):
        return getattr(self._inner, name)

    def _clip_global_norm(self) -> None:
        owned = [p._grad._data for p in self._params if self.owns(p) and p._grad is not None]
        square = np.array([sum(float(np.sum(np.square(g, dtype=np.float64))) for g in owned)])
        if self._model.group.nranks > 1:
            self._model.group.comm.Allreduce(mpi().IN_PLACE, square, op=mpi().SUM)
        norm = float(np.sqrt(square[0]))
        scale = self._global_clip.clip_norm / max(norm, self._global_clip.clip_norm)
        for g in owned:
            np.multiply(g, scale, out=g, casting="unsafe")

    def step(self) -> None:
        for p in self._params:
            if not self.owns(p):
                p._grad = None  # stage 2 freed it; stage 1 has no use for it here
        if self._global_clip is not None:
            self._clip_global_norm()
        self._inner.step()
        self._broadcast_parameters()

    def _broadcast_parameters(self) -> None:
        if self._model.group.nranks == 1:
            return
        comm = self._model.group.comm
        requests = []
        for p in self._params:
            array = np.ascontiguousarray(p._data)
            p._data = array
            requests.append(comm.Ibcast(array.view(np.uint8), root=self._model.owner[id(p)]))
        mpi().Request.Waitall(requests)

    def minimize(self, loss, startup_program=None, parameters=None, no_grad_set=None):
        self.step()
        return None, [(p, p.grad) for p in self._params if self.owns(p) and p.grad is not None]

    def clear_grad(self, set_to_zero: bool = True) -> None:
        for p in self._params:
            if not p.stop_gradient:
                p.clear_gradient(set_to_zero)

    clear_gradients = clear_grad

    def state_bytes(self) -> int:
        """Bytes of optimizer state this rank holds (the figure sharding divides by world_size)."""
        return sum(t._data.nbytes for store in self._inner._accumulators.values() for t in store.values())
