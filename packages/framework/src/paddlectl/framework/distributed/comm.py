"""The MPI engine behind ``paddle.distributed``: process groups over mpi4py communicators.

mpi4py is imported when a process first communicates (``init_parallel_env`` or a collective), so
importing the framework never starts MPI. Every process of a job runs under ``mpiexec``
(``paddlectl launch``); a process started alone is a world of one, in which every collective is the
identity, as in Paddle.
"""

from __future__ import annotations

from ..io.world import env_rank, env_world_size
from .env import DistributedError

_STATE: dict = {"world": None, "groups": []}


def mpi():
    """mpi4py's ``MPI`` module, or a DistributedError that says how to install it."""
    try:
        from mpi4py import MPI
    except ImportError:
        raise DistributedError(
            "paddle.distributed runs on MPI and mpi4py is not installed; "
            "install it with: pip install 'paddlectl-framework[distributed]'"
        ) from None
    return MPI


class Group:
    """A set of ranks that communicate together (Paddle's ``paddle.distributed.Group``).

    ``rank`` is this process's rank inside the group (-1 when it is not a member), ``ranks`` the
    members' global ranks in group order.
    """

    def __init__(self, comm, ranks: list[int], gid: int) -> None:
        self.comm = comm
        self.ranks = ranks
        self.id = gid

    @property
    def rank(self) -> int:
        return self.comm.Get_rank() if self.is_member() else -1

    @property
    def nranks(self) -> int:
        return len(self.ranks)

    world_size = nranks

    def is_member(self) -> bool:
        return self.comm is not None and self.comm != mpi().COMM_NULL

    def get_group_rank(self, rank: int) -> int:
        """The group rank of global ``rank`` (-1 when it is not a member)."""
        return self.ranks.index(rank) if rank in self.ranks else -1

    def __repr__(self) -> str:
        return f"Group(id={self.id}, rank={self.rank}, nranks={self.nranks}, ranks={self.ranks})"


def init_parallel_env() -> Group:
    """Start MPI (once) and return the group of every process; call it on every rank first."""
    if _STATE["world"] is None:
        comm = mpi().COMM_WORLD
        expected = env_world_size()
        if comm.Get_size() != expected:
            raise DistributedError(
                f"the launcher announced {expected} processes but MPI sees {comm.Get_size()}; "
                "start the job with `paddlectl launch --nproc N` (mpiexec), not another launcher"
            )
        _STATE["world"] = Group(comm, list(range(comm.Get_size())), 0)
    return _STATE["world"]


def is_initialized() -> bool:
    return _STATE["world"] is not None


def world() -> Group:
    """The world group, starting MPI if no one has yet (a collective before init_parallel_env)."""
    return _STATE["world"] or init_parallel_env()


def resolve(group: Group | None) -> Group:
    """``group`` or the world; a DistributedError when this process is not one of its members."""
    group = world() if group is None else group
    if not isinstance(group, Group):
        raise DistributedError(f"group must be a Group from new_group() or None, got {type(group).__name__}")
    if not group.is_member():
        raise DistributedError(
            f"rank {get_rank()} is not a member of {group!r}; call collectives of a group only on its ranks"
        )
    return group


def get_rank(group: Group | None = None) -> int:
    """This process's rank (in ``group`` if given): the launcher's number before MPI starts."""
    if group is not None:
        return resolve(group).rank
    return _STATE["world"].rank if _STATE["world"] is not None else env_rank()


def get_world_size(group: Group | None = None) -> int:
    """How many processes (in ``group`` if given)."""
    if group is not None:
        return group.nranks
    return _STATE["world"].nranks if _STATE["world"] is not None else env_world_size()


def new_group(ranks: list[int] | None = None, backend: str | None = None, timeout=None) -> Group:
    """A group of the given global ranks; every rank of the world calls it, members or not."""
    del backend, timeout  # one backend (MPI); MPI collectives have no timeout
    top = world()
    members = list(range(top.nranks)) if ranks is None else list(ranks)
    bad = [r for r in members if not isinstance(r, int) or not 0 <= r < top.nranks]
    if bad or len(set(members)) != len(members) or not members:
        raise DistributedError(
            f"new_group(ranks={ranks!r}): ranks must be distinct integers in [0, {top.nranks}); got {members}"
        )
    comm = top.comm.Create(top.comm.Get_group().Incl(members))
    _STATE["groups"].append(None)
    return Group(comm, members, len(_STATE["groups"]))
