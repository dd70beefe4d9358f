"""The monorepo dataset is generated from the pyproject files, and selfcheck catches drift."""

from __future__ import annotations

import textwrap
from pathlib import Path

from typer.testing import CliRunner

from paddlectl.compat_matrix import monorepo
from paddlectl.compat_matrix.cli import app
from paddlectl.compat_matrix.matrix import load_matrix


def pyproject(root: Path, where: str, name: str, version: str, deps: list[str]) -> Path:
    path = root / where / "pyproject.toml"
    path.parent.mkdir(parents=True, exist_ok=True)
    listed = ", ".join(f'"{d}"' for d in deps)
    path.write_text(
        textwrap.dedent(
            f'[project]\nname = "{name}"\nversion = "{version}"\nrequires-python = ">=3.11"\ndependencies = [{listed}]\n'
        )
    )
    return path


def repo(tmp_path: Path) -> Path:
    pyproject(tmp_path, "packages/framework", "paddlectl-framework", "0.1.0", ["numpy>=1.26,<3"])
    pyproject(tmp_path, "packages/ocr", "paddlectl-ocr", "0.1.0", ["paddlectl-framework>=0.1,<0.2"])
    pyproject(tmp_path, "tools/compat", "paddlectl-compat-matrix", "0.1.0", ["pyyaml>=6"])
    return tmp_path


def test_generated_data_holds_versions_ranges_and_python(tmp_path):
    data = monorepo.generate(repo(tmp_path), today="2026-01-01")
    ocr = data["packages"]["paddlectl-ocr"]["releases"][0]
    assert ocr["versions"] == ["0.1.0"] and ocr["requires"] == ["__python>=3.11", "paddlectl-framework<0.2,>=0.1"]
    assert data["external"] == ["numpy", "pyyaml"]
    assert data["sources"]["packages/ocr"]["url"] == "packages/ocr/pyproject.toml"


def test_selfcheck_catches_drift_and_write_fixes_it(tmp_path):
    root = repo(tmp_path)
    data_file = tmp_path / "monorepo.yaml"
    assert "does not exist" in monorepo.selfcheck(root, data_file)[0]
    monorepo.write(root, data_file)
    assert monorepo.selfcheck(root, data_file) == []
    pyproject(root, "packages/ocr", "paddlectl-ocr", "0.1.0", ["paddlectl-framework>=0.2,<0.3"])
    problems = monorepo.selfcheck(root, data_file)
    assert len(problems) == 1 and problems[0].startswith("paddlectl-ocr: monorepo.yaml says 0.1.0 requires")
    assert "paddlectl-framework<0.3,>=0.2" in problems[0]
    monorepo.write(root, data_file)
    assert monorepo.selfcheck(root, data_file) == []


def test_released_versions_stay_as_history(tmp_path):
    root = repo(tmp_path)
    data_file = tmp_path / "monorepo.yaml"
    monorepo.write(root, data_file)
    pyproject(root, "packages/framework", "paddlectl-framework", "0.2.0", ["numpy>=1.26,<3"])
    monorepo.write(root, data_file)
    matrix = load_matrix([data_file])
    assert [str(v) for v in matrix.package("paddlectl-framework").versions] == ["0.1.0", "0.2.0"]
    # the ocr suite still declares <0.2: the matrix now knows that it cannot move to framework 0.2.0
    ocr = matrix.package("paddlectl-ocr").candidates[0]
    assert not any(
        r.admits(matrix.package("paddlectl-framework").candidates[0])
        for r in (c.req for c in ocr.claims)
        if r.name == "paddlectl-framework"
    )


def test_bundled_monorepo_data_agrees_with_this_repository():
    root = monorepo.find_root(Path(__file__).parent)
    result = CliRunner().invoke(app, ["selfcheck", "--root", str(root)])
    assert result.exit_code == 0, f"run `paddlectl compat selfcheck --write`: {result.output}"


def test_selfcheck_outside_the_repository_is_a_usage_error(tmp_path):
    result = CliRunner().invoke(app, ["selfcheck", "--root", str(tmp_path)])
    assert result.exit_code == 2 and "not inside the paddlectl monorepo" in result.stderr
