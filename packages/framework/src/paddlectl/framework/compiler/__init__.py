"""The compiler (the CINN role): elementwise fusion into generated Numba kernels, cached on disk.

``fusion.fuse_elementwise`` is the pass; ``fused_op`` registers the ``fused_elementwise`` op it
emits; ``codegen`` writes a kernel's source from the per-op table in ``scalar_exprs``;
``kernel_cache`` compiles it once and loads it from Numba's cache afterwards; ``report`` says what
happened, per model.
"""

from .fused_op import fused_elementwise_op
from .kernel_cache import cache_dir, get_kernel

__all__ = ["cache_dir", "fused_elementwise_op", "get_kernel"]
