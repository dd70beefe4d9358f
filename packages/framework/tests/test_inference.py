"""paddle.inference: Config switches, the handle API, plain run, clones across threads, bad feeds."""

from __future__ import annotations

import shutil
import threading
from pathlib import Path

import numpy as np
import pytest
import safetensors.numpy

from paddlectl.framework import inference
from paddlectl.framework.errors import CheckpointError, DTypeError, ShapeError

FIXTURE = Path(__file__).parent / "fixtures" / "model_v1_lenet"
SAMPLE = safetensors.numpy.load((FIXTURE / "sample.safetensors").read_bytes())


def _predictor(**switches):
    config = inference.Config(str(FIXTURE))
    config.set_cpu_math_library_num_threads(2)
    if switches.get("memory_optim"):
        config.enable_memory_optim()
    return inference.create_predictor(config)


def test_config_records_switches_for_the_pass_manager():
    config = inference.Config(str(FIXTURE))
    assert config.ir_optim()
    config.switch_ir_optim(False)
    config.delete_pass("fuse_elementwise")
    config.delete_pass("fuse_elementwise")
    config.delete_pass("constant_fold")
    config.enable_memory_optim()
    config.set_cpu_math_library_num_threads(3)
    assert not config.ir_optim()
    assert config.disabled_passes == ("fuse_elementwise", "constant_fold")
    assert config.memory_optim_enabled() and config.cpu_math_library_num_threads() == 3
    with pytest.raises(ValueError, match="positive int"):
        config.set_cpu_math_library_num_threads(0)


def test_unset_threads_pick_one_for_a_small_model_and_the_physical_cores_for_a_large_one(monkeypatch):
    from paddlectl.framework.inference import threads

    monkeypatch.setattr(threads, "physical_cores", lambda: 6)
    assert threads.default_threads({"w": np.zeros(1000, np.float32)}) == 1
    assert threads.default_threads({"a": np.zeros(1 << 17, np.float32), "b": np.zeros(1 << 17, np.float32)}) == 6
    config = inference.Config(str(FIXTURE))
    assert config.cpu_math_library_num_threads() is None
    assert inference.create_predictor(config)._threads == 1  # LeNet's 250 KB of weights
    config.set_cpu_math_library_num_threads(2)
    assert inference.create_predictor(config)._threads == 2


def test_handle_api_matches_plain_run_and_the_reference():
    predictor = _predictor()
    assert predictor.get_input_names() == ["image"] and predictor.get_output_names() == ["logits"]
    handle = predictor.get_input_handle("image")
    handle.reshape(SAMPLE["image"].shape)
    handle.copy_from_cpu(SAMPLE["image"])
    assert predictor.run() is True
    out = predictor.get_output_handle("logits").copy_to_cpu()
    np.testing.assert_allclose(out, SAMPLE["logits"], rtol=1e-5, atol=1e-5)
    (plain,) = predictor.run([SAMPLE["image"]])
    np.testing.assert_array_equal(plain, out)


def test_profile_times_each_op_type_of_a_run():
    predictor = _predictor()
    times = predictor.profile([SAMPLE["image"]])
    ops = {op.name for op in predictor.optimized_program.block.ops} - {"input", "param", "constant"}
    assert set(times) == ops and all(t > 0 for t in times.values())
    with pytest.raises(DTypeError, match="float32"):
        predictor.profile([SAMPLE["image"].astype("float64")])


def test_memory_optim_gives_the_same_outputs():
    (a,) = _predictor(memory_optim=True).run([SAMPLE["image"]])
    (b,) = _predictor().run([SAMPLE["image"]])
    np.testing.assert_array_equal(a, b)


def test_clones_share_weights_and_run_in_threads():
    predictor = _predictor()
    clones = [predictor.clone() for _ in range(3)]
    assert all(c.program is predictor.program for c in clones)
    batches = [np.random.default_rng(i).standard_normal((i + 1, 1, 28, 28)).astype("float32") for i in range(3)]
    results: dict[int, np.ndarray] = {}

    def work(i):
        for _ in range(3):
            results[i] = clones[i].run([batches[i]])[0]

    threads = [threading.Thread(target=work, args=(i,)) for i in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for i in range(3):
        np.testing.assert_array_equal(results[i], predictor.run([batches[i]])[0])


def test_wrong_names_shapes_and_dtypes_are_clear():
    predictor = _predictor()
    with pytest.raises(KeyError, match="inputs are \\['image'\\]"):
        predictor.get_input_handle("x")
    with pytest.raises(ShapeError, match=r"\['N', 1, 28, 28\]"):
        predictor.run([np.zeros((2, 1, 32, 32), "float32")])
    with pytest.raises(ShapeError, match="expected rank 4"):
        predictor.run([np.zeros((1, 28, 28), "float32")])
    with pytest.raises(DTypeError, match="expected float32 data, got float64"):
        predictor.run([np.zeros((2, 1, 28, 28))])
    with pytest.raises(ShapeError, match="takes 1 inputs"):
        predictor.run([SAMPLE["image"], SAMPLE["image"]])
    with pytest.raises(ShapeError, match="does not fit"):
        predictor.get_input_handle("image").reshape([2, 3, 28, 28])


def test_corrupted_directory_is_refused(tmp_path):
    path = tmp_path / "m"
    shutil.copytree(FIXTURE, path)
    (path / "model.json").write_text("not json")
    with pytest.raises(CheckpointError):
        inference.create_predictor(inference.Config(str(path)))


def test_the_thread_count_caps_blas_during_a_run_from_any_thread_and_is_restored():
    """A cap below the default, from the main thread and then from a worker thread (threadpoolctl
    alone would ignore the worker's: only the first thread that set the count may set it again)."""
    from threadpoolctl import threadpool_info

    def blas_threads():
        return [i["num_threads"] for i in threadpool_info() if i["user_api"] == "blas"]

    config = inference.Config(str(FIXTURE))
    config.set_cpu_math_library_num_threads(1)  # the count is read when the predictor is made
    predictor = inference.create_predictor(config)
    before = blas_threads()
    executor = predictor._model.executor
    seen = []

    def spy(arrays):
        seen.append(blas_threads())
        return type(executor).run(executor, arrays)

    executor.run = spy
    predictor.run([SAMPLE["image"]])
    worker = threading.Thread(target=predictor.run, args=([SAMPLE["image"]],))
    worker.start()
    worker.join()
    assert seen == [[1] * len(before)] * 2 and blas_threads() == before
