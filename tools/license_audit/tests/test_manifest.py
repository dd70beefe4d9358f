"""asset.yaml: the shipped PP-OCRv4 manifest against the installed rapidocr-onnxruntime files, and schema errors."""

import hashlib
import shutil
from importlib.metadata import distribution
from pathlib import Path

import pytest
import yaml

from paddlectl.license_audit.errors import ManifestError
from paddlectl.license_audit.inventory.manifest import (
    builtin_manifest,
    load_manifest,
    manifest_items,
    require_verified,
    verify_files,
)


def test_pp_ocrv4_manifest_matches_the_installed_model_files():
    """The sha256 recorded in the shipped manifest is that of the files inside rapidocr-onnxruntime==1.4.4."""
    dist = distribution("rapidocr-onnxruntime")
    assert dist.version == "1.4.4"
    installed = {
        Path(str(f)).name: hashlib.sha256(dist.locate_file(f).read_bytes()).hexdigest()
        for f in dist.files
        if str(f).startswith("rapidocr_onnxruntime/models/") and str(f).endswith(".onnx")
    }
    manifest = builtin_manifest("rapidocr-pp-ocrv4")
    recorded = {Path(f["path"]).name: f["sha256"] for a in manifest.assets for f in a["files"]}
    assert recorded == installed
    require_verified(manifest)
    assert all(check.ok for check in verify_files(manifest))


def test_pp_ocrv4_items_carry_lineage_to_paddleocr(normalizer):
    items = {i.name: i for i in manifest_items(builtin_manifest("rapidocr-pp-ocrv4"), normalizer)}
    assert len(items) == 6
    det = items["ch_PP-OCRv4_det_infer"]
    assert det.license == "Apache-2.0" and det.kind.value == "model" and det.version == "4.0"
    assert [lnk.target for lnk in det.links] == ["PaddlePaddle/ch_PP-OCRv4_det_infer"]
    assert items["PaddlePaddle/ch_PP-OCRv4_det_infer"].source == "https://github.com/PaddlePaddle/PaddleOCR"


def _write(tmp_path, data) -> Path:
    path = tmp_path / "asset.yaml"
    path.write_text(yaml.safe_dump(data) if not isinstance(data, str) else data)
    return path


VALID = {
    "schema_version": 1,
    "assets": [{"name": "m", "kind": "model", "version": "1", "source": "https://example.com", "license": "MIT"}],
}


@pytest.mark.parametrize(
    "mutate, message",
    [
        (lambda d: d["assets"][0].pop("license"), "'license' is a required property"),
        (lambda d: d["assets"][0].update(version=1.0), "assets.0.version: 1.0 is not of type 'string'"),
        (lambda d: d["assets"][0].update(files=[{"path": "a", "sha256": "xyz"}]), "does not match"),
        (lambda d: d["assets"][0].update(kind="weights"), "is not one of"),
        (lambda d: d["assets"][0].update(licence="MIT"), "Additional properties"),
        (lambda d: d.update(schema_version=2), "schema_version"),
        (lambda d: d["assets"].append(dict(d["assets"][0])), "unique"),
        (lambda d: d.update(root={"distribution": "no-such-dist-xyz"}), "pip install no-such-dist-xyz"),
    ],
)
def test_schema_errors_name_the_field(tmp_path, mutate, message):
    data = yaml.safe_load(yaml.safe_dump(VALID))
    mutate(data)
    with pytest.raises(ManifestError, match=message):
        load_manifest(_write(tmp_path, data))


def test_unreadable_manifests(tmp_path):
    with pytest.raises(ManifestError, match="does not exist"):
        load_manifest(tmp_path / "missing.yaml")
    with pytest.raises(ManifestError, match="not valid YAML"):
        load_manifest(_write(tmp_path, "assets: [\n"))
    with pytest.raises(ManifestError, match="no shipped asset manifest"):
        builtin_manifest("nope")


def test_tampered_file_is_an_integrity_problem(tmp_path, normalizer, generated_manifest):
    copy = tmp_path / "m"
    shutil.copytree(generated_manifest.parent / "files", copy / "files")
    shutil.copy(generated_manifest, copy / "asset.yaml")
    (copy / "files" / "synthetic.jsonl").write_text("tampered\n")
    manifest = load_manifest(copy / "asset.yaml")
    with pytest.raises(ManifestError, match="has sha256"):
        require_verified(manifest)
    item = next(i for i in manifest_items(manifest, normalizer) if i.name == "acme/synthetic-instructions")
    assert [p.kind for p in item.problems] == ["integrity"]
    (copy / "files" / "synthetic.jsonl").unlink()
    assert "is missing" in verify_files(manifest)[0].describe()
