"""Checkpoint averaging: the mean of the weights, refused across architectures, loadable by export."""

import numpy as np
import pytest
from typer.testing import CliRunner

from paddlectl.framework.errors import CheckpointError, ConfigError
from paddlectl.framework.hapi import checkpoint_dir
from paddlectl.framework.serialization import save
from paddlectl.speech.average import average_weights, write_average
from paddlectl.speech.cli_speech import app


def _checkpoints(tmp_path, count, shape=(3, 2)):
    rng = np.random.default_rng(0)
    paths, states = [], []
    for i in range(count):
        state = {"w": rng.standard_normal(shape).astype("float32"), "b": rng.standard_normal(2).astype("float32")}
        folder = tmp_path / f"epoch_{i}"
        folder.mkdir()
        save(state, folder / checkpoint_dir.MODEL_FILE)
        paths.append(folder)
        states.append(state)
    return paths, states


def test_the_average_is_the_mean_of_each_weight(tmp_path):
    paths, states = _checkpoints(tmp_path, 3)
    mean = average_weights(paths)
    for name in ("w", "b"):
        np.testing.assert_allclose(mean[name], np.mean([s[name] for s in states], axis=0), rtol=1e-6)
        assert mean[name].dtype == np.float32
    np.testing.assert_array_equal(average_weights(paths[:1])["w"], states[0]["w"])


def test_the_written_average_loads_as_weights(tmp_path):
    paths, states = _checkpoints(tmp_path, 2)
    out = write_average(paths, tmp_path / "avg.pdparams")
    loaded = checkpoint_dir.model_weights(out)
    np.testing.assert_allclose(np.asarray(loaded["w"]), (states[0]["w"] + states[1]["w"]) / 2, rtol=1e-6)
    with pytest.raises(ConfigError, match=r"\.pdparams"):
        write_average(paths, tmp_path / "avg.bin")


def test_checkpoints_of_other_architectures_are_refused(tmp_path):
    paths, _ = _checkpoints(tmp_path, 1)
    other = tmp_path / "other"
    other.mkdir()
    save({"w": np.zeros((4, 2), "float32"), "b": np.zeros(2, "float32")}, other / checkpoint_dir.MODEL_FILE)
    with pytest.raises(CheckpointError, match="shape"):
        average_weights([paths[0], other])
    save({"w": np.zeros((3, 2), "float32")}, other / checkpoint_dir.MODEL_FILE)
    with pytest.raises(CheckpointError, match="other weights"):
        average_weights([paths[0], other])
    with pytest.raises(ConfigError, match="at least one"):
        average_weights([])


def test_the_command_writes_the_average_or_says_why_not_in_one_line(tmp_path):
    paths, states = _checkpoints(tmp_path, 2)
    out = tmp_path / "avg.pdparams"
    result = CliRunner().invoke(app, ["average", *map(str, paths), "--out", str(out)])
    assert result.exit_code == 0, result.output
    assert np.allclose(np.asarray(checkpoint_dir.model_weights(out)["b"]), (states[0]["b"] + states[1]["b"]) / 2)
    missing = CliRunner().invoke(app, ["average", str(tmp_path / "nowhere"), "--out", str(tmp_path / "x.pdparams")])
    assert missing.exit_code == 2 and "do not exist" in missing.output and not (tmp_path / "x.pdparams").exists()
