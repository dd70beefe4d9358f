"""`paddlectl train` with Global.amp (O1 float16 with loss scaling, O2 bfloat16 with master weights)
and Global.gradient_merge_steps, against the FP32 run of the same config."""

from __future__ import annotations

import numpy as np
import pytest
from test_trainer import FAST, _config, _losses

from paddlectl.framework.errors import ConfigError
from paddlectl.framework.hapi import checkpoint_dir
from paddlectl.framework.hapi.trainer import train
from paddlectl.framework.vision.task import ClsTask


@pytest.fixture(scope="module")
def fp32_run(tmp_path_factory):
    out = tmp_path_factory.mktemp("fp32")
    return train(ClsTask(), _config(out, *FAST)), _losses(out)


@pytest.mark.parametrize("overrides", [("Global.amp=O1",), ("Global.amp=O2", "Global.amp_dtype=bfloat16")])
def test_amp_run_ends_where_the_fp32_run_does(tmp_path, fp32_run, overrides):
    (baseline, baseline_losses), result = fp32_run, train(ClsTask(), _config(tmp_path, *FAST, *overrides))
    losses = _losses(tmp_path)
    assert [s for s, _ in losses] == [s for s, _ in baseline_losses] and all(np.isfinite([v for _, v in losses]))
    # float16 O1 skips its first steps while the loss scale comes down from 65536, so the curves differ
    # early on; both end at the same place
    assert abs(result.last_eval["loss"] - baseline.last_eval["loss"]) < 0.1 * baseline.last_eval["loss"]
    assert abs(result.last_eval["acc"] - baseline.last_eval["acc"]) <= 0.03
    saved = checkpoint_dir.read(tmp_path / "latest")
    assert {np.asarray(v).dtype.name for v in saved.model.values()} == {"float32"}  # O2 saves float32 too
    assert ("master_weights" in saved.optimizer) == (overrides[0] == "Global.amp=O2")


def test_gradient_merge_steps_update_every_k_batches(tmp_path, fp32_run):
    train(ClsTask(), _config(tmp_path, *FAST, "Global.gradient_merge_steps=3", "Global.epochs=1"))
    losses, baseline = _losses(tmp_path), fp32_run[1]
    assert losses[0] == baseline[0]  # the same first batch on the same weights
    assert losses[1][1] != baseline[1][1]  # still the initial weights: the plain run has stepped once


@pytest.mark.parametrize(
    ("overrides", "word"),
    [(("Global.amp=O3",), "O0, O1 or O2"), (("Global.amp=O1", "Global.amp_dtype=int8"), "amp_dtype"),
     (("Global.amp=O1", "Global.gradient_merge_steps=2"), "bfloat16"), (("Global.gradient_merge_steps=0",), "positive")],
)  # fmt: skip
def test_bad_precision_settings_are_config_errors(tmp_path, overrides, word):
    with pytest.raises(ConfigError, match=word):
        train(ClsTask(), _config(tmp_path, *FAST, *overrides))
