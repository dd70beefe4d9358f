"""`paddlectl compat ...` end to end: exit codes 0 fits / 1 does not fit / 2 usage error, JSON, files."""

from __future__ import annotations

import json

import pytest
from conftest import write
from typer.testing import CliRunner

from paddlectl.compat_matrix import cli
from paddlectl.compat_matrix.cli import app

runner = CliRunner()


def run(*args: str):
    return runner.invoke(app, list(args))


def test_probe_prints_facts_as_json():
    result = run("probe", "--json")
    assert result.exit_code == 0
    facts = json.loads(result.stdout)["facts"]
    assert {"python", "os", "arch"} <= set(facts)


def test_check_a_consistent_target_exits_0():
    result = run("check", "--target", "linux-py310-cu118")
    assert result.exit_code == 0 and "consistent" in result.stdout


def test_check_an_inconsistent_target_exits_1_with_the_fix(tmp_path):
    profile = write(
        tmp_path,
        """
        platform: {python: "3.10", os: linux, arch: x86_64, cpu: [avx], driver: "535.104.05", cuda: "12.2"}
        installed:
          - paddlepaddle-gpu[cu118]==3.0.0
          - paddleocr==3.7.0
          - paddlex==3.0.0
          - numpy==1.24.4
        """,
        "p.yml",
    )
    result = run("check", "--target", str(profile), "--json")
    assert result.exit_code == 1
    data = json.loads(result.stdout)
    assert (
        "Because paddleocr 3.7.0 requires paddlex>=3.7.0,<3.8.0 and the installed paddlex is 3.0.0, paddleocr 3.7.0 cannot work."
        in data["problems"]
    )
    assert data["fix"]["fits"] and len(data["fix"]["changes"]) == 1
    assert data["fix"]["changes"][0]["name"] in ("paddlex", "paddleocr")


def test_plan_prints_old_to_new_table():
    result = run("plan", "--upgrade", "paddleocr==3.4.0", "--target", "linux-py310-cu118")
    assert result.exit_code == 0
    assert "paddleocr" in result.stdout and "-> 3.4.0" in result.stdout and "paddlex>=3.4.0,<3.5.0" in result.stdout


def test_plan_that_does_not_fit_explains_and_exits_1():
    result = run("plan", "-u", "paddlepaddle-gpu[cu126]==3.1.0", "--target", "linux-py310-cu118", "--json")
    assert result.exit_code == 1
    explanation = json.loads(result.stdout)["explanation"]
    assert explanation["tree"][0]["label"].startswith("conflict on __driver")
    assert any(
        s.startswith("Because every paddlepaddle-gpu [cu126] requires __driver>=560.28.03")
        for s in explanation["because"]
    )


def test_fact_override_turns_a_no_into_a_yes():
    args = ["plan", "-u", "paddlepaddle-gpu[cu126]==3.1.0", "--target", "linux-py310-cu118"]
    assert run(*args, "--fact", "driver=560.35.03").exit_code == 0
    assert run(*args, "--policy", "lenient").exit_code == 0


@pytest.mark.parametrize(
    ("args", "fragment"),
    [
        (
            ["plan", "-u", "paddleocx==3.0", "--target", "linux-py310-cu118"],
            "unknown package 'paddleocx'; did you mean paddleocr",
        ),
        (["plan", "-u", "paddleocr>=>3", "--target", "linux-py310-cu118"], "invalid requirement 'paddleocr>=>3'"),
        (
            ["plan", "-u", "paddleocr", "--policy", "loose", "--target", "linux-py310-cu118"],
            "--policy must be one of strict, lenient",
        ),
        (["check", "--fact", "gpu=1", "--target", "linux-py310-cu118"], "--fact 'gpu=1' must be KEY=VALUE"),
        (["why", "nosuch", "--target", "linux-py310-cu118"], "unknown package 'nosuch'"),
        (["matrix", "--format", "pdf"], "--format must be one of"),
        (["check", "--target", "no/such.yml"], "profile file not found"),
        (["lock", "--profile", "linux-py311-cpu", "-o", "x.txt", "--kinds", "rumour"], "--kinds takes"),
    ],
)
def test_usage_errors_exit_2_with_one_line(args, fragment):
    result = run(*args)
    assert result.exit_code == 2, result.output
    assert fragment in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1


def test_malformed_matrix_file_exits_2_naming_file_and_line(tmp_path):
    bad = write(tmp_path, "schema: 1\ndataset: t\nsources: {}\npackages:\n  a: {releases: [{versions: ['x.y']}]}\n")
    result = run("matrix", "--matrix", str(bad))
    assert result.exit_code == 2
    assert f"{bad}:5: invalid version 'x.y'" in result.stderr


