"""matmul runs a small GEMM on one BLAS thread and a large one on the BLAS's own count, restoring
the count afterwards (``ops.linalg.SMALL_GEMM_MACS``)."""

import numpy as np
import pytest

import paddlectl.framework as paddle
from paddlectl.framework.kernels.blas import _blas_libraries
from paddlectl.framework.ops import linalg


def _counts() -> list[int]:
    return [get() for get, _ in _blas_libraries()]


@pytest.fixture
def seen(monkeypatch):
    """The BLAS thread counts in force during each np.matmul call linalg makes."""
    calls = []
    real = np.matmul

    def spy(a, b):
        calls.append(_counts())
        return real(a, b)

    monkeypatch.setattr(linalg.np, "matmul", spy)
    return calls


def test_small_gemm_one_thread_large_gemm_default(seen, monkeypatch):
    before = _counts()
    if not before or max(before) < 2:
        pytest.skip("the BLAS runs one thread here: nothing to cap")
    x = paddle.to_tensor(np.ones((8, 4), np.float32))
    w = paddle.to_tensor(np.ones((4, 3), np.float32))
    np.testing.assert_array_equal(paddle.matmul(x, w).numpy(), np.full((8, 3), 4, np.float32))
    monkeypatch.setattr(linalg, "SMALL_GEMM_MACS", 8 * 4 * 3)  # now the same product counts as large
    paddle.matmul(x, w)
    assert seen == [[1] * len(before), before]
    assert _counts() == before
