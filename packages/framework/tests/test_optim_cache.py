"""The optimisation cache: a second load reads the optimised program from disk and computes the same
numbers; any change to the model or the settings is a miss; a damaged entry is a miss and is
rewritten; an unwritable folder leaves the cache out; the folder is trimmed by use."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import onnx
import pytest
import safetensors.numpy
from onnx import TensorProto, helper

from paddlectl.framework import inference
from paddlectl.framework.inference import optim_cache

FIXTURE = Path(__file__).parent / "fixtures" / "model_v1_lenet"
SAMPLE = safetensors.numpy.load((FIXTURE / "sample.safetensors").read_bytes())


def _config(model, cache, **settings) -> inference.Config:
    config = inference.Config(str(model))
    config.set_optim_cache_dir(cache)
    config.set_cpu_math_library_num_threads(settings.get("threads", 1))
    for name in settings.get("disabled", ()):
        config.delete_pass(name)
    return config


def _entries(cache: Path) -> list[Path]:
    return sorted(p for p in cache.iterdir() if (p / "model.json").is_file()) if cache.is_dir() else []


def _run(predictor) -> np.ndarray:
    return predictor.run([SAMPLE["image"]])[0]


def test_a_second_load_reads_the_optimised_program_and_computes_the_same(tmp_path):
    cache = tmp_path / "cache"
    first = inference.create_predictor(_config(FIXTURE, cache))
    assert first.pass_report().startswith("passes:") and len(_entries(cache)) == 1
    second = inference.create_predictor(_config(FIXTURE, cache))
    assert "read from the optimisation cache" in second.pass_report()
    assert "fuse_elementwise" in second.pass_report()  # the records of the run that wrote the entry
    assert second.compile_report().as_dict() == first.compile_report().as_dict()
    np.testing.assert_array_equal(_run(second), _run(first))
    assert [op.name for op in second.optimized_program.walk()] == [op.name for op in first.optimized_program.walk()]
    assert second.get_input_names() == first.get_input_names()
    clone = second.clone()
    assert clone.program is second.program  # the saved program, read on first use and shared
    assert [op.name for op in second.program.walk()] == [op.name for op in first.program.walk()]
    np.testing.assert_array_equal(_run(clone), _run(first))


def test_different_settings_or_a_changed_model_miss(tmp_path):
    cache = tmp_path / "cache"
    inference.create_predictor(_config(FIXTURE, cache))
    for settings in ({"threads": 2}, {"disabled": ["fuse_elementwise"]}):
        predictor = inference.create_predictor(_config(FIXTURE, cache, **settings))
        assert predictor.pass_report().startswith("passes:")
    assert len(_entries(cache)) == 3
    # Paddle's name for a pass is the same setting as ours
    assert (
        "read from"
        in inference.create_predictor(_config(FIXTURE, cache, disabled=["fused_elementwise_pass"])).pass_report()
    )
    model = tmp_path / "model"
    shutil.copytree(FIXTURE, model)
    assert "read from" in inference.create_predictor(_config(model, cache)).pass_report()  # the bytes, not the path
    document = json.loads((model / "model.json").read_text())
    document["metadata"] = {"note": "changed"}
    (model / "model.json").write_text(json.dumps(document))
    changed = inference.create_predictor(_config(model, cache))
    assert changed.pass_report().startswith("passes:") and changed.model_metadata() == {"note": "changed"}


def test_a_model_a_caller_read_is_keyed_by_its_content(tmp_path):
    from paddlectl.framework.jit.saved_model import read_model_dir

    cache = tmp_path / "cache"
    inference.Predictor(_config(FIXTURE, cache), read_model_dir(FIXTURE))
    saved = read_model_dir(FIXTURE)
    assert "read from" in inference.Predictor(_config(FIXTURE, cache), saved).pass_report()
    name = next(n for n, w in saved.program.weights.items() if w.ndim == 1)
    saved.program.weights[name] = saved.program.weights[name] + 1  # changed in memory, same path
    edited = inference.Predictor(_config(FIXTURE, cache), saved)
    assert edited.pass_report().startswith("passes:")
    assert not np.array_equal(_run(edited), _run(inference.create_predictor(_config(FIXTURE, cache))))


def _onnx_model(path: Path, scale: float, external: bool) -> None:
    weight = onnx.numpy_helper.from_array(np.full((4, 4), scale, np.float32), "w")
    graph = helper.make_graph(
        [helper.make_node("MatMul", ["x", "w"], ["y"])], "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 4])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 4])], initializer=[weight],
    )  # fmt: skip
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 8
    onnx.save(model, str(path), save_as_external_data=external, location="weights.bin", size_threshold=0)


def test_an_onnx_model_with_external_data_misses_when_only_that_data_changes(tmp_path):
    cache, path, x = tmp_path / "cache", tmp_path / "m.onnx", np.ones((2, 4), np.float32)
    _onnx_model(path, 1.0, external=True)
    assert inference.create_predictor(_config(path, cache)).run([x])[0][0, 0] == 4
    _onnx_model(path, 2.0, external=True)  # the .onnx file's bytes are the same, weights.bin is not
    predictor = inference.create_predictor(_config(path, cache))
    assert predictor.pass_report().startswith("passes:") and predictor.run([x])[0][0, 0] == 8
    again = inference.create_predictor(_config(path, cache))
    assert "read from" in again.pass_report() and again.run([x])[0][0, 0] == 8


@pytest.mark.parametrize("damage", ["truncated weights", "garbled json", "wrong key", "bad record"])
def test_a_damaged_entry_is_a_miss_and_is_rewritten(tmp_path, damage):
    cache = tmp_path / "cache"
    expected = _run(inference.create_predictor(_config(FIXTURE, cache)))
    (entry,) = _entries(cache)
    document = json.loads((entry / "model.json").read_text())
    if damage == "truncated weights":
        (entry / "model.safetensors").write_bytes((entry / "model.safetensors").read_bytes()[:100])
    elif damage == "garbled json":
        (entry / "model.json").write_text("{not json")
    elif damage == "wrong key":
        document["optimization"]["key"] = "0" * 32
        (entry / "model.json").write_text(json.dumps(document))
    else:
        document["optimization"]["passes"] = [{"name": "dce", "ran": True, "changed": "many", "seconds": 0}]
        (entry / "model.json").write_text(json.dumps(document))
    predictor = inference.create_predictor(_config(FIXTURE, cache))
    assert predictor.pass_report().startswith("passes:")
    np.testing.assert_array_equal(_run(predictor), expected)
    assert "read from" in inference.create_predictor(_config(FIXTURE, cache)).pass_report()


def test_switched_off_or_unwritable_the_cache_is_left_out(tmp_path):
    config = _config(FIXTURE, tmp_path / "cache")
    config.switch_optim_cache(False)
    assert config.optim_cache_dir() is None
    inference.create_predictor(config)
    assert not (tmp_path / "cache").exists()
    config.switch_optim_cache(True)
    assert config.optim_cache_dir() == tmp_path / "cache"
    blocked = tmp_path / "a-file"
    blocked.write_text("")
    predictor = inference.create_predictor(_config(FIXTURE, blocked / "cache"))
    assert predictor.pass_report().startswith("passes:") and _run(predictor).shape == (SAMPLE["image"].shape[0], 10)
    for bad in ("", 3, None):
        with pytest.raises(ValueError, match="folder path"):
            config.set_optim_cache_dir(bad)


def test_the_default_folder_follows_the_kernel_cache(monkeypatch, tmp_path):
    monkeypatch.setenv("PADDLECTL_KERNEL_CACHE", str(tmp_path))
    assert inference.Config(str(FIXTURE)).optim_cache_dir() == tmp_path / "programs"


def test_the_folder_is_trimmed_by_last_use(tmp_path):
    cache = tmp_path / "cache"
    for threads in (1, 2, 3):
        inference.create_predictor(_config(FIXTURE, cache, threads=threads))
    entries = _entries(cache)
    size = sum((e / n).stat().st_size for e in entries for n in ("model.json", "model.safetensors")) // 3
    inference.create_predictor(_config(FIXTURE, cache, threads=1))  # used again: now the most recent
    optim_cache.trim(cache, 2 * size + size // 2)
    assert len(_entries(cache)) == 2
    assert "read from" in inference.create_predictor(_config(FIXTURE, cache, threads=1)).pass_report()
    assert "read from" in inference.create_predictor(_config(FIXTURE, cache, threads=3)).pass_report()
    assert inference.create_predictor(_config(FIXTURE, cache, threads=2)).pass_report().startswith("passes:")


def test_a_model_too_big_to_keep_is_not_kept(tmp_path, monkeypatch):
    monkeypatch.setattr(optim_cache, "LIMIT_BYTES", 4 * 1000)  # the LeNet's weights are ~250 kB
    predictor = inference.create_predictor(_config(FIXTURE, tmp_path / "cache"))
    assert predictor.pass_report().startswith("passes:") and not _entries(tmp_path / "cache")
