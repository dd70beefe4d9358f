"""A served model's warm-up with symbolic image sizes (a recogniser's height cannot shrink to 1)."""

from __future__ import annotations

import logging

import pytest

import paddlectl.framework as paddle
from paddlectl.framework.static import InputSpec
from paddlectl.serving import model as model_module
from paddlectl.serving.model import ServedModel


def _export(tmp_path, model, name: str):
    """``model`` saved with symbolic height and width."""
    path = tmp_path / name
    paddle.jit.save(model, str(path), input_spec=[InputSpec([None, 1, None, None], "float32", "x")])
    return path


def test_warm_up_guesses_a_size_the_model_runs(tmp_path):
    paddle.seed(0)
    served = ServedModel("conv", _export(tmp_path, paddle.nn.Conv2D(1, 2, 5), "conv"), 1, workers=1)  # needs >= 5
    served.warm_up(max_batch_size=2)
    assert served.throughput and served.throughput > 0


def test_a_model_no_guessed_size_runs_is_served_cold_with_a_warning(tmp_path, caplog, monkeypatch):
    monkeypatch.setattr(model_module, "WARMUP_SIZES", (1, 3))  # both below the 5 x 5 kernel
    paddle.seed(0)
    served = ServedModel("conv", _export(tmp_path, paddle.nn.Conv2D(1, 2, 5), "conv"), 1, workers=1)
    with caplog.at_level(logging.WARNING):
        served.warm_up(max_batch_size=2)
    assert served.throughput is None and "warm-up skipped" in caplog.text


@pytest.mark.parametrize(("workers", "cores", "threads"), [(1, 2, None), (2, 2, 1), (2, 8, 4), (3, 2, 1)])
def test_workers_share_the_cores_and_one_worker_keeps_the_predictors_own_choice(
    tmp_path, monkeypatch, workers, cores, threads
):
    monkeypatch.setattr("paddlectl.framework.kernels.cores.physical_cores", lambda: cores)
    paddle.seed(0)
    served = ServedModel("conv", _export(tmp_path, paddle.nn.Conv2D(1, 2, 5), "conv"), 1, workers=workers)
    clones = [served._pool.get() for _ in range(workers)]
    assert [c._config.cpu_math_library_num_threads() for c in clones] == [threads] * workers


def test_the_client_is_importable_from_the_package():
    import paddlectl.serving as serving

    assert serving.Client.__module__ == "paddlectl.serving.client"
    with pytest.raises(AttributeError):
        serving.NoSuchThing  # noqa: B018
