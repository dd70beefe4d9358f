"""The compiler (the CINN role): the ``fused_elementwise`` op that fused groups become, and the report.

The ``fuse_elementwise`` pass (``static/passes/fusion.py``) groups elementwise chains, reading each
op's scalar expression from its record; ``kernels.codegen`` writes a group's kernel source,
``kernels.kernel_cache`` compiles it once and loads it from Numba's cache afterwards; ``fused_op``
registers the op a group becomes; ``report`` says what happened, per model.
"""

from ..kernels.kernel_cache import cache_dir, get_kernel
from .fused_op import fused_elementwise_op

__all__ = ["cache_dir", "fused_elementwise_op", "get_kernel"]
