"""Licences named inside ONNX and safetensors files."""

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper
from safetensors.numpy import save_file

from paddlectl.license_audit.errors import InputError
from paddlectl.license_audit.inventory.manifest import builtin_manifest
from paddlectl.license_audit.inventory.weights import weight_item, weight_metadata


def _onnx(path, metadata):
    node = helper.make_node("Identity", ["x"], ["y"])
    graph = helper.make_graph(
        [node],
        "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1])],
    )
    model = helper.make_model(graph)
    helper.set_model_props(model, metadata)
    onnx.save(model, str(path))
    return path


def test_onnx_metadata_licence(tmp_path, normalizer):
    path = _onnx(tmp_path / "m.onnx", {"license": "apache-2.0", "license_link": "https://example.com/l"})
    item = weight_item(path, normalizer)
    assert (item.license, item.license_link, item.best.source) == (
        "Apache-2.0",
        "https://example.com/l",
        "weights metadata",
    )
    assert len(item.files[0].sha256) == 64


def test_safetensors_metadata_licence(tmp_path, normalizer):
    path = tmp_path / "w.safetensors"
    save_file({"w": np.zeros((2, 2), dtype=np.float32)}, str(path), metadata={"license": "llama3"})
    assert weight_item(path, normalizer).license == "LicenseRef-paddlectl-llama-3-license"


def test_weights_without_a_licence_are_unknown(tmp_path, normalizer):
    item = weight_item(_onnx(tmp_path / "bare.onnx", {"producer": "test"}), normalizer)
    assert item.license is None and "names no licence" in item.evidence[0].normalized.note


def test_the_pp_ocrv4_onnx_files_name_no_licence_themselves():
    manifest = builtin_manifest("rapidocr-pp-ocrv4")
    for asset in manifest.assets:
        metadata = weight_metadata(manifest.file_path(asset["files"][0]["path"]))
        assert not {"license", "licence"} & {k.lower() for k in metadata}


def test_bad_weight_files(tmp_path, normalizer):
    with pytest.raises(InputError, match="does not exist"):
        weight_item(tmp_path / "none.onnx", normalizer)
    (tmp_path / "junk.onnx").write_bytes(b"not a model")
    with pytest.raises(InputError, match="not a readable ONNX model"):
        weight_item(tmp_path / "junk.onnx", normalizer)
    (tmp_path / "w.bin").write_bytes(b"x")
    with pytest.raises(InputError, match="only"):
        weight_item(tmp_path / "w.bin", normalizer)
