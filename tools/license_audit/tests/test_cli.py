"""``paddlectl license``: exit codes 0 clean, 1 violation, 2 usage error; formats; the entry point."""

import json
import subprocess
import sys
from importlib.metadata import entry_points
from pathlib import Path

import pytest
from typer.testing import CliRunner

from paddlectl.license_audit import cli
from paddlectl.license_audit.cli import app

runner = CliRunner()


@pytest.fixture(autouse=True)
def wide_console(monkeypatch):
    """Rich wraps table cells at the terminal width; give it room so names stay whole."""
    monkeypatch.setattr(cli.console, "width", 250)
    monkeypatch.setattr(cli.err_console, "width", 250)


def test_registered_as_the_license_command():
    [ep] = [ep for ep in entry_points(group="paddlectl.commands") if ep.name == "license"]
    assert ep.load() is app


def test_audit_json_with_a_violation_exits_1(cards_dir):
    result = runner.invoke(app, ["audit", "--no-env", "--cards", str(cards_dir), "-p", "commercial-saas", "-f", "json"])
    assert result.exit_code == 1, result.output
    data = json.loads(result.stdout)
    assert data["policy"]["name"] == "commercial-saas" and data["summary"]["violations"] > 0


def test_clean_audit_exits_0_and_strict_fails_on_flags(tmp_path):
    result = runner.invoke(app, ["audit", "--no-env", "--assets", "rapidocr-pp-ocrv4", "-p", "commercial-saas"])
    assert result.exit_code == 0, result.output
    assert "ch_PP-OCRv4_det_infer" in result.stdout and "no violations" in result.stdout
    card = tmp_path / "acme" / "rail" / "README.md"
    card.parent.mkdir(parents=True)
    card.write_text("---\nlicense: openrail\n---\n")
    args = ["audit", "--no-env", "--cards", str(tmp_path), "-p", "commercial-saas"]
    assert runner.invoke(app, args).exit_code == 0
    assert runner.invoke(app, [*args, "--strict"]).exit_code == 1


def test_output_and_report_dir(tmp_path, cards_dir, generated_manifest):
    out = tmp_path / "audit.md"
    args = ["audit", "--no-env", "--cards", str(cards_dir), "--assets", str(generated_manifest), "-p", "research"]
    result = runner.invoke(app, [*args, "-f", "markdown", "-o", str(out), "--report-dir", str(tmp_path / "all")])
    assert result.exit_code == 0, result.output
    assert out.read_text().startswith("# Licence audit under the `research` policy")
    assert len(list((tmp_path / "all").iterdir())) == 5
    spdx = runner.invoke(app, [*args, "-f", "spdx"])
    assert json.loads(spdx.stdout)["spdxVersion"] == "SPDX-2.3"


@pytest.mark.parametrize(
    "args, message",
    [
        (["audit", "--no-env", "-p", "no-such-policy"], "no policy 'no-such-policy'"),
        (["audit", "--no-env", "--assets", "missing.yaml"], "does not exist"),
        (["audit", "--no-env", "--cards", "/nonexistent/cards"], "does not exist"),
        (["audit", "--no-env"], "nothing to audit"),
        (["audit", "--no-env", "--assets", "rapidocr-pp-ocrv4", "-o", "x.txt"], "--output needs a file format"),
        (["verify", "no-such-manifest"], "no shipped asset manifest"),
    ],
)
def test_usage_errors_exit_2(args, message):
    result = runner.invoke(app, args)
    assert result.exit_code == 2
    assert message in " ".join(result.stderr.split())


def test_bad_format_is_a_usage_error():
    assert runner.invoke(app, ["audit", "--no-env", "-f", "pdf"]).exit_code == 2


def test_explain():
    result = runner.invoke(app, ["explain", "MIT OR GPL-3.0-only"])
    assert result.exit_code == 0 and "by choosing MIT" in result.stdout
    assert runner.invoke(app, ["explain", "cc-by-nc-4.0", "-p", "commercial-saas"]).exit_code == 1


@pytest.mark.parametrize("statement, message", [("not a licence ((", "not a licence expression"), ("BSD", "ambiguous")])
def test_explain_of_something_that_is_no_licence_is_a_usage_error(statement, message):
    result = runner.invoke(app, ["explain", statement])
    assert result.exit_code == 2 and message in result.stderr and "give an SPDX id" in result.stderr


