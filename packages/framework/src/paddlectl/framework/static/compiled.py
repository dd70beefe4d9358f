"""``paddle.static.BuildStrategy`` and ``CompiledProgram``: Paddle's way to ask for graph passes
(fusions, in-place reuse, multi-device reduction) before a static Program runs.

A ``CompiledProgram`` runs through ``Executor.run`` exactly as the Program it wraps. Its
``BuildStrategy`` options are typed and kept with Paddle's defaults, so scripts that set them
run unchanged, but they select nothing here: the IR executor prepares each op per shape and the
inference passes (``static/passes``, chosen through ``paddle.inference.Config``) do the fusing;
multi-device reduction and NCCL/BKCL options have no counterpart on one CPU process.
"""

from __future__ import annotations

import enum

from ..errors import ConfigError
from .static_mode import Executable, Program


class ReduceStrategy(enum.Enum):
    """How gradients of several devices are combined (Paddle's names and values)."""

    AllReduce = 0
    Reduce = 1


_OPTIONS: dict[str, object] = {
    "allow_cuda_graph_capture": False, "async_mode": False, "bkcl_comm_num": 1, "build_cinn_pass": False,
    "cache_runtime_context": False, "debug_graphviz_path": "", "enable_addto": False, "enable_auto_fusion": False,
    "enable_backward_optimizer_op_deps": True, "enable_inplace": True, "fuse_adamw": False,
    "fuse_all_optimizer_ops": False, "fuse_all_reduce_ops": True, "fuse_bn_act_ops": False,
    "fuse_bn_add_act_ops": True, "fuse_broadcast_ops": True, "fuse_dot_product_attention": False,
    "fuse_elewise_add_act_ops": False, "fuse_gemm_epilogue": False, "fuse_relu_depthwise_conv": False,
    "fuse_resunit": False, "fused_attention": False, "fused_feedforward": False,
    "hierarchical_allreduce_inter_nranks": 0, "memory_optimize": None, "nccl_comm_num": 1, "num_trainers": 1,
    "reduce_strategy": ReduceStrategy.AllReduce, "sequential_run": False, "sync_batch_norm": False,
    "trainer_id": 0, "use_hierarchical_allreduce": False,
}  # fmt: skip
"""Paddle 3.3.1's BuildStrategy options and defaults (``memory_optimize`` None: Paddle decides)."""


class BuildStrategy:
    """Paddle's ``paddle.static.BuildStrategy``: options set by attribute, checked by type."""

    ReduceStrategy = ReduceStrategy

    def __init__(self) -> None:
        self.__dict__.update(_OPTIONS)

    def __setattr__(self, name: str, value) -> None:
        if name not in _OPTIONS:
            raise AttributeError(
                f"'BuildStrategy' object has no attribute {name!r}; the options are {sorted(_OPTIONS)}"
            )
        default = _OPTIONS[name]
        kind = bool if default is None else type(default)
        if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
            raise ConfigError(f"BuildStrategy.{name} takes a {kind.__name__}, got {value!r}")
        self.__dict__[name] = value

    def __repr__(self) -> str:
        changed = {k: v for k, v in self.__dict__.items() if v != _OPTIONS[k]}
        return f"BuildStrategy({', '.join(f'{k}={v!r}' for k, v in changed.items())})"


class CompiledProgram(Executable):
    """``CompiledProgram(program, build_strategy=None)``: ``program`` run with ``build_strategy``."""

    def __init__(self, program_or_graph, build_strategy: BuildStrategy | None = None) -> None:
        if not isinstance(program_or_graph, Program):
            raise ConfigError(f"CompiledProgram: pass a paddle.static.Program, got {type(program_or_graph).__name__}")
        if build_strategy is not None and not isinstance(build_strategy, BuildStrategy):
            raise ConfigError(
                f"CompiledProgram: build_strategy must be a paddle.static.BuildStrategy, got "
                f"{type(build_strategy).__name__}"
            )
        self._program = program_or_graph
        self._build_strategy = build_strategy or BuildStrategy()

    def _run(self, feed: dict, fetch_list: list, return_numpy: bool) -> list:
        return self._program._run(feed, fetch_list, return_numpy)
