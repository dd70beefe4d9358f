"""Bad input names the file, the line and the problem; the bundled data is complete and sourced."""

from __future__ import annotations

import pytest
from conftest import TOY, write

from paddlectl.compat_matrix.errors import MatrixError
from paddlectl.compat_matrix.matrix import bundled_files, load_matrix
from paddlectl.compat_matrix.model import KINDS

HEAD = """
schema: 1
dataset: t
sources:
  doc: {title: Doc, url: https://example.invalid, date: "2025-01-01"}
packages:
"""


@pytest.mark.parametrize(
    ("body", "line", "fragment"),
    [
        (
            "  a:\n    releases:\n      - {versions: ['1.0'], source: doc, kind: declared, requires: ['b>=1,,2']}\n",
            8,
            "invalid requirement 'b>=1,,2'",
        ),
        (
            "  a:\n    releases:\n      - {versions: ['1.0'], source: doc, kind: declared, requires: ['nosuch>=1']}\n",
            8,
            "requirement on 'nosuch', which no matrix file defines",
        ),
        (
            "  a:\n    releases:\n      - {versions: ['1.0'], source: doc, kind: declared, requires: ['__gpu>=1']}\n",
            8,
            "unknown platform fact '__gpu'",
        ),
        (
            "  a:\n    releases:\n      - {versions: ['1.0'], source: web, kind: declared}\n",
            8,
            "release cites unknown source 'web'",
        ),
        (
            "  a:\n    releases:\n      - versions: ['1.0']\n        source: doc\n        kind: rumoured\n        requires: ['__python>=3']\n",
            10,
            "kind must be one of declared, tested, reported",
        ),
        ("  a:\n    releases:\n      - {versions: ['one'], source: doc, kind: declared}\n", 8, "invalid version 'one'"),
        ("  a:\n    release: []\n", 7, "unknown key 'release' in package 'a'"),
        (
            "  a:\n    releases:\n      - {versions: ['1.0'], source: doc, kind: declared}\n  a:\n    releases: []\n",
            9,
            "duplicate key 'a'",
        ),
        (
            "  a:\n    releases:\n      - {versions: ['1.0'], source: doc, kind: declared, requires: [{req: '__os[linux]', builds: [cu1]}]}\n",
            8,
            "limited to undefined builds",
        ),
        (
            "  a:\n    releases:\n      - {versions: ['1.0'], source: doc, kind: declared, extras: [onnx]}\n",
            8,
            "extras must map extra names to requirement lists",
        ),
        (
            "  a:\n    releases:\n      - versions: ['1.0']\n        source: doc\n        kind: declared\n        extras:\n          x: ['@paddle']\n",
            12,
            "extra 'x' requires @paddle",
        ),
        (
            "  a:\n    releases:\n      - versions: ['1.0']\n        source: doc\n        kind: declared\n        extras: {x: ['nosuch']}\n",
            11,
            "requirement on 'nosuch', which no matrix file defines",
        ),
        ("  a: [oops\n", 7, "invalid YAML"),
    ],
)
def test_malformed_files_name_file_line_and_problem(tmp_path, body, line, fragment):
    path = write(tmp_path, HEAD + body)
    with pytest.raises(MatrixError) as info:
        load_matrix([path])
    assert info.value.path == str(path)
    assert info.value.line == line, str(info.value)
    assert fragment in str(info.value)


def test_missing_file_and_wrong_schema(tmp_path):
    with pytest.raises(MatrixError, match="file not found"):
        load_matrix([tmp_path / "absent.yaml"])
    with pytest.raises(MatrixError, match="schema must be 1"):
        load_matrix([write(tmp_path, HEAD.replace("schema: 1", "schema: 2") + "  {}\n")])


def test_breakage_must_have_two_known_sides(tmp_path):
    text = TOY + "  - {id: x, between: ['fw<2'], reason: r, source: doc, kind: reported}\n"
    with pytest.raises(MatrixError, match="exactly two requirements"):
        load_matrix([write(tmp_path, text)])


def test_the_same_source_key_may_not_mean_two_things(tmp_path):
    other = (
        HEAD.replace("title: Doc", "title: Other")
        + "  b:\n    releases:\n      - {versions: ['1.0'], source: doc, kind: declared}\n"
    )
    with pytest.raises(MatrixError, match="source 'doc' is defined differently"):
        load_matrix([write(tmp_path, TOY, "a.yaml"), write(tmp_path, other, "b.yaml")])


def test_bundled_data_every_claim_sourced_and_kinded(bundled):
    assert {p.name for p in bundled_files()} >= {"paddle.yaml", "vendors.yaml", "suites.yaml", "monorepo.yaml"}
    claims = [c for p in bundled.packages.values() for cand in p.candidates for c in cand.claims]
    assert len(claims) > 100
    for claim in claims:
        assert claim.kind in KINDS
        assert claim.source.url and claim.source.date and claim.source.title
    for breakage in bundled.breakages:
        assert breakage.kind in KINDS and breakage.source.url


def test_bundled_data_covers_the_published_ecosystem(bundled):
    gpu = bundled.package("paddlepaddle-gpu")
    assert {str(v) for v in gpu.versions} >= {"2.6.2", "3.0.0", "3.1.0", "3.2.2", "3.3.1"}
    assert {c.build for c in gpu.candidates} >= {"cu118", "cu126", "cu129"}
    assert set(bundled.providers["paddle"]) == {
        "paddlepaddle",
        "paddlepaddle-gpu",
        "paddlepaddle-xpu",
        "paddlepaddle-dcu",
    }
    assert {"paddleocr", "paddlex", "paddlenlp", "paddle-custom-npu"} <= set(bundled.packages)
    cu126 = next(c for c in gpu.candidates if c.build == "cu126")
    assert dict(cu126.info)["cudnn"] and bundled.disagreements(cu126)  # two official sources on the driver
