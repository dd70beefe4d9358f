"""``paddle.distributed`` on MPI: process groups, collectives on Tensors, ``DataParallel``,
distributed checkpoints and ``fleet``.

Jobs start with ``paddlectl launch --nproc N script.py`` (``mpiexec`` underneath); mpi4py is
imported only when a process first communicates.
"""

from ..io.sampler import DistributedBatchSampler
from . import checkpoint, fleet
from .checkpoint import Sharded, load_state_dict, save_state_dict
from .collective import (
    ReduceOp,
    Task,
    all_gather,
    all_reduce,
    barrier,
    broadcast,
    recv,
    reduce,
    reduce_scatter,
    send,
)
from .comm import Group, get_rank, get_world_size, init_parallel_env, is_initialized, new_group
from .data_parallel import DataParallel
from .env import DistributedError, ParallelEnv

__all__ = [
    "DataParallel",
    "DistributedBatchSampler",
    "DistributedError",
    "Group",
    "ParallelEnv",
    "ReduceOp",
    "Sharded",
    "Task",
    "all_gather",
    "all_reduce",
    "barrier",
    "broadcast",
    "get_rank",
    "get_world_size",
    "init_parallel_env",
    "is_initialized",
    "load_state_dict",
    "new_group",
    "recv",
    "reduce",
    "reduce_scatter",
    "save_state_dict",
    "send",
]
