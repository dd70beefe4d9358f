"""Helpers shared by the scenario tests: small matrices written as YAML, platforms, pins."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from paddlectl.compat_matrix.matrix import Matrix, load_matrix
from paddlectl.compat_matrix.model import parse_requirement
from paddlectl.compat_matrix.platform import make_platform
from paddlectl.compat_matrix.profile import installed_from_pins, load_profile
from paddlectl.compat_matrix.resolver import Context, Options

LINUX_311 = {"python": "3.11", "os": "linux", "arch": "x86_64", "cpu": ["avx", "avx2"]}

TOY = """
schema: 1
dataset: toy
sources:
  doc: {title: Toy install guide, url: https://example.invalid/doc, date: "2025-01-01"}
  notes: {title: Toy driver notes, url: https://example.invalid/notes, date: "2025-02-01"}
  forum: {title: Toy forum thread, url: https://example.invalid/forum, date: "2025-03-01"}
external: [onnx]
packages:
  fw:
    provides: core
    releases:
      - {versions: ["1.0.0", "1.1.0"], source: doc, kind: declared, requires: ["__python>=3.8,<3.12"]}
      - {versions: ["2.0.0", "2.1.0"], source: doc, kind: declared, requires: ["__python>=3.9"]}
  fw-gpu:
    provides: core
    releases:
      - versions: ["2.0.0", "2.1.0"]
        builds: {cu118: {cudnn: "8.9"}, cu126: {cudnn: "9.5"}}
        source: doc
        kind: declared
        requires:
          - "__os[linux,windows]"
          - {req: "__driver>=520.61.05", builds: [cu118], source: notes}
          - {req: "__driver>=560.28.03", builds: [cu126], source: notes}
          - {req: "__driver>=525.60.13", builds: [cu126], source: doc}
  suite:
    releases:
      - {versions: ["1.0", "1.1", "1.2"], source: doc, kind: declared, requires: ["@core>=1.0,<2"]}
      - {versions: ["2.0", "2.1"], source: doc, kind: declared, requires: ["@core>=2.0", "helper>=2"]}
      - {versions: ["2.2"], source: doc, kind: declared, requires: ["@core>=2.1", "helper>=3"]}
  helper:
    releases:
      - {versions: ["1.0", "2.0", "2.5"], source: doc, kind: declared}
      - {versions: ["3.0"], source: doc, kind: declared, requires: ["__python>=3.11"]}
  ocr:
    releases:
      - {versions: ["3.5", "3.6"], source: doc, kind: declared, requires: ["lib>=1,<2"]}
      - {versions: ["3.7"], source: doc, kind: declared, requires: ["lib>=2", "__python>=3.12"]}
  lib:
    releases:
      - {versions: ["1.0", "1.5", "2.0"], source: doc, kind: declared}
  app:
    releases:
      - {versions: ["1.0"], source: doc, kind: declared, requires: ["mid>=1,<2"]}
      - {versions: ["2.0"], source: doc, kind: declared, requires: ["mid>=2"]}
  mid:
    releases:
      - {versions: ["1.0"], source: doc, kind: declared, requires: ["base>=1,<2"]}
      - {versions: ["2.0"], source: doc, kind: declared, requires: ["base>=2"]}
  base:
    releases:
      - {versions: ["1.0", "2.0", "3.0"], source: doc, kind: declared}
  legacy:
    releases:
      - {versions: ["1.0"], source: doc, kind: declared, requires: ["@core<2"]}
  vision:
    releases:
      - versions: ["1.0"]
        source: doc
        kind: declared
        extras: {onnx: ["onnx>=1.15,<2", "lib>=2"], gpu: ["__driver>=520"]}
      - {versions: ["1.1"], source: doc, kind: declared}
  viewer:
    releases:
      - {versions: ["1.0"], source: doc, kind: declared, requires: ["vision[onnx]>=1.0"]}
breakages:
  - {id: helper3-fw20, between: ["helper>=3", "fw<2.1"], reason: crashes on import, source: forum, kind: reported}
"""


def write(tmp_path: Path, text: str, name: str = "m.yaml") -> Path:
    path = tmp_path / name
    path.write_text(textwrap.dedent(text).lstrip())
    return path


@pytest.fixture
def toy(tmp_path) -> Matrix:
    return load_matrix([write(tmp_path, TOY)])


@pytest.fixture(scope="session")
def bundled() -> Matrix:
    return load_matrix()


def ctx_for(matrix: Matrix, policy: str = "strict", kinds=("declared", "tested", "reported"), **facts) -> Context:
    values = {**LINUX_311, **facts}
    values = {k: v for k, v in values.items() if v is not None}
    return Context(matrix, make_platform(values, "the target", "test"), Options(policy, tuple(kinds)))


def profile_ctx(matrix: Matrix, name: str, **overrides):
    profile = load_profile(name)
    platform = profile.platform.with_overrides(overrides) if overrides else profile.platform
    return Context(matrix, platform), installed_from_pins(matrix, profile.installed), profile


def reqs(*texts: str, origin: str = "requested"):
    return [parse_requirement(t, origin) for t in texts]


def pins(matrix: Matrix, *texts: str):
    return installed_from_pins(matrix, reqs(*texts, origin="installed"))


def chosen(solution) -> dict[str, str]:
    return {n: c.pin() for n, c in solution.packages().items()}