def test_why_tree():
    result = run("why", "paddlex", "--target", "linux-py310-cu118")
    assert result.exit_code == 0 and "paddleocr 3.0.0 requires paddlex==3.0.0" in result.stdout


@pytest.mark.parametrize("fmt", ["markdown", "html", "json"])
def test_matrix_written_atomically_in_each_format(tmp_path, fmt):
    out = tmp_path / f"grid.{fmt}"
    result = run("matrix", "--dataset", "upstream", "--format", fmt, "-o", str(out))
    assert result.exit_code == 0, result.output
    text = out.read_text()
    assert "paddlepaddle-gpu" in text and "sources disagree" in text and "nvidia-toolkit-drivers" in text
    assert not list(tmp_path.glob(".*.tmp"))
    if fmt == "json":
        rows = json.loads(text)["rows"]
        assert any(r["package"] == "paddlepaddle-gpu" and r["build"] == "cu126" for r in rows)


def test_matrix_table_for_one_package():
    result = run("matrix", "--package", "paddleocr")
    assert result.exit_code == 0 and "paddleocr" in result.stdout and "paddlex>=3.7.0" in result.stdout


MONOREPO_OCR = ("paddlectl-ocr", "paddlectl-framework")  # ocr requires paddlectl-framework[onnx]


def test_check_a_profile_with_an_extra_it_declares_exits_0(tmp_path, bundled):
    installed = "\n".join(f"  - {bundled.package(n).candidates[0].pin()}" for n in MONOREPO_OCR)
    profile = write(
        tmp_path, f'platform: {{python: "3.11", os: linux, arch: x86_64}}\ninstalled:\n{installed}\n', "p.yml"
    )
    result = run("check", "--target", str(profile))
    assert result.exit_code == 0, result.output


@pytest.mark.parametrize("onnx", [None, "1.0.0", "1.17.0"])
def test_check_here_names_the_missing_requirement_of_an_extra(monkeypatch, onnx):
    monkeypatch.setattr(
        cli, "installed_here", lambda matrix: {n: matrix.package(n).candidates[0] for n in MONOREPO_OCR}
    )
    monkeypatch.setattr(cli, "versions_here", lambda: {} if onnx is None else {"onnx": onnx})
    result = run("check", "--json")
    problems = json.loads(result.stdout)["problems"]
    if onnx == "1.17.0":
        assert result.exit_code == 0 and problems == []
        return
    assert result.exit_code == 1
    reason = "onnx is not installed" if onnx is None else f"the installed onnx is {onnx}"
    assert len(problems) == 1 and "whose onnx extra requires onnx" in problems[0] and reason in problems[0]
    assert json.loads(result.stdout)["fix"] is None  # no "uninstall paddlectl-ocr": onnx is what is missing


def test_plan_lists_every_blocking_platform_fact_in_one_run(tmp_path):
    profile = write(
        tmp_path,
        """
        platform: {python: "3.8.18", os: linux, arch: x86_64, cpu: [avx, avx2], driver: "440.33", cuda: "10.2"}
        installed: ["paddlepaddle-gpu[cu118]==2.6.2"]
        """,
        "old.yml",
    )
    args = ["plan", "--upgrade", "paddlepaddle-gpu==3.3.0", "--target", str(profile)]
    explanation = json.loads(run(*args, "--json").stdout)["explanation"]
    assert [b.split(" (")[0] for b in explanation["blockers"]] == [
        "Python version >=3.9",
        "NVIDIA driver version >=520.61.05 for the cu118 build, >=560.28.03 for the cu126 build, >=575.51.03 for the cu129 build",
    ]
    result = run(*args)
    assert result.exit_code == 1
    assert (
        "Platform facts in the way, all of them:" in result.stdout
        and "NVIDIA driver version >=520.61.05" in result.stdout
    )


def test_brackets_the_user_wrote_are_printed_not_read_as_markup(tmp_path):
    result = run("plan", "-u", "paddlepaddle-gpu[cu118]==3.1.0", "--target", "linux-py310-cu118")
    assert result.exit_code == 0 and "plan for paddlepaddle-gpu[cu118]==3.1.0 on" in result.stdout
    profile = write(tmp_path, 'name: "lab[gpu]"\nplatform: {python: "3.11", os: linux, arch: x86_64}\n', "lab.yml")
    result = run("check", "--target", str(profile))
    assert result.exit_code == 0 and "on target lab[gpu]" in result.stdout
    out = tmp_path / "grid[bold].md"
    result = run("matrix", "--package", "paddleocr", "--format", "markdown", "-o", str(out))
    assert result.exit_code == 0 and f"wrote {out}" in result.stdout
