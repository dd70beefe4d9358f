"""The project's own declared licence and its dependencies, from pyproject.toml."""

from pathlib import Path

import pytest
from packaging.utils import canonicalize_name

from paddlectl.license_audit.errors import InputError
from paddlectl.license_audit.inventory.dependencies import dependency_items
from paddlectl.license_audit.inventory.project import project_item, read_project
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


def test_dependencies_are_followed_through_what_is_installed(tmp_path, normalizer):
    # What this tool itself installs, so the test holds in its own virtualenv.
    body = '[project]\nname = "p"\ndependencies = ["cyclonedx-python-lib[json-validation]>=11", "onnx>=1.16"]\n'
    items = dependency_items(read_project(_pyproject(tmp_path, body)), "p", normalizer)
    names = {canonicalize_name(item.name) for item in items}
    assert {"cyclonedx-python-lib", "onnx"} <= names  # declared
    assert {"packageurl-python", "protobuf", "numpy", "jsonschema", "referencing"} <= names  # through them, the extra
    assert "lxml" not in names  # cyclonedx's xml-validation extra was not asked for
    assert all(item.license for item in items)  # each read from its installed distribution


def test_a_dependency_that_is_not_installed_is_unknown_naming_the_requirement(tmp_path, normalizer):
    body = '[project]\nname = "p"\ndependencies = ["no-such-dist-xyz>=1,<2", "pyyaml; python_version < \'3\'"]\n'
    [missing] = dependency_items(read_project(_pyproject(tmp_path, body)), "p", normalizer)
    assert (missing.name, missing.license) == ("no-such-dist-xyz", None)
    assert "not installed here (declared as 'no-such-dist-xyz<2,>=1' by p)" in missing.evidence[0].normalized.note


def test_a_malformed_dependency_is_a_usage_error(tmp_path, normalizer):
    project = read_project(_pyproject(tmp_path, '[project]\nname = "p"\ndependencies = ["numpy >>> 1"]\n'))
    with pytest.raises(InputError, match="not PEP 508"):
        dependency_items(project, "p", normalizer)
