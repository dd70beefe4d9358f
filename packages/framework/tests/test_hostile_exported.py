"""Exported models and checkpoints on hostile files: each site the issue-29 fuzzer reached with an
untyped exception is now a CheckpointError that names the entry and what was expected."""

from __future__ import annotations

import hashlib
import json
import os
import shutil

import numpy as np
import pytest

import paddlectl.framework as paddle
from paddlectl.framework import jit
from paddlectl.framework.errors import CheckpointError
from paddlectl.framework.inference import Config, create_predictor
from paddlectl.framework.serialization.checkpoint import MAX_DEPTH

FIXTURE = os.path.join(os.path.dirname(__file__), "fixtures", "model_v1_lenet")


def _model(tmp_path, edit) -> str:
    """A copy of the format-1 fixture with ``edit(document)`` applied to model.json (or its result as
    the file's text, when it returns one)."""
    path = str(tmp_path / "m")
    shutil.copytree(FIXTURE, path)
    with open(os.path.join(path, "model.json"), encoding="utf-8") as f:
        doc = json.load(f)
    replaced = edit(doc)
    doc = doc if replaced is None else replaced
    with open(os.path.join(path, "model.json"), "w", encoding="utf-8") as f:
        f.write(doc if isinstance(doc, str) else json.dumps(doc))
    return path


def _refused(path) -> str:
    for load in (jit.load, lambda p: create_predictor(Config(p))):
        with pytest.raises(CheckpointError) as info:
            load(path)
    return str(info.value)


@pytest.mark.parametrize(
    "edit, expected",
    [
        (lambda d: d.update(weights=[1]), "schema: weights: Input should be a valid dictionary"),  # was AttributeError
        (lambda d: d.update(inputs="x"), "schema: inputs: Input should be a valid list"),  # was AttributeError
        (lambda d: d["inputs"][0].update(dtype="float99"), "inputs.0.dtype: Input should be"),  # was TypeError
        (lambda d: d["inputs"][0].update(shape=None), "inputs.0.shape: Input should be a valid list"),
        (lambda d: d.update(program=7), "program: Input should be a valid string"),  # was TypeError in the parser
        (lambda d: d.update(metadata={"k": 1}), "metadata.k: Input should be a valid string"),
        (lambda d: d["weights"].update(bytes=True), "weights.bytes: Input should be a valid integer"),
        (
            lambda d: d["inputs"][0].update(dtype="int64"),
            "input list does not match its program: 'image' is declared int64",
        ),
        (lambda d: d["outputs"].append(d["outputs"][0]), "output list does not match its program: 2 declared"),
    ],
)
def test_malformed_model_json_is_refused_by_the_schema(tmp_path, edit, expected):
    assert expected in _refused(_model(tmp_path, edit))


def test_truncated_program_string_attr_is_a_parse_error(tmp_path):
    """Was JSONDecodeError: the program cut inside a quoted attr value."""

    def cut(d):
        text = d["program"]
        d["program"] = text[: text.index('data_format="NC') + 16]

    text = _refused(_model(tmp_path, cut))
    assert "program in model.json is invalid" in text and "expected a JSON string" in text


def test_deeply_nested_model_json_is_refused(tmp_path):
    deep = '{"format": "paddlectl-inference-model", "x": ' + "[" * 5000 + "]" * 5000 + "}"
    assert "nests deeper than a JSON reader follows" in _refused(_model(tmp_path, lambda d: deep))


def test_model_json_after_a_checksummed_weights_edit_is_still_checked(tmp_path):
    """The schema runs before the weights: a re-checksummed blob with a bad header is a CheckpointError."""
    path = _model(tmp_path, lambda d: None)
    blob = b'\x08\x00\x00\x00\x00\x00\x00\x00{"a":1}'
    with open(os.path.join(path, "model.safetensors"), "wb") as f:
        f.write(blob)
    with open(os.path.join(path, "model.json"), encoding="utf-8") as f:
        doc = json.load(f)
    doc["weights"].update(bytes=len(blob), sha256=hashlib.sha256(blob).hexdigest())
    with open(os.path.join(path, "model.json"), "w", encoding="utf-8") as f:
        json.dump(doc, f)
    assert "model.safetensors is not a valid safetensors file" in _refused(path)


def _nested(depth: int):
    node: object = np.zeros(1, np.float32)
    for _ in range(depth):
        node = {"k": node}
    return node


def test_checkpoint_nesting_is_bounded_on_save_and_named_on_load(tmp_path):
    paddle.save(_nested(MAX_DEPTH), tmp_path / "ok.pdparams")
    assert paddle.load(tmp_path / "ok.pdparams", return_numpy=True)["k"]["k"] is not None
    with pytest.raises(TypeError, match=f"deeper than {MAX_DEPTH} levels"):  # was RecursionError
        paddle.save(_nested(900), tmp_path / "deep.pdparams")


def test_900_level_checkpoint_is_refused_for_its_depth(tmp_path):
    """Was refused as 'not a valid safetensors blob': the structure's JSON recursed too deep to read."""
    import _fuzz

    path = tmp_path / "seed.pdparams"
    paddle.save({"w": np.ones(2, np.float32)}, path)
    deep = _fuzz.materialize("checkpoint", str(path), [["nest", 900]], str(tmp_path / "deep"))
    with pytest.raises(CheckpointError) as info:
        paddle.load(deep)
    assert f"nests containers deeper than the {MAX_DEPTH} levels paddle.save writes" in str(info.value)
    assert "safetensors" not in str(info.value)
