"""The project's own declared licence, from pyproject.toml."""

from pathlib import Path

import pytest

from paddlectl.license_audit.errors import InputError
from paddlectl.license_audit.inventory.project import project_item
from paddlectl.license_audit.model import Kind

OWN_PYPROJECT = Path(__file__).resolve().parents[1] / "pyproject.toml"


def _pyproject(tmp_path, body: str) -> Path:
    path = tmp_path / "pyproject.toml"
    path.write_text(body)
    return path


def test_this_packages_own_pyproject(normalizer):
    item = project_item(OWN_PYPROJECT, normalizer)
    assert (item.name, item.kind, item.license, item.confidence) == (
        "paddlectl-license-audit",
        Kind.PROJECT,
        "Apache-2.0",
        0.95,
    )


@pytest.mark.parametrize(
    "body, licence",
    [
        ('[project]\nname = "p"\nlicense = "MIT OR Apache-2.0"\n', "MIT OR Apache-2.0"),
        ('[project]\nname = "p"\nlicense = {text = "Apache License 2.0"}\n', "Apache-2.0"),
        ('[project]\nname = "p"\nclassifiers = ["License :: OSI Approved :: MIT License"]\n', "MIT"),
        ('[project]\nname = "p"\n', None),
    ],
)
def test_declaration_forms(tmp_path, normalizer, body, licence):
    assert project_item(_pyproject(tmp_path, body), normalizer).license == licence


def test_license_file_form(tmp_path, normalizer):
    (tmp_path / "LICENSE").write_text(
        "Permission is hereby granted, free of charge, to any person obtaining a copy of this software, "
        "subject to: the above notice shall be included in all copies or substantial portions of the Software."
    )
    item = project_item(_pyproject(tmp_path, '[project]\nname = "p"\nlicense = {file = "LICENSE"}\n'), normalizer)
    assert (item.license, item.best.source) == ("MIT", "license file")


@pytest.mark.parametrize(
    "body, message",
    [("[project\n", "cannot read"), ('[tool.x]\nname = "p"\n', r"no \[project\] table")],
)
def test_unusable_pyproject_is_a_usage_error(tmp_path, normalizer, body, message):
    with pytest.raises(InputError, match=message):
        project_item(_pyproject(tmp_path, body), normalizer)
    with pytest.raises(InputError, match="does not exist"):
        project_item(tmp_path / "missing.toml", normalizer)
