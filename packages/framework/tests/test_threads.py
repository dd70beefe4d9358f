"""Parallel Numba kernels may be called from several Python threads (a user's thread pool of
predictors, a web server): the threading layer must be a thread-safe one."""

import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

SCRIPT = textwrap.dedent(
    """
    import threading
    import paddlectl.framework as paddle  # before NumPy: OpenBLAS threads then spin briefly
    import numba
    from paddlectl.framework.kernels import layer_is_thread_safe

    x = paddle.randn([64, 6, 28, 28])  # large enough for the parallel kernel variants
    def work():
        for _ in range(30):
            paddle.nn.functional.max_pool2d(x, 2)
            paddle.nn.functional.softmax(x, axis=1)
            paddle.nn.functional.layer_norm(x, x.shape[-1:])
    threads = [threading.Thread(target=work) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    print(numba.threading_layer(), layer_is_thread_safe())
    """
)


def test_parallel_kernels_from_many_threads_do_not_abort():
    proc = subprocess.run([sys.executable, "-c", SCRIPT], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]
    layer, safe = proc.stdout.split()
    assert layer in ("omp", "tbb") and safe == "True"


def test_serial_kernels_picks_the_serial_variant_of_big_inputs(monkeypatch):
    from paddlectl.framework import kernels
    from paddlectl.framework.kernels.pool import max_pool_2x2

    calls = []
    monkeypatch.setattr(kernels, "blas_threads_spin", lambda: False)
    monkeypatch.setattr(max_pool_2x2, "serial", lambda *a: calls.append("serial"))
    monkeypatch.setattr(max_pool_2x2, "parallel", lambda *a: calls.append("parallel"))
    big = np.zeros((4, 256, 256), np.float32)
    max_pool_2x2(big, 128, 128)
    with kernels.serial_kernels():
        max_pool_2x2(big, 128, 128)
    max_pool_2x2(big, 128, 128)
    assert calls == ["parallel", "serial", "parallel"]


SPIN_PROBE = """
import sys
if sys.argv[1] == "numpy-first":
    import numpy
import paddlectl.framework
from paddlectl.framework.kernels import blas_threads_spin
import os
print(os.environ.get("OPENBLAS_THREAD_TIMEOUT"), blas_threads_spin())
"""


def _spin_probe(order: str) -> list[str]:
    env = {k: v for k, v in os.environ.items() if k != "OPENBLAS_THREAD_TIMEOUT"}
    env["OPENBLAS_NUM_THREADS"] = "2"
    out = subprocess.run([sys.executable, "-c", SPIN_PROBE, order], env=env, capture_output=True, text=True, check=True)
    return out.stdout.split()


def test_importing_the_framework_first_shortens_openblas_spinning():
    assert _spin_probe("framework-first") == ["16", "False"]


def test_numpy_first_leaves_openblas_spinning_and_kernels_go_serial():
    from threadpoolctl import threadpool_info

    if not any(
        i.get("internal_api") == "openblas" and i.get("threading_layer") == "pthreads" for i in threadpool_info()
    ):
        pytest.skip("NumPy's BLAS here is not a pthreads OpenBLAS")
    assert _spin_probe("numpy-first") == ["None", "True"]
