"""matmul's GEMMs sum the same way at any load (``kernels.blas.matmul``): a large one whose layout
OpenBLAS's threads sum as one thread does runs whole on the free cores, any other on one BLAS
thread, in fixed parts where it is large, whether its parts run at once or one after another; the
BLAS thread count is restored afterwards."""

import numpy as np
import pytest

import paddlectl.framework as paddle
from paddlectl.framework.kernels import blas
from paddlectl.framework.kernels.blas import _blas_libraries


def _counts() -> list[int]:
    return [get() for get, _ in _blas_libraries()]


@pytest.fixture
def seen(monkeypatch):
    """The BLAS thread counts in force during each np.matmul call ``blas.matmul`` makes."""
    calls = []
    real = np.matmul

    def spy(a, b, out=None):
        calls.append(_counts())
        return real(a, b, out=out)

    monkeypatch.setattr(blas.np, "matmul", spy)
    return calls


@pytest.fixture
def threads_disagree(monkeypatch):
    """As if OpenBLAS's threads summed every product otherwise than one thread: the fixed split."""
    monkeypatch.setattr(blas, "_threads_agree", lambda layout, threads: threads == 1)


def test_small_and_large_gemms_run_on_one_blas_thread(seen, monkeypatch, threads_disagree):
    before = _counts()
    if not before or max(before) < 2:
        pytest.skip("the BLAS runs one thread here: nothing to cap")
    monkeypatch.setattr(blas, "physical_cores", lambda: 2)
    x = paddle.to_tensor(np.ones((8, 4), np.float32))
    w = paddle.to_tensor(np.ones((4, 3), np.float32))
    np.testing.assert_array_equal(paddle.matmul(x, w).numpy(), np.full((8, 3), 4, np.float32))
    assert seen == [[1] * len(before)]
    monkeypatch.setattr(blas, "SMALL_GEMM_MACS", 8 * 4 * 3)  # now the same product is split in two
    monkeypatch.setattr(blas, "PART_MACS", 1)
    np.testing.assert_array_equal(paddle.matmul(x, w).numpy(), np.full((8, 3), 4, np.float32))
    assert seen == [[1] * len(before)] * 3
    assert _counts() == before


@pytest.mark.parametrize("shape", [(300, 70, 40), (40, 70, 300)])  # split by rows, by columns
def test_a_split_product_sums_the_same_way_at_any_load(monkeypatch, threads_disagree, shape):
    m, k, n = shape
    rng = np.random.default_rng(0)
    a = rng.standard_normal((m, k)).astype(np.float32)
    b = rng.standard_normal((k, n)).astype(np.float32)
    monkeypatch.setattr(blas, "SMALL_GEMM_MACS", 1)
    monkeypatch.setattr(blas, "PART_MACS", 1)
    monkeypatch.setattr(blas, "physical_cores", lambda: 3)
    monkeypatch.setattr(blas, "free_cores", lambda: 3)
    at_once = blas.matmul(a, b)
    monkeypatch.setattr(blas, "free_cores", lambda: 1)  # busy neighbours: the parts run one by one
    assert np.array_equal(blas.matmul(a, b), at_once)
    parts = [(0, 100), (100, 200), (200, 300)]
    one_by_one = (
        np.concatenate([a[i:j] @ b for i, j in parts])
        if m > n
        else np.concatenate([a @ b[:, i:j] for i, j in parts], 1)
    )
    assert np.array_equal(at_once, one_by_one)
    np.testing.assert_allclose(at_once, a @ b, rtol=1e-5, atol=1e-4)


def test_transposed_operands_and_float64():
    rng = np.random.default_rng(1)
    a = rng.standard_normal((600, 90))
    b = rng.standard_normal((500, 90))
    np.testing.assert_allclose(blas.matmul(a, b.T), a @ b.T, rtol=1e-12, atol=1e-10)
    assert blas.matmul(a, b.T).dtype == np.float64


def test_many_cores_do_not_cut_a_product_into_parts_smaller_than_part_macs(monkeypatch, threads_disagree):
    monkeypatch.setattr(blas, "physical_cores", lambda: 64)
    monkeypatch.setattr(blas, "free_cores", lambda: 64)
    submitted = []
    real_pool = blas._pool

    def counting_pool():
        pool = real_pool()
        return type("Pool", (), {"submit": lambda self, *a, **k: submitted.append(1) or pool.submit(*a, **k)})()

    monkeypatch.setattr(blas, "_pool", counting_pool)
    a = np.ones((256, 128), np.float32)
    b = np.ones((128, 512), np.float32)  # 16M multiply-adds: 8 parts of 2M, not 64
    np.testing.assert_array_equal(blas.matmul(a, b), np.full((256, 512), 128, np.float32))
    assert len(submitted) == 16 * 2**20 // blas.PART_MACS - 1


