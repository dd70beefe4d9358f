"""Hostile input files: every file a user hands the auditor is refused with a ``LicenseAuditError`` or
audited; nothing else may escape (issue 29).

Hypothesis draws structure-aware mutations of a seed of each kind (a card's front matter, an
asset.yaml, a policy, a pyproject.toml, ONNX and safetensors metadata, a saved model's and a
checkpoint's lineage record): a value anywhere in the document replaced by one of another type,
a key dropped, a subtree nested deeply, lineage that loops or runs thousands of levels deep, and
raw text flipped or cut. Each case is inventoried and audited as ``paddlectl license audit`` does.
"""

from __future__ import annotations

import json
import os
import tomllib
from pathlib import Path

import numpy as np
import onnx
import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from onnx import TensorProto, helper
from safetensors.numpy import save_file
from typer.testing import CliRunner

from paddlectl.license_audit.audit import run_audit
from paddlectl.license_audit.cli import app
from paddlectl.license_audit.errors import LicenseAuditError
from paddlectl.license_audit.inventory.collect import Sources, build_inventory
from paddlectl.license_audit.policy import load_policy
from paddlectl.license_audit.reports.formats import Format, renderer
from paddlectl.license_audit.resources import data_path

DATA = Path(__file__).parent / "data"
FUZZ = settings(
    max_examples=int(os.environ.get("PADDLECTL_FUZZ_EXAMPLES", "100")),
    deadline=30000,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
LEAVES = st.one_of(
    st.none(), st.booleans(), st.integers(-(2**70), 2**70), st.floats(allow_nan=True), st.text(max_size=12),
    st.sampled_from(["MIT", "other", "Apache-2.0 AND", "GPL-3.0-only WITH", "(", "NOASSERTION", "x" * 5000]),
)  # fmt: skip
VALUES = st.recursive(LEAVES, lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=3), max_leaves=8)  # fmt: skip
ENTRY = {"name": "acme/data", "license": "CC-BY-NC-4.0", "source": "https://example.com/data"}


def _paths(doc, prefix=()):
    """Every place in a JSON-like document down to 12 levels: the key paths of its containers' members."""
    yield prefix
    items = doc.items() if isinstance(doc, dict) else enumerate(doc) if isinstance(doc, list) else ()
    items = items if len(prefix) < 12 else ()
    for key, value in items:
        yield from _paths(value, (*prefix, key))


def apply(seed, recipe: list[tuple]) -> object:
    """``seed`` with the recipe's edits: a member set to a value, dropped, or wrapped ``depth`` lists deep."""
    doc = json.loads(json.dumps(seed))
    for edit, path, *arg in recipe:
        *parent_path, key = path
        parent = doc
        try:  # a shrunk recipe may name a place an earlier edit removed: that edit is skipped
            for step in parent_path:
                parent = parent[step]
            parent[key]  # noqa: B018 - the place exists
        except (KeyError, IndexError, TypeError):
            continue
        if edit == "drop":
            parent.pop(key)
        elif edit == "set":
            parent[key] = arg[0]
        else:
            for _ in range(arg[0]):
                parent[key] = [parent[key]]
    return doc


@st.composite
def mutated(draw, seed):
    """A recipe of 1-3 edits of ``seed`` (drawn as a recipe, not a document: hypothesis cannot print a
    document 3000 levels deep)."""
    recipe: list[tuple] = []
    for _ in range(draw(st.integers(1, 3))):
        places = [p for p in _paths(apply(seed, recipe)) if p]
        if not places:
            break
        path = draw(st.sampled_from(places))
        edit = draw(st.sampled_from(["set", "drop", "nest"]))
        arg = {"set": (draw(VALUES),), "nest": (draw(st.sampled_from([200, 3000])),), "drop": ()}[edit]
        recipe.append((edit, path, *arg))
    return recipe