def test_an_output_that_cannot_be_written_is_a_usage_error(tmp_path):
    (tmp_path / "file").write_text("")
    args = ["audit", "--no-env", "--assets", "rapidocr-pp-ocrv4", "-f", "json", "-o", str(tmp_path / "file" / "x.json")]
    result = runner.invoke(app, args)
    assert result.exit_code == 2 and "cannot write" in result.stderr, result.output


def test_the_scope_is_said_and_a_missing_project_is_named(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # like the monorepo's root: no pyproject.toml
    result = runner.invoke(app, ["audit", "--no-env", "--assets", "rapidocr-pp-ocrv4", "-f", "json"])
    assert result.exit_code == 0, result.output
    scope = json.loads(result.stdout)["scope"]
    assert scope[0].startswith("project: none (no ./pyproject.toml here)")
    assert "environment: not audited (--no-env)" in scope and scope[-1] == "6 items: 6 model"
    assert "scope of this audit:" in result.stderr and "--project PATH" in result.stderr


def test_bracketed_names_are_printed_whole(tmp_path):
    policy = tmp_path / "policy.yaml"
    policy.write_text("name: shop[eu]\nlicenses: {deny: [GPL-3.0-only]}\n")
    result = runner.invoke(app, ["explain", "MIT", "-p", str(policy)])
    assert result.exit_code == 0 and "under shop[eu]:" in result.stdout
    manifest = tmp_path / "[gen]" / "asset.yaml"
    manifest.parent.mkdir()
    manifest.write_text(
        "schema_version: 1\nassets: [{name: a, kind: content, version: '1', source: x, license: MIT}]\n"
    )
    listed = runner.invoke(app, ["audit", "--no-env", "--assets", str(manifest), "-p", str(policy)])
    assert "policy shop[eu])" in " ".join(listed.stdout.split())
    assert "[gen]" in runner.invoke(app, ["verify", str(manifest)]).stdout


def test_verify_and_policies(tmp_path, generated_manifest):
    assert runner.invoke(app, ["verify", "rapidocr-pp-ocrv4"]).exit_code == 0
    broken = tmp_path / "asset.yaml"
    broken.write_text(generated_manifest.read_text().replace("root: files", f"root: {tmp_path}"))
    result = runner.invoke(app, ["verify", str(broken)])
    assert result.exit_code == 1 and "missing" in result.stdout
    listed = runner.invoke(app, ["policies"])
    assert listed.exit_code == 0 and "commercial-saas" in listed.stdout


def test_validate_flag_checks_both_sboms(tmp_path):
    args = ["audit", "--no-env", "--assets", "rapidocr-pp-ocrv4", "--validate", "--report-dir", str(tmp_path)]
    result = runner.invoke(app, [*args, "-f", "cyclonedx"])
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["specVersion"] == "1.6"
    assert json.loads((tmp_path / "sbom.spdx.json").read_text())["spdxVersion"] == "SPDX-2.3"


def test_a_projects_dependencies_are_audited_with_it():
    ocr = Path(__file__).resolve().parents[3] / "packages" / "ocr" / "pyproject.toml"
    result = runner.invoke(app, ["audit", "--no-env", "--project", str(ocr), "-f", "json"])
    assert result.exit_code == 0, result.output
    names = {item["name"].lower() for item in json.loads(result.stdout)["items"]}
    # declared (installed or not), and followed through rapidocr-onnxruntime, which this tool's tests install
    assert {
        "paddlectl-ocr",
        "paddlectl-framework",
        "rapidocr-onnxruntime",
        "numpy",
        "onnxruntime",
        "pyclipper",
    } <= names
    assert f"project: {ocr} (paddlectl-ocr) and its declared dependencies" in " ".join(result.stderr.split())


def test_the_command_imports_no_schema_or_sbom_library_until_it_needs_one():
    """jsonschema and the SBOM libraries take seconds to import; `paddlectl license --help` must not wait."""
    probe = "import sys, paddlectl.license_audit.cli; print(sorted({'jsonschema', 'cyclonedx', 'spdx_tools'} & set(sys.modules)))"
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
