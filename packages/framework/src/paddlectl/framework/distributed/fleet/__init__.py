"""``paddle.distributed.fleet`` (collective mode): ``init`` with a ``DistributedStrategy``, then
``distributed_model`` and ``distributed_optimizer`` apply it.

The strategy's fields map onto the dynamic-graph pieces: ``fuse_all_reduce_ops`` and
``fuse_grad_size_in_MB`` size DataParallel's gradient buckets (off: one bucket per parameter),
``sharding`` deals buckets to owner ranks (stage 1 optimizer states, stage 2 also gradients),
``amp`` runs the model's forward under ``paddle.amp.auto_cast`` (O2, ``use_pure_fp16``, also
casts the weights with ``paddle.amp.decorate``), ``gradient_merge`` steps every ``k_steps``
backward passes, ``recompute`` re-runs the sublayers named in ``recompute_configs['checkpoints']``
in backward (``fleet.utils.recompute``).
"""

from __future__ import annotations

from functools import partial

from ... import amp
from ...errors import ConfigError
from ...nn.layer.base import Layer
from ...optimizer.gradient_merge import GradientMergeOptimizer
from ..collective import barrier
from ..comm import get_rank, get_world_size, init_parallel_env
from ..data_parallel import DataParallel
from .sharding import ShardedDataParallel, ShardingOptimizer
from .strategy import DistributedStrategy
from .utils import recompute  # loads fleet.utils: paddle.distributed.fleet.utils.recompute as Paddle spells it

_FLEET: dict = {"strategy": None, "model": None}

__all__ = [
    "DistributedStrategy",
    "barrier_worker",
    "distributed_model",
    "distributed_optimizer",
    "init",
    "is_first_worker",
    "worker_index",
    "worker_num",
]


def init(role_maker=None, is_collective: bool = False, strategy: DistributedStrategy | None = None, log_level="INFO"):
    """Start the collective job (MPI) and keep ``strategy`` for distributed_model/optimizer."""
    del role_maker, log_level  # ranks come from mpiexec; logging is the framework's
    if not is_collective:
        raise ConfigError("fleet.init: only collective training is provided; pass is_collective=True")
    if strategy is not None and not isinstance(strategy, DistributedStrategy):
        raise ConfigError(f"fleet.init: strategy must be a fleet.DistributedStrategy, got {type(strategy).__name__}")
    _FLEET["strategy"] = strategy or DistributedStrategy()
    _FLEET["model"] = None
    init_parallel_env()


def _strategy() -> DistributedStrategy:
    if _FLEET["strategy"] is None:
        raise ConfigError(
            "call fleet.init(is_collective=True, strategy=...) before distributed_model/distributed_optimizer"
        )
    return _FLEET["strategy"]


def worker_index() -> int:
    return get_rank()


def worker_num() -> int:
    return get_world_size()


def is_first_worker() -> bool:
    return get_rank() == 0


def barrier_worker() -> None:
    barrier()


def distributed_model(model):
    """``model`` wrapped for data-parallel training as the strategy says."""
    strategy = _strategy()
    if not isinstance(model, Layer):
        raise ConfigError(f"fleet.distributed_model wraps a paddle.nn.Layer, got {type(model).__name__}")
    amp_on, amp_configs = strategy.amp, strategy.amp_configs
    dtype = "bfloat16" if amp_configs["use_bf16"] else "float16"
    level = "O2" if amp_configs["use_pure_fp16"] else "O1"
    if amp_on and level == "O2":
        model = amp.decorate(models=model, level="O2", dtype=dtype)
    if strategy.recompute:
        _recompute_sublayers(model, strategy.recompute_configs["checkpoints"])
    # fuse_all_reduce_ops off: a bucket per parameter (any positive size below the smallest one)
    size = strategy.fuse_grad_size_in_MB if strategy.fuse_all_reduce_ops else 1e-9
    last = 1 if strategy.fuse_all_reduce_ops else 1e-9
    if strategy.sharding:
        wrapped = ShardedDataParallel(model, strategy.sharding_configs["stage"], size, last)
    else:
        wrapped = DataParallel(model, comm_buffer_size=size, last_comm_buffer_size=last)
    if amp_on:
        wrapped._forward_context = partial(
            amp.auto_cast,
            custom_white_list=amp_configs["custom_white_list"] or None,
            custom_black_list=amp_configs["custom_black_list"] or None,
            level=level,
            dtype=dtype,
        )
    _FLEET["model"] = wrapped
    return wrapped


def _recompute_sublayers(model: Layer, names: list) -> None:
    """Each named sublayer's forward runs under ``fleet.utils.recompute``: its activations are not
    kept, backward recomputes them."""
    found = dict(model.named_sublayers())
    unknown = [n for n in names if n not in found]
    if unknown:
        raise ConfigError(
            f"recompute_configs['checkpoints'] names {unknown[:3]}, which are not sublayers; known: {list(found)[:8]}"
        )
    for name in names:
        layer = found[name]
        forward = layer.forward
        layer.forward = lambda *args, _forward=forward, **kwargs: recompute(_forward, *args, **kwargs)


def distributed_optimizer(optimizer, strategy: DistributedStrategy | None = None):
    """``optimizer`` wrapped as the strategy says (sharding: each rank steps what it owns)."""
    if strategy is not None:
        if not isinstance(strategy, DistributedStrategy):
            raise ConfigError(
                f"fleet.distributed_optimizer: strategy must be a DistributedStrategy, got {type(strategy).__name__}"
            )
        _FLEET["strategy"] = strategy
    strategy = _strategy()
    if strategy.gradient_merge and strategy.sharding:
        raise ConfigError(
            "gradient_merge with sharding is not provided (the sharded step would clip and broadcast every "
            "micro-batch); use one of them, or sharding with a k-times-larger batch"
        )
    if strategy.gradient_merge:
        return GradientMergeOptimizer(optimizer, **strategy.gradient_merge_configs)
    if strategy.sharding:
        if _FLEET["model"] is None:
            raise ConfigError(
                "sharding: call fleet.distributed_model(model) before fleet.distributed_optimizer(optimizer)"
            )
        optimizer = ShardingOptimizer(optimizer, _FLEET["model"])
    return optimizer