def _text_edit(text: str, how: tuple[str, int]) -> str:
    """A raw edit a structure cannot express: a cut, a flipped character, an unsafe tag, an alias bomb."""
    kind, at = how
    if kind == "cut":
        return text[: at % (len(text) + 1)]
    if kind == "flip" and text:
        at %= len(text)
        return text[:at] + chr((ord(text[at]) + 1 + at % 200) % 0x3000) + text[at + 1 :]
    if kind == "tag":
        return "!!python/object/apply:os.system ['true']\n" + text
    if kind == "bomb":
        return 'a: &a ["x","x","x","x","x","x","x","x"]\n' + "".join(
            f"{c}: &{c} [{','.join(['*' + p] * 8)}]\n" for p, c in zip("abcdefg", "bcdefgh", strict=True)
        ) + text  # fmt: skip
    return text


def edited(text: str, edits: list[tuple[str, int]]) -> str:
    for how in edits:
        text = _text_edit(text, how)
    return text


def written(path: Path, text: str, edits: list[tuple[str, int]]) -> Path:
    path.write_text(edited(text, edits), encoding="utf-8")
    return path


TEXT_EDITS = st.lists(st.tuples(st.sampled_from(["none", "cut", "flip", "tag", "bomb"]), st.integers(0, 10**6)), max_size=2)  # fmt: skip


def _dump_yaml(doc) -> str:
    try:
        return yaml.safe_dump(doc, sort_keys=False, allow_unicode=True)
    except (RecursionError, yaml.YAMLError):
        return "name: " + "[" * 3000 + "]" * 3000 + "\n"


def _dump_json(doc) -> str:
    try:
        return json.dumps(doc)
    except (RecursionError, ValueError):
        return '{"lineage": ' + '{"base_model": [{"name": "x", "lineage": ' * 2000 + "{}" + "}]}" * 2000 + "}"


def audit_or_refuse(sources: Sources, kb, normalizer, policy: str | Path = "commercial-saas") -> None:
    """What ``paddlectl license audit`` does with the files, reports included; a LicenseAuditError is the only
    allowed failure."""
    try:
        items = build_inventory(sources, normalizer)
        result = run_audit(items, load_policy(policy, kb, normalizer), kb, normalizer)
    except LicenseAuditError:
        return
    for fmt in (Format.JSON, Format.MARKDOWN, Format.NOTICE, Format.CYCLONEDX):
        renderer(fmt)(result)


def _seed_text(name: str) -> str:
    return (DATA / name).read_text(encoding="utf-8")


# ----- cards, manifests, policies, pyproject ----------------------------------------------------------------

CARD = {"license": "other", "license_name": "llama3", "base_model": ["meta-llama/Meta-Llama-3-8B"], "datasets": ["d"]}


@FUZZ
@given(recipe=mutated(CARD), edits=TEXT_EDITS)
def test_hostile_cards(tmp_path_factory, kb, normalizer, recipe, edits):
    text = _dump_yaml(apply(CARD, recipe))
    text = edited(text, edits)
    folder = tmp_path_factory.mktemp("card") / "acme" / "model"
    folder.mkdir(parents=True)
    (folder / "README.md").write_text(f"---\n{text}\n---\n# a card\n", encoding="utf-8")
    audit_or_refuse(Sources(environment=False, cards=(folder.parent.parent,)), kb, normalizer)


MANIFEST = yaml.safe_load((DATA / "generated.asset.yaml").read_text(encoding="utf-8"))


@FUZZ
@given(recipe=mutated(MANIFEST), edits=TEXT_EDITS)
def test_hostile_manifests(tmp_path_factory, kb, normalizer, recipe, edits):
    doc = apply(MANIFEST, recipe)
    doc["root"] = str(DATA / "files") if doc.get("root") == "files" else doc.get("root")
    text = _dump_yaml(doc)
    path = written(tmp_path_factory.mktemp("assets") / "x.asset.yaml", text, edits)
    audit_or_refuse(Sources(environment=False, manifests=(path,)), kb, normalizer)


POLICY = yaml.safe_load(data_path("policies", "commercial-saas.yaml").read_text(encoding="utf-8"))


@FUZZ
@given(recipe=mutated(POLICY), edits=TEXT_EDITS)
def test_hostile_policies(tmp_path_factory, kb, normalizer, recipe, edits):
    text = _dump_yaml(apply(POLICY, recipe))
    path = written(tmp_path_factory.mktemp("policy") / "policy.yaml", text, edits)
    audit_or_refuse(Sources(environment=False, cards=(DATA / "cards",)), kb, normalizer, policy=path)


