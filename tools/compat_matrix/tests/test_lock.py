"""Locks are written by pip-compile, offline, from a tiny local set of wheels."""

from __future__ import annotations

import platform
import zipfile

import pytest
from conftest import write
from typer.testing import CliRunner

from paddlectl.compat_matrix.cli import app

MATRIX = """
schema: 1
dataset: lock-test
sources:
  doc: {title: Test doc, url: https://example.invalid, date: "2025-01-01"}
external: [cmx-gamma]
packages:
  cmx-alpha:
    releases:
      - {versions: ["1.0", "2.0"], source: doc, kind: declared}
  cmx-beta:
    releases:
      - {versions: ["1.0"], source: doc, kind: declared, requires: ["cmx-alpha>=2", "cmx-gamma"]}
      - {versions: ["2.0"], source: doc, kind: declared, requires: ["__python>=9"]}
"""


def wheel(folder, name, version, requires=()):
    dist = f"{name.replace('-', '_')}-{version}"
    metadata = f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n" + "".join(
        f"Requires-Dist: {r}\n" for r in requires
    )
    with zipfile.ZipFile(folder / f"{dist}-py3-none-any.whl", "w") as archive:
        archive.writestr(f"{dist}.dist-info/METADATA", metadata)
        archive.writestr(
            f"{dist}.dist-info/WHEEL", "Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: true\nTag: py3-none-any\n"
        )
        archive.writestr(f"{dist}.dist-info/RECORD", "")


@pytest.fixture
def setup(tmp_path, monkeypatch):
    monkeypatch.setenv("PIP_CONFIG_FILE", "/dev/null")  # no site indexes, no constraints: only our wheels
    for key in ("PIP_FIND_LINKS", "PIP_INDEX_URL", "PIP_EXTRA_INDEX_URL", "PIP_CONSTRAINT"):
        monkeypatch.delenv(key, raising=False)
    wheels = tmp_path / "wheels"
    wheels.mkdir()
    wheel(wheels, "cmx-alpha", "1.0")
    wheel(wheels, "cmx-alpha", "2.0")
    wheel(wheels, "cmx-beta", "1.0", ["cmx-alpha", "cmx-gamma"])
    wheel(wheels, "cmx-gamma", "0.5")
    here = ".".join(platform.python_version_tuple()[:2])
    profile = write(
        tmp_path,
        f'name: here\nplatform: {{python: "{here}", os: linux, arch: x86_64}}\nrequires: [cmx-beta]\n',
        "here.yml",
    )
    return write(tmp_path, MATRIX), wheels, profile


@pytest.mark.skipif(
    platform.system() != "Linux" or platform.machine() != "x86_64", reason="the test profile describes linux/x86_64"
)
def test_lock_pins_the_resolution_with_hashes(setup, tmp_path):
    matrix, wheels, profile = setup
    out = tmp_path / "requirements" / "here.txt"
    args = [
        "lock",
        "--profile",
        str(profile),
        "-o",
        str(out),
        "--matrix",
        str(matrix),
        "--no-index",
        "--find-links",
        str(wheels),
    ]
    result = CliRunner().invoke(app, [*args, "--generate-hashes"])
    assert result.exit_code == 0, result.output
    lock = out.read_text()
    assert "cmx-alpha==2.0" in lock and "cmx-beta==1.0" in lock and "cmx-gamma==0.5" in lock
    assert lock.count("--hash=sha256:") == 3
    assert lock.startswith("# Lock for profile here")
    assert "cmx-beta==1.0" in out.with_suffix(".in").read_text()  # the resolver's pins are pip-compile's input
    assert not list(out.parent.glob(".here.txt*"))


def test_lock_refuses_a_profile_for_another_interpreter(setup, tmp_path):
    matrix, _, _ = setup
    other = write(tmp_path, 'platform: {python: "3.6", os: windows, arch: x86_64}\nrequires: [cmx-beta]\n', "other.yml")
    result = CliRunner().invoke(
        app, ["lock", "--profile", str(other), "-o", str(tmp_path / "o.txt"), "--matrix", str(matrix)]
    )
    assert result.exit_code == 2 and "pip-compile runs on" in result.stderr
    assert not (tmp_path / "o.txt").exists()


@pytest.mark.skipif(
    platform.system() != "Linux" or platform.machine() != "x86_64", reason="the test profile describes linux/x86_64"
)
def test_lock_carries_none_of_this_machines_index_options(setup, tmp_path, monkeypatch):
    """This machine's pip config (indexes, find-links) and --find-links help resolve but stay out of the lock;
    the index a chosen build comes from (the matrix's) stays in."""
    _, wheels, profile = setup
    vendor = (tmp_path / "vendor").as_uri()
    matrix = write(
        tmp_path, MATRIX.replace('["1.0", "2.0"], source', f'["2.0"], builds: {{cpu: {{index: "{vendor}"}}}}, source')
    )
    indexes = [tmp_path / "simple", tmp_path / "more", tmp_path / "vendor"]
    for index in indexes:
        index.mkdir()
    config = tmp_path / "pip.conf"
    config.write_text(
        f"[global]\nindex-url = {indexes[0].as_uri()}\nextra-index-url = {indexes[1].as_uri()}\nfind-links = {wheels}\n"
    )
    monkeypatch.setenv("PIP_CONFIG_FILE", str(config))
    out = tmp_path / "here.txt"
    args = ["lock", "--profile", str(profile), "-o", str(out), "--matrix", str(matrix), "--find-links", str(wheels)]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.output
    lock = out.read_text()
    assert "cmx-alpha==2.0" in lock and "cmx-beta==1.0" in lock
    assert [line for line in lock.splitlines() if line.startswith("--")] == [f"--extra-index-url {vendor}"]
    assert str(wheels) not in lock and not any(index.as_uri() in lock for index in indexes[:2])