def test_a_forked_child_splits_products_with_threads_of_its_own(monkeypatch, threads_disagree):
    import os
    import signal

    monkeypatch.setattr(blas, "physical_cores", lambda: 2)
    monkeypatch.setattr(blas, "free_cores", lambda: 2)
    a = np.ones((512, 128), np.float32)
    b = np.ones((128, 512), np.float32)
    blas.matmul(a, b)  # the parent's helper thread now exists
    pid = os.fork()
    if pid == 0:  # the child: a split product must not wait on the parent's (absent) thread
        signal.alarm(30)  # a wait that never ends kills the child
        ok = np.array_equal(blas.matmul(a, b), np.full((512, 512), 128, np.float32))
        os._exit(0 if ok else 1)
    _, status = os.waitpid(pid, 0)
    assert os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0


def test_a_models_small_products_take_one_blas_thread_inside_its_run(seen, monkeypatch):
    """Inside the only capped region (a predictor's run at two threads), ``BLAS_CAP.matmul`` runs a
    product under ``PARALLEL_GEMM_MACS`` on one BLAS thread and a larger one on the region's count,
    restoring the count after each; with a second region open it changes nothing."""
    before = _counts()
    if not before or max(before) < 2:
        pytest.skip("the BLAS runs one thread here: nothing to narrow")
    a, b = np.ones((2, 3), np.float32), np.ones((3, 4), np.float32)
    blas.BLAS_CAP.enter(2)
    try:
        np.testing.assert_array_equal(blas.BLAS_CAP.matmul(a, b), np.full((2, 4), 3, np.float32))
        assert _counts() == [2] * len(before)
        limit = blas.PARALLEL_GEMM_MACS
        monkeypatch.setattr(blas, "PARALLEL_GEMM_MACS", 2 * 3 * 4)  # the same product now counts as large
        blas.BLAS_CAP.matmul(a, b)
        monkeypatch.setattr(blas, "PARALLEL_GEMM_MACS", limit)
        blas.BLAS_CAP.enter(2)  # a second region (another predictor's run on another thread)
        blas.BLAS_CAP.matmul(a, b)
        blas.BLAS_CAP.exit()
    finally:
        blas.BLAS_CAP.exit()
    assert seen == [[1] * len(before), [2] * len(before), [2] * len(before)]
    assert _counts() == before


@pytest.mark.parametrize("free", [2, 1])
def test_a_product_whose_threads_agree_runs_whole_on_the_free_cores_with_one_threads_sums(seen, monkeypatch, free):
    before = _counts()
    if not before or max(before) < 2:
        pytest.skip("the BLAS runs one thread here: nothing to choose")
    monkeypatch.setattr(blas, "physical_cores", lambda: 2)
    monkeypatch.setattr(blas, "free_cores", lambda: free)
    monkeypatch.setattr(blas, "_threads_agree", lambda layout, threads: True)
    rng = np.random.default_rng(2)
    a, b = rng.standard_normal((256, 300)).astype(np.float32), rng.standard_normal((400, 300)).astype(np.float32).T
    out = blas.matmul(a, b)
    assert seen == [[free] * len(before)] and _counts() == before
    blas.BLAS_CAP.enter(1)
    try:
        assert np.array_equal(out, np.matmul(a, b))
    finally:
        blas.BLAS_CAP.exit()


def test_threads_agree_is_checked_once_per_layout_on_random_operands():
    a, b = np.ones((64, 70), np.float32), np.ones((70, 90), np.float64, order="F")
    layout = blas._layout(a, b)
    assert layout == ((64, 70), (70, 90), "<f4", "<f8", ("C", "F"))
    assert blas._layout(a[:, ::2], b) is None  # other strides: NumPy copies, nothing to record
    assert blas._threads_agree(layout, 1) is True
    hits = blas._threads_agree.cache_info().hits
    first = blas._threads_agree(layout, 2)
    assert isinstance(first, bool) and blas._threads_agree(layout, 2) == first
    assert blas._threads_agree.cache_info().hits == hits + 1
