"""Checkpoints and exported models record their lineage: datasets, base weights, code version."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from paddlectl.framework.config import load_config
from paddlectl.framework.hapi.export import export
from paddlectl.framework.hapi.lineage import build_lineage, recorded_lineage
from paddlectl.framework.hapi.trainer import train
from paddlectl.framework.jit.saved_model import read_model_dir
from paddlectl.framework.vision.task import ClsTask

FRAMEWORK = Path(__file__).parents[1]
DIGITS = FRAMEWORK / "src/paddlectl/framework/vision/configs/digits_lenet.yml"
OPTDIGITS = {
    "name": "uci-optdigits",
    "license": "CC-BY-4.0",
    "source": "https://archive.ics.uci.edu/dataset/80/optical+recognition+of+handwritten+digits",
    "used_for": ["Train", "Eval"],
}


@pytest.fixture(scope="module")
def trained(tmp_path_factory):
    out = tmp_path_factory.mktemp("run")
    overrides = [f"Global.output_dir={out}", "Global.epochs=1", "Train.dataset.test_fraction=0.9"]
    config = load_config(DIGITS, [*overrides, "Eval.dataset.test_fraction=0.05"])
    train(ClsTask(), config)
    return out, config


def test_digits_config_records_its_dataset_licence_and_the_code():
    lineage = build_lineage(load_config(DIGITS))
    assert lineage["lineage_version"] == 1
    assert lineage["datasets"] == [OPTDIGITS] and lineage["base_model"] == []
    from importlib.metadata import version

    code = lineage["code"]
    assert (code["name"], code["version"]) == ("paddlectl-framework", version("paddlectl-framework"))
    head = subprocess.run(["git", "-C", str(FRAMEWORK), "rev-parse", "HEAD"], capture_output=True, text=True)
    if head.returncode == 0:  # the dev venv installs the framework editable from this checkout
        assert code["git_commit"] == head.stdout.strip() and isinstance(code["git_dirty"], bool)


def test_a_folder_of_images_is_licensed_by_its_dataset_card(tmp_path):
    (tmp_path / "data" / "train").mkdir(parents=True)
    config = load_config(DIGITS, ["Train.dataset={name: DatasetFolder, root: " + str(tmp_path / "data/train") + "}"])
    [folder, _] = build_lineage(config)["datasets"]
    assert (folder["license"], folder["used_for"]) == (None, ["Train"])
    card = tmp_path / "data" / "README.md"
    card.write_text("---\nlicense: cc-by-nc-4.0\ntask_categories: [image-classification]\n---\n# Reviews\n")
    [folder, digits] = build_lineage(config)["datasets"]
    assert (folder["name"], folder["license"], folder["license_source"]) == (
        str(tmp_path / "data/train"),
        "cc-by-nc-4.0",
        str(card),
    )
    assert digits["used_for"] == ["Eval"]
    card.write_text("--- \nlicense:\n  - cc-by-nc-4.0\n  - odbl\n---\n")  # trailing space, a list
    assert build_lineage(config)["datasets"][0]["license"] == ["cc-by-nc-4.0", "odbl"]


@pytest.mark.parametrize("key", ["data_dir", "dataset_dir", "dataset_root", "manifest"])
def test_the_suites_dataset_folders_are_recorded(tmp_path, key):
    """PaddleOCR's, PaddleDetection's and PaddleSeg's spellings of a dataset's folder, and PaddleSpeech's
    manifest file (licensed by the card of its folder)."""
    (tmp_path / "README.md").write_text("---\nlicense: mit\n---\n")
    where = tmp_path / "manifest.jsonl" if key == "manifest" else tmp_path
    where.touch()
    config = load_config(DIGITS, ["Train.dataset={name: SomeSet, " + key + ": " + str(where) + "}"])
    folder = build_lineage(config)["datasets"][0]
    assert (folder["source"], folder["license"]) == (str(where), "mit")


def test_cifar_is_recorded_without_a_licence_its_authors_never_stated():
    config = load_config(DIGITS, ["Train.dataset={name: Cifar10, data_file: /nowhere, mode: train}"])
    assert build_lineage(config)["datasets"][0] == {
        "name": "cifar-10",
        "license": None,
        "source": "https://www.cs.toronto.edu/~kriz/cifar.html",
        "used_for": ["Train"],
    }


def test_checkpoints_export_and_fine_tunes_carry_the_lineage(trained, tmp_path):
    out, config = trained
    expected = build_lineage(config)
    for name in ("latest", "best", "epoch_1"):
        assert json.loads((out / name / "state.json").read_text())["lineage"] == expected
    assert recorded_lineage(out) == recorded_lineage(out / "best" / "model.pdparams") == expected
    result = export(ClsTask(), config, out / "best", tmp_path / "model")
    assert read_model_dir(result.path).meta["lineage"] == expected
    fine_tune = build_lineage({**config, "Global": {**config["Global"], "pretrained_model": str(out / "best")}})
    assert fine_tune["base_model"] == [
        {"name": str(out / "best"), "license": None, "source": str(out / "best"), "lineage": expected}
    ]


def test_onnx_export_carries_the_lineage_in_its_metadata(trained, tmp_path):
    onnx = pytest.importorskip("onnx")
    out, config = trained
    result = export(ClsTask(), config, out / "best", tmp_path / "model", format="onnx")
    metadata = {p.key: p.value for p in onnx.load(str(result.path)).metadata_props}
    assert json.loads(metadata["lineage"]) == build_lineage(config)
