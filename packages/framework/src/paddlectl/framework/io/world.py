"""This process's rank and the job's size, read from the launcher's environment.

The DataLoader's ``DistributedBatchSampler`` asks in processes that never communicate, so nothing
here starts MPI. ``mpiexec`` (MPICH's Hydra) sets ``PMI_RANK``/``PMI_SIZE``; Paddle's launcher
variables (``PADDLE_TRAINER_ID``/``PADDLE_TRAINERS_NUM``) win where set, so a script written for
``paddle.distributed.launch`` reads the same numbers.
"""

from __future__ import annotations

import os

from ..errors import ConfigError

RANK_VARIABLES = ("PADDLE_TRAINER_ID", "PMI_RANK", "OMPI_COMM_WORLD_RANK")
SIZE_VARIABLES = ("PADDLE_TRAINERS_NUM", "PMI_SIZE", "OMPI_COMM_WORLD_SIZE")


def _first_int(names: tuple[str, ...], default: int) -> int:
    for name in names:
        value = os.environ.get(name)
        if value is None:
            continue
        try:
            return int(value)
        except ValueError:
            raise ConfigError(f"environment variable {name}={value!r} is not an integer; unset it") from None
    return default


def env_rank() -> int:
    """This process's rank in the job it was launched in (0 outside any launcher)."""
    return _first_int(RANK_VARIABLES, 0)


def env_world_size() -> int:
    """How many processes the launcher started (1 outside any launcher)."""
    return _first_int(SIZE_VARIABLES, 1)
