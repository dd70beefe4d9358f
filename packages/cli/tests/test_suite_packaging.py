"""A plain ``pip install`` of a suite gives what it needs at run time: every third-party package its
code imports for models is a runtime dependency, not only a test extra."""

from __future__ import annotations

import ast
import tomllib
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

ROOT = Path(__file__).resolve().parents[3]
OCR = ROOT / "packages" / "ocr"


def _imports_in(function: str, source: Path) -> set[str]:
    tree = ast.parse(source.read_text(encoding="utf-8"))
    (node,) = [n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef) and n.name == function]
    return {alias.name.split(".")[0] for n in ast.walk(node) if isinstance(n, ast.Import) for alias in n.names}


@pytest.mark.skipif(not OCR.is_dir(), reason="run from the monorepo checkout")
def test_ocr_model_package_is_a_runtime_dependency():
    project = tomllib.loads((OCR / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    runtime = {canonicalize_name(Requirement(r).name) for r in project["dependencies"]}
    models = _imports_in("rapidocr_model_paths", OCR / "src" / "paddlectl" / "ocr" / "pipeline.py")
    assert models == {"rapidocr_onnxruntime"}
    assert {canonicalize_name(m) for m in models} <= runtime
