"""Parallel Numba kernels may be called from several Python threads (a user's thread pool of
predictors, a web server): the threading layer must be a thread-safe one."""

import os
import subprocess
import sys
import textwrap
import time

import numpy as np
import pytest

SCRIPT = textwrap.dedent(
    """
    import threading
    import paddlectl.framework as paddle
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
import sys, time
if sys.argv[1] == "numpy-first":
    import numpy
import paddlectl.framework
from paddlectl.framework.kernels import blas_threads_spin
import numpy as np
import os

a = np.ones((512, 512), np.float32)
idle_cpu = 0.0
for _ in range(3):
    a @ a  # a threaded GEMM; its idle worker then spins or sleeps through the pause below
    start = time.process_time()
    time.sleep(0.1)
    idle_cpu += time.process_time() - start
print(os.environ.get("OPENBLAS_THREAD_TIMEOUT"), blas_threads_spin(), round(idle_cpu * 1000))
"""


def _spin_probe(order: str, timeout: str | None = None) -> tuple[str, str, int]:
    """(OPENBLAS_THREAD_TIMEOUT, blas_threads_spin(), ms of CPU the process used over 0.3 s of sleep
    right after threaded GEMMs: ~0 when the BLAS workers sleep, up to 300 while they spin)."""
    env = {k: v for k, v in os.environ.items() if k != "OPENBLAS_THREAD_TIMEOUT"}
    env["OPENBLAS_NUM_THREADS"] = "2"
    if timeout is not None:
        env["OPENBLAS_THREAD_TIMEOUT"] = timeout
    out = subprocess.run([sys.executable, "-c", SPIN_PROBE, order], env=env, capture_output=True, text=True, check=True)
    chosen, spins, idle_cpu_ms = out.stdout.split()
    return chosen, spins, int(idle_cpu_ms)


def _threaded_openblas() -> None:
    from threadpoolctl import threadpool_info

    if not any(
        i.get("internal_api") == "openblas" and i.get("threading_layer") == "pthreads" for i in threadpool_info()
    ):
        pytest.skip("NumPy's BLAS here is not a pthreads OpenBLAS")


@pytest.mark.parametrize("order", ["framework-first", "numpy-first"])
def test_openblas_spins_briefly_whichever_was_imported_first(order):
    _threaded_openblas()
    chosen, spins, idle_cpu_ms = _spin_probe(order)
    assert (chosen, spins) == ("16", "False")
    assert idle_cpu_ms < 60, f"OpenBLAS's idle threads used {idle_cpu_ms} ms of CPU while the process slept"


def test_a_long_spin_the_user_chose_is_kept_and_kernels_go_serial():
    _threaded_openblas()
    chosen, spins, idle_cpu_ms = _spin_probe("numpy-first", timeout="28")
    assert (chosen, spins) == ("28", "True")
    # the control, relative to the brief spin measured beside it: on a loaded machine a spinning thread
    # gets less than a core, so a fixed floor failed there while the gap stayed wide
    brief_cpu_ms = _spin_probe("numpy-first")[2]
    assert idle_cpu_ms > max(20, 3 * brief_cpu_ms), (
        f"the control: with OpenBLAS's default spin its idle threads should burn CPU ({idle_cpu_ms} ms "
        f"against {brief_cpu_ms} ms with the brief spin)"
    )


def test_physical_cores_counts_each_core_once():
    from paddlectl.framework.kernels.cores import physical_cores

    assert 1 <= physical_cores() <= len(os.sched_getaffinity(0))


def test_the_free_core_reading_subtracts_other_processes_and_is_held_for_an_interval(monkeypatch):
    from paddlectl.framework.kernels import cores

    busy = [0]
    monkeypatch.setattr(cores, "physical_cores", lambda: 4)
    monkeypatch.setattr(cores, "_busy_elsewhere", lambda: busy[0])
    monkeypatch.setattr(cores, "_machine_wide", lambda: True)
    free = cores._FreeCores()
    assert free() == 4
    busy[0] = 3
    assert free() == 4  # the reading holds for INTERVAL_S
    free._read_at = -1.0
    assert free() == 1
    busy[0], free._read_at = 9, -1.0
    assert free() == 1
    busy[0], free._read_at = 2, -1.0
    assert free() == 2


def test_a_worker_that_stops_spinning_mid_reading_is_not_another_process(monkeypatch):
    from paddlectl.framework.kernels import cores

    ours = iter([2, 1])  # two of our threads run as the machine is counted, one a moment later
    monkeypatch.setattr(cores, "_own_running", lambda: next(ours))
    monkeypatch.setattr(cores, "_machine_running", lambda: 2)
    assert cores._busy_elsewhere() == 0
    ours = iter([1, 1])
    assert cores._busy_elsewhere() == 1  # a task of someone else's


SPINNER = "import time\nend = time.monotonic() + 60\nwhile time.monotonic() < end: pass"


def test_beside_spinning_neighbours_a_predictor_run_takes_one_thread(monkeypatch):
    from paddlectl.framework import kernels
    from paddlectl.framework.inference import threads
    from paddlectl.framework.kernels import blas, cores

    n = cores.physical_cores()
    if n < 2 or not cores._machine_wide():
        pytest.skip("needs at least two cores this process may all use")
    reading = cores._FreeCores()
    monkeypatch.setattr(threads, "free_cores", reading)
    seen = []

    def run():
        seen.append((kernels.parallel_allowed(), [get() for get, _ in blas._blas_libraries()]))

    spinners = [subprocess.Popen([sys.executable, "-c", SPINNER]) for _ in range(n)]
    try:
        time.sleep(0.5)  # the interpreters start and spin
        threads.call_limited(n, run)
    finally:
        for spinner in spinners:
            spinner.kill()
            spinner.wait()
    parallel, blas_counts = seen[0]
    assert not parallel and set(blas_counts) <= {1}


def test_every_kernel_releases_the_gil():
    """Predictors in several Python threads (the OCR chain's images, serving's workers) only run at once
    if no kernel holds the GIL: every Numba function in ``kernels`` goes through ``kernels.njit``."""
    import importlib
    import pkgutil

    from numba.core.registry import CPUDispatcher

    from paddlectl.framework import kernels

    found = []
    for info in pkgutil.iter_modules(kernels.__path__):
        module = importlib.import_module(f"{kernels.__name__}.{info.name}")
        for value in vars(module).values():
            dispatchers = [value.parallel, value.serial] if isinstance(value, kernels.SizeDispatched) else [value]
            found += [
                (info.name, d) for d in dispatchers if isinstance(d, CPUDispatcher) and d.__module__ == module.__name__
            ]
    assert len(found) > 50
    holding = [f"{name}.{d.__name__}" for name, d in found if not d.targetoptions.get("nogil")]
    assert not holding, f"kernels holding the GIL: {holding}"


def test_a_run_inside_a_run_does_not_wait_for_itself(monkeypatch):
    """Before the first parallel kernel picks Numba's threading layer, runs take turns on a lock; a
    run that calls another predictor (or the cap again) from inside one must not deadlock."""
    import threading

    from paddlectl.framework.inference import threads

    monkeypatch.setattr(threads, "layer_is_thread_safe", lambda: False)
    result = []
    worker = threading.Thread(target=lambda: result.append(threads.call_limited(1, threads.call_limited, 1, int, "7")))
    worker.start()
    worker.join(timeout=10)
    assert result == [7]