PYPROJECT = tomllib.loads((Path(__file__).parents[1] / "pyproject.toml").read_text(encoding="utf-8"))


def _toml(doc) -> str:
    """A small TOML writer (the test venv has no TOML writer): tables for dicts, JSON for the values, which
    TOML's inline syntax mostly shares; what it cannot say becomes a TOML syntax error, also a case."""
    lines = []
    for table, body in doc.items() if isinstance(doc, dict) else [("project", doc)]:
        lines.append(f'["{table}"]')
        for key, value in body.items() if isinstance(body, dict) else [("value", body)]:
            lines.append(f'"{key}" = {_dump_json(value)}')
    return "\n".join(lines) + "\n"


PROJECT = {"project": {k: PYPROJECT["project"][k] for k in ("name", "version", "license", "dependencies")}
           | {"classifiers": ["License :: OSI Approved :: MIT License"]}}  # fmt: skip


@FUZZ
@given(recipe=mutated(PROJECT), edits=TEXT_EDITS)
def test_hostile_pyprojects(tmp_path_factory, kb, normalizer, recipe, edits):
    text = _toml(apply(PROJECT, recipe))
    path = written(tmp_path_factory.mktemp("project") / "pyproject.toml", text, edits)
    audit_or_refuse(Sources(environment=False, project=path), kb, normalizer)


# ----- weights and lineage -------------------------------------------------------------------------------

LINEAGE = {"lineage_version": 1, "datasets": [ENTRY], "base_model": [{"name": "runs/base", "license": None, "lineage": {"datasets": [ENTRY]}}]}  # fmt: skip


@st.composite
def lineages(draw):
    """A lineage record's recipe: mutated, or a chain of base models that loops back or runs thousands deep."""
    shape = draw(st.sampled_from(["mutated", "chain", "loop"]))
    return (shape, draw(mutated(LINEAGE)) if shape == "mutated" else draw(st.sampled_from([3, 400, 5000])))


def build_lineage(shape: str, arg) -> dict:
    if shape == "mutated":
        return apply(LINEAGE, arg)
    depth = arg
    names = [f"m{i % 3 if shape == 'loop' else i}" for i in range(depth)]
    record: dict = {"datasets": [ENTRY]}
    for name in reversed(names):
        record = {"base_model": [{"name": name, "license": "MIT", "lineage": record}]}
    return record


def _onnx_with(metadata: dict[str, str], path: Path) -> None:
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1])
    graph = helper.make_graph([helper.make_node("Identity", ["x"], ["y"])], "g", [x], [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1])])  # fmt: skip
    model = helper.make_model(graph)
    helper.set_model_props(model, metadata)
    onnx.save(model, str(path))


@FUZZ
@given(lineage=lineages(), where=st.sampled_from(["model.json", "state.json", "onnx", "safetensors"]), edits=TEXT_EDITS)
def test_hostile_lineage(tmp_path_factory, kb, normalizer, lineage, where, edits):
    folder = tmp_path_factory.mktemp("weights")
    text = _dump_json(build_lineage(*lineage))
    text = edited(text, edits)
    if where in ("model.json", "state.json"):
        fmt = "paddlectl-inference-model" if where == "model.json" else "paddlectl-train-state"
        (folder / where).write_text(f'{{"format": "{fmt}", "lineage": {text}}}', encoding="utf-8")
        save_file({"w": np.zeros(2, np.float32)}, str(folder / "model.safetensors"), metadata={"license": "MIT"})
        target = folder
    elif where == "onnx":
        target = folder / "m.onnx"
        _onnx_with({"lineage": text, "license": "Apache-2.0"}, target)
    else:
        target = folder / "m.safetensors"
        save_file({"w": np.zeros(2, np.float32)}, str(target), metadata={"lineage": text, "license": "MIT"})
    audit_or_refuse(Sources(environment=False, weights=(target,)), kb, normalizer)


