"""Shared by the benchmark scripts: which BLAS NumPy runs on this machine and how fast its GEMM is,
the rate a GEMM-bound workload is measured against (the roofline issue 31 asks for)."""

from __future__ import annotations

import statistics
import time


def describe() -> str:
    """NumPy's BLAS kernel and thread count here (OPENBLAS_CORETYPE can pin an old kernel)."""
    try:
        import numpy  # noqa: F401 - loads the BLAS that threadpoolctl inspects
        from threadpoolctl import threadpool_info
    except ImportError:
        return "unknown (threadpoolctl not installed)"
    found = [
        f"{i.get('internal_api')} {i.get('architecture', '')} ({i.get('num_threads')} threads)".strip()
        for i in threadpool_info()
        if i.get("user_api") == "blas"
    ]
    return ", ".join(found) or "none found"


def matmul_gflops(n: int = 1024, repeat: int = 7) -> float:
    """NumPy's float32 ``n``^3 matmul rate on its default threads, the median of ``repeat`` runs."""
    import numpy as np

    a = np.random.default_rng(0).standard_normal((n, n)).astype("float32")
    b = a.T.copy()
    a @ b
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        a @ b
        times.append(time.perf_counter() - t0)
    return 2 * n**3 / statistics.median(times) / 1e9
