"""``MobileNetV3: {masked_se: true}``: squeeze-excitation over a line's own columns, so a line reads
the same alone (as in a width-bucketed batch) and padded to the serving width; a model trained so
exports and serves through ``paddlectl export --verify``."""

import numpy as np
import pytest
import yaml
from _ocr_lines import rec_config, write_lines
from typer.testing import CliRunner

import paddlectl.framework as paddle
from paddlectl.cli.app import app
from paddlectl.framework.errors import ConfigError
from paddlectl.ocr.rec.mobilenet_v3 import MobileNetV3, SEModule


def _columns(masked: bool) -> tuple[np.ndarray, np.ndarray]:
    """The backbone's columns for a 100-pixel line alone and padded to 320 (after a few training-mode
    passes, so BatchNorm's statistics are not the identity's)."""
    paddle.seed(0)
    backbone = MobileNetV3(small_stride=[1, 2, 2, 2], masked_se=masked)
    for layer in backbone.sublayers():
        if isinstance(layer, SEModule):  # gates as decided as trained ones, not all ~0.5
            for param in layer.parameters():
                param.set_value(param.numpy() * 30)
    line = np.random.default_rng(0).uniform(-1, 1, (2, 3, 32, 100)).astype("float32")
    for _ in range(30):
        backbone(paddle.to_tensor(line))
    backbone.eval()
    padded = np.zeros((2, 3, 32, 320), "float32")
    padded[..., :100] = line
    return backbone(paddle.to_tensor(line)).numpy(), backbone(paddle.to_tensor(padded)).numpy()


def test_masked_se_pools_only_the_lines_own_columns():
    paddle.seed(0)
    se = SEModule(8)
    for param in se.parameters():
        param.set_value(param.numpy() * 30)
    features = np.random.default_rng(1).normal(size=(2, 8, 4, 10)).astype("float32")  # padding has features too
    columns = np.zeros((2, 1, 1, 10), "float32")
    columns[0, ..., :6], columns[1, ..., :9] = 1, 1
    out = se(paddle.to_tensor(features), paddle.to_tensor(columns)).numpy()
    for i, width in enumerate((6, 9)):
        alone = se(paddle.to_tensor(features[i : i + 1, ..., :width])).numpy()
        np.testing.assert_allclose(out[i : i + 1, ..., :width], alone, rtol=1e-5, atol=1e-6)


def test_masked_se_reads_a_line_nearly_the_same_at_any_padding():
    """What is left comes from the convolutions near the line's right edge, which see padding either
    way; the padding no longer sets every column's channel weights."""
    masked, plain = (np.abs(alone - padded[..., :25])[..., :10].max() for alone, padded in map(_columns, (True, False)))
    assert masked < 0.25 * plain, (masked, plain)


def test_masked_se_needs_the_rec_strides():
    with pytest.raises(ConfigError, match="masked_se"):
        MobileNetV3(full_stride=True, masked_se=True)


def test_a_width_bucketed_masked_model_trains_and_exports(tmp_path):
    label = write_lines(tmp_path / "data", n=16)
    config = rec_config(tmp_path / "data", label, tmp_path / "run", width=160)
    config["Architecture"]["Backbone"]["masked_se"] = True
    config["Train"]["sampler"] = {"name": "WidthBatchSampler"}
    (tmp_path / "rec.yml").write_text(yaml.safe_dump(config), encoding="utf-8")
    cli = CliRunner()
    result = cli.invoke(app, ["train", "-c", str(tmp_path / "rec.yml"), "-q"])
    assert result.exit_code == 0, result.output
    args = ["export", "-w", str(tmp_path / "run" / "best"), "-o", str(tmp_path / "model"), "--verify"]
    result = cli.invoke(app, args)
    assert result.exit_code == 0, result.output
