"""paddlectl's saved models and checkpoints: the audit follows the lineage they record."""

from __future__ import annotations

import json

import numpy as np
import pytest
from safetensors.numpy import save_file

from paddlectl.license_audit.audit import run_audit
from paddlectl.license_audit.errors import InputError
from paddlectl.license_audit.inventory.artifacts import artifact_items
from paddlectl.license_audit.inventory.collect import merge
from paddlectl.license_audit.model import Kind
from paddlectl.license_audit.policy import Action, load_policy

NC_DATA = {"name": "acme/nc-photos", "license": "cc-by-nc-4.0", "source": "https://example.org/nc-photos"}
OPTDIGITS = {"name": "uci-optdigits", "license": "CC-BY-4.0", "source": "https://archive.ics.uci.edu/dataset/80"}


def _saved_model(folder, lineage):
    folder.mkdir(parents=True)
    save_file({"w": np.zeros(2, np.float32)}, str(folder / "model.safetensors"))
    meta = {"format": "paddlectl-inference-model", "format_version": 1, "program": ""}
    if lineage is not None:
        meta["lineage"] = lineage
    (folder / "model.json").write_text(json.dumps(meta))
    return folder


def _checkpoint(folder, lineage):
    folder.mkdir(parents=True)
    (folder / "model.pdparams").write_bytes(b"weights")
    (folder / "state.json").write_text(
        json.dumps({"format": "paddlectl-train-state", "version": 1, "lineage": lineage})
    )
    return folder


def _audit(items, policy, kb, normalizer):
    return run_audit(merge(items), load_policy(policy, kb, normalizer), kb, normalizer)


def _findings(result, name, rule):
    audit = next(a for a in result.audits if a.item.name == name)
    return [f for f in audit.findings if f.rule == rule]


def test_a_model_trained_on_non_commercial_data_is_denied_with_the_chain(tmp_path, kb, normalizer):
    model = _saved_model(tmp_path / "export", {"lineage_version": 1, "datasets": [NC_DATA, OPTDIGITS]})
    items = artifact_items(model, normalizer)
    assert [(i.name, i.kind, i.license) for i in items] == [
        (str(model), Kind.MODEL, None),
        ("acme/nc-photos", Kind.DATASET, "CC-BY-NC-4.0"),
        ("uci-optdigits", Kind.DATASET, "CC-BY-4.0"),
    ]
    [denied] = _findings(_audit(items, "commercial-saas", kb, normalizer), str(model), "inherited")
    assert (denied.action, denied.chain, denied.license) == (
        Action.DENY,
        (str(model), "acme/nc-photos"),
        "CC-BY-NC-4.0",
    )
    assert f"inherits non-commercial from acme/nc-photos (CC-BY-NC-4.0) via {model} <- acme/nc-photos" in denied.message
    assert not _findings(_audit(items, "research", kb, normalizer), str(model), "inherited")


def test_a_fine_tune_inherits_through_its_base_checkpoint(tmp_path, kb, normalizer):
    base = {"name": "runs/base/best", "license": None, "source": "/runs/base/best", "lineage": {"datasets": [NC_DATA]}}
    checkpoint = _checkpoint(tmp_path / "best", {"lineage_version": 1, "datasets": [OPTDIGITS], "base_model": [base]})
    result = _audit(artifact_items(checkpoint, normalizer), "commercial-distribution", kb, normalizer)
    chains = {f.chain for f in _findings(result, str(checkpoint), "inherited") if f.action == Action.DENY}
    assert (str(checkpoint), "runs/base/best", "acme/nc-photos") in chains


def test_the_models_own_licence_comes_from_its_card(tmp_path, kb, normalizer):
    folder = _saved_model(tmp_path / "old", None)
    [old] = artifact_items(folder, normalizer)
    note = old.evidence[0].normalized.note
    assert "names no licence of its own" in note and "a README.md beside model.json" in note
    assert "records no lineage" in note and old.files[0].path.endswith("model.safetensors")
    (folder / "README.md").write_text("---\nlicense: apache-2.0\n---\n# Our digits model\n")
    [carded] = artifact_items(folder, normalizer)
    assert (carded.license, carded.best.source) == ("Apache-2.0", "card license")


def test_an_onnx_export_carries_its_lineage_in_metadata(tmp_path, normalizer):
    onnx = pytest.importorskip("onnx")
    from onnx import TensorProto, helper

    graph = helper.make_graph(
        [helper.make_node("Identity", ["x"], ["y"])],
        "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1])],
    )
    model = helper.make_model(graph)
    helper.set_model_props(model, {"lineage": json.dumps({"datasets": [NC_DATA]}), "license": "Apache-2.0"})
    path = tmp_path / "model.onnx"
    onnx.save(model, str(path))
    [item, data] = artifact_items(path, normalizer)
    assert (item.license, [link.target for link in item.links], data.license) == (
        "Apache-2.0",
        ["acme/nc-photos"],
        "CC-BY-NC-4.0",
    )


@pytest.mark.parametrize(
    "make, message",
    [
        (lambda p: p.mkdir(), "holds neither model.json nor state.json"),
        (lambda p: None, "does not exist"),
        (lambda p: _saved_model(p, {"datasets": [{"license": "MIT"}]}), "must be a list of entries that have a name"),
        (lambda p: _saved_model(p, ["not", "a", "mapping"]), "must be a mapping"),
        (lambda p: (p.mkdir(), (p / "model.json").write_text("{}")), "is not a paddlectl-inference-model file"),
    ],
)
def test_what_cannot_be_read_is_a_usage_error(tmp_path, normalizer, make, message):
    make(tmp_path / "m")
    with pytest.raises(InputError, match=message):
        artifact_items(tmp_path / "m", normalizer)


def test_the_frameworks_lineage_record_is_what_the_audit_reads(tmp_path, kb, normalizer):
    lineage = pytest.importorskip("paddlectl.framework.hapi.lineage")
    photos = tmp_path / "photos"
    (photos / "train").mkdir(parents=True)
    (photos / "README.md").write_text("---\nlicense: cc-by-nc-4.0\n---\n")
    config = {"Train": {"dataset": {"name": "DatasetFolder", "root": str(photos / "train")}}}
    config["Eval"] = {"dataset": {"name": "Digits", "split": "test"}}
    model = _saved_model(tmp_path / "export", lineage.build_lineage(config))
    result = _audit(artifact_items(model, normalizer), "commercial-saas", kb, normalizer)
    [denied] = _findings(result, str(model), "inherited")
    assert denied.chain == (str(model), str(photos / "train")) and denied.license == "CC-BY-NC-4.0"
    digits = next(a for a in result.audits if a.item.name == "uci-optdigits")
    assert (digits.item.license, digits.action) == ("CC-BY-4.0", Action.ALLOW)


def test_the_cli_denies_a_model_through_its_lineage(tmp_path):
    from typer.testing import CliRunner

    from paddlectl.license_audit.cli import app

    model = _saved_model(tmp_path / "export", {"datasets": [NC_DATA]})
    result = CliRunner().invoke(
        app, ["audit", "--no-env", "--weights", str(model), "-p", "commercial-saas", "-f", "json"]
    )
    assert result.exit_code == 1, result.output
    findings = json.loads(result.stdout)["findings"]
    [denied] = [f for f in findings if f["action"] == "deny" and f["item"] == f"model:{model}"]
    assert denied["chain"] == [str(model), "acme/nc-photos"] and denied["obligation"] == "non-commercial"