@FUZZ
@given(kind=st.sampled_from(["onnx", "safetensors"]), cut=st.integers(0, 10**6), flips=st.lists(st.tuples(st.integers(0, 10**6), st.integers(1, 255)), max_size=4))  # fmt: skip
def test_hostile_weight_bytes(tmp_path_factory, kb, normalizer, kind, cut, flips):
    path = tmp_path_factory.mktemp("bytes") / f"m.{kind}"
    if kind == "onnx":
        _onnx_with({"license": "MIT", "lineage": json.dumps(LINEAGE)}, path)
    else:
        save_file({"w": np.arange(8, dtype=np.float32)}, str(path), metadata={"license": "MIT"})
    data = bytearray(path.read_bytes())
    for at, xor in flips:
        data[at % len(data)] ^= xor
    path.write_bytes(bytes(data[: max(1, cut % (len(data) + 8))]))
    audit_or_refuse(Sources(environment=False, weights=(path,)), kb, normalizer)


# ----- the CLI: one line and exit code 2 -------------------------------------------------------------------


def _deep_checkpoint(folder: Path) -> Path:
    folder.mkdir()
    record = {"format": "paddlectl-train-state", "lineage": build_lineage("chain", 5000)}
    (folder / "state.json").write_text(_dump_json(record))
    return folder


@pytest.mark.parametrize(
    ("option", "make"),
    [
        ("--weights", _deep_checkpoint),
        (
            "--weights",
            lambda p: (
                p.mkdir(),
                (p / "model.json").write_text('{"format": "paddlectl-inference-model", "lineage": {"datasets": 3}}'),
                p,
            )[2],
        ),  # fmt: skip
        ("--policy", lambda p: (p.write_text("name: x\nlicenses: [MIT]\n"), p)[1]),
        ("--project", lambda p: (p.write_text('[project]\nname = "x"\nclassifiers = 3\n'), p)[1]),
        ("--assets", lambda p: (p.write_text("schema_version: 1\nassets: " + "[" * 5000), p)[1]),
    ],
)
def test_the_cli_names_a_hostile_file_in_one_line(tmp_path, option, make):
    path = make(tmp_path / "input")
    args = ["audit", "--no-env", option, str(path)]
    if option != "--weights":
        args += ["--cards", str(DATA / "cards")]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 2, (result.output, result.exception)
    lines = result.output.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error:"), result.output


# ----- what the fuzzer found, kept as regression tests ----------------------------------------------------


@pytest.mark.parametrize(
    ("record", "expected"),
    [
        (build_lineage("chain", 150), "more than 100 base checkpoints deep"),
        ({"datasets": [{**ENTRY, "source": {"url": 1}}]}, "source must be a string"),
        ({"datasets": [{**ENTRY, "license_link": ["x"]}]}, "license_link must be a string"),
    ],
)
def test_hostile_lineage_records_are_refused(tmp_path, normalizer, record, expected):
    (tmp_path / "state.json").write_text(json.dumps({"format": "paddlectl-train-state", "lineage": record}))
    with pytest.raises(LicenseAuditError, match=expected):
        build_inventory(Sources(environment=False, weights=(tmp_path,)), normalizer)


def test_a_lineage_nested_past_the_json_reader_is_refused(tmp_path, normalizer):
    path = tmp_path / "m.safetensors"
    save_file({"w": np.zeros(2, np.float32)}, str(path), metadata={"lineage": "[" * 100000})
    with pytest.raises(LicenseAuditError, match="nests too deeply"):
        build_inventory(Sources(environment=False, weights=(path,)), normalizer)


def test_a_pyproject_nested_too_deeply_is_refused(tmp_path, normalizer):
    path = tmp_path / "pyproject.toml"
    path.write_text('[project]\nname = "x"\nversion = ' + "[" * 100000 + "\n")
    with pytest.raises(LicenseAuditError, match="nests too deeply"):
        build_inventory(Sources(environment=False, project=path), normalizer)


def test_a_manifest_file_name_too_long_to_open_is_a_manifest_error(tmp_path, normalizer):
    doc = {**MANIFEST, "root": str(tmp_path)}
    doc["assets"] = [{**MANIFEST["assets"][0], "files": [{"path": "x" * 5000, "sha256": "0" * 64}]}]
    path = tmp_path / "x.asset.yaml"
    path.write_text(yaml.safe_dump(doc))
    with pytest.raises(LicenseAuditError, match="cannot read"):
        build_inventory(Sources(environment=False, manifests=(path,)), normalizer)
