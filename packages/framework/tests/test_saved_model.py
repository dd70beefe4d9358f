"""The saved model directory: format versions, the committed v1 fixture, and tampered directories."""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path

import numpy as np
import pytest
import safetensors.numpy

from paddlectl.framework import jit, nn
from paddlectl.framework.errors import CheckpointError
from paddlectl.framework.jit import InputSpec
from paddlectl.framework.jit.saved_model import FORMAT_VERSION

FIXTURE = Path(__file__).parent / "fixtures" / "model_v1_lenet"


def test_format_v1_fixture_loads_and_reproduces_its_outputs():
    loaded = jit.load(FIXTURE)
    meta = loaded.meta
    assert meta["format_version"] == 1
    assert meta["preprocess"] == {"resize": [28, 28], "mean": [0.5], "std": [0.5]}
    assert [s.name for s in loaded.input_spec] == ["image"]
    sample = safetensors.numpy.load((FIXTURE / "sample.safetensors").read_bytes())
    np.testing.assert_allclose(loaded(sample["image"]).numpy(), sample["logits"], rtol=1e-5, atol=1e-5)


@pytest.fixture
def model_dir(tmp_path):
    path = tmp_path / "model"
    shutil.copytree(FIXTURE, path)
    return path


def _meta(path):
    return json.loads((path / "model.json").read_text())


def _write_meta(path, meta):
    (path / "model.json").write_text(json.dumps(meta))


def test_newer_format_is_refused_naming_both_versions(model_dir):
    meta = _meta(model_dir)
    meta["format_version"] = FORMAT_VERSION + 1
    _write_meta(model_dir, meta)
    with pytest.raises(CheckpointError) as info:
        jit.load(model_dir)
    message = str(info.value)
    assert f"format version {FORMAT_VERSION + 1}" in message and f"up to {FORMAT_VERSION}" in message


def test_bad_json_is_refused(model_dir):
    (model_dir / "model.json").write_text('{"format": "paddlectl-inference-model", ')
    with pytest.raises(CheckpointError, match="not valid JSON"):
        jit.load(model_dir)


def test_tampered_weights_fail_the_checksum(model_dir):
    blob = bytearray((model_dir / "model.safetensors").read_bytes())
    blob[-1] ^= 0xFF
    (model_dir / "model.safetensors").write_bytes(bytes(blob))
    with pytest.raises(CheckpointError, match="checksum"):
        jit.load(model_dir)


def test_missing_weights_file_is_refused(model_dir):
    (model_dir / "model.safetensors").unlink()
    with pytest.raises(CheckpointError, match="missing"):
        jit.load(model_dir)


def test_missing_weight_entry_is_refused(model_dir):
    weights = safetensors.numpy.load((model_dir / "model.safetensors").read_bytes())
    del weights["fc.2.bias"]
    blob = safetensors.numpy.save(weights)
    (model_dir / "model.safetensors").write_bytes(blob)
    meta = _meta(model_dir)
    meta["weights"].update(bytes=len(blob), sha256=hashlib.sha256(blob).hexdigest())
    _write_meta(model_dir, meta)
    with pytest.raises(CheckpointError, match="fc.2.bias"):
        jit.load(model_dir)


def test_edited_program_is_refused(model_dir):
    meta = _meta(model_dir)
    meta["program"] = meta["program"].replace("f32[N,10] = add", "f32[N,11] = add")
    _write_meta(model_dir, meta)
    with pytest.raises(CheckpointError, match="invalid"):
        jit.load(model_dir)


def test_not_a_model_directory(tmp_path):
    with pytest.raises(CheckpointError, match="not a saved model directory"):
        jit.load(tmp_path)


def test_save_replaces_a_model_atomically_and_refuses_other_directories(tmp_path):
    layer = nn.Linear(3, 2)
    path = tmp_path / "m"
    jit.save(layer, path, input_spec=[InputSpec([None, 3])])
    first = (path / "model.json").read_text()
    layer.weight.set_value(np.ones((3, 2), "float32"))
    jit.save(layer, path, input_spec=[InputSpec([None, 3])])
    assert (path / "model.json").read_text() != first
    assert sorted(p.name for p in tmp_path.iterdir()) == ["m"]  # no temporary leftovers
    np.testing.assert_allclose(jit.load(path)(np.ones((1, 3), "float32")).numpy(), 3 + layer.bias.numpy()[None])
    other = tmp_path / "other"
    other.mkdir()
    (other / "notes.txt").write_text("keep")
    with pytest.raises(FileExistsError, match="not a saved model directory"):
        jit.save(layer, other, input_spec=[InputSpec([None, 3])])
