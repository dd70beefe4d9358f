"""The error every distributed call raises, and Paddle's ``ParallelEnv`` over the launcher's
environment (``io.world``), which answers without starting MPI."""

from __future__ import annotations

from ..errors import PaddlectlError
from ..io.world import env_rank, env_world_size


class DistributedError(PaddlectlError, RuntimeError):
    """A collective cannot run as asked (ranks disagree, MPI is missing, a peer failed); the message
    names the ranks involved and the fix."""


class ParallelEnv:
    """Paddle's ``paddle.distributed.ParallelEnv``: this process's rank and the job's size."""

    @property
    def rank(self) -> int:
        return env_rank()

    @property
    def world_size(self) -> int:
        return env_world_size()

    @property
    def device_id(self) -> int:
        return 0  # one CPU place per process

    dev_id = device_id
    local_rank = rank
    nranks = world_size
    trainer_id = rank
