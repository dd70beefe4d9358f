"""Reports: SPDX 2.3 and CycloneDX 1.6 validated with their libraries' official validators; JSON, Markdown, NOTICE."""

import json

import pytest
from cyclonedx.schema import SchemaVersion
from cyclonedx.validation.json import JsonStrictValidator
from spdx_tools.spdx.parser.json import json_parser
from spdx_tools.spdx.validation.document_validator import validate_full_spdx_document

from paddlectl.license_audit.audit import run_audit
from paddlectl.license_audit.inventory.collect import Sources, build_inventory
from paddlectl.license_audit.inventory.manifest import builtin_manifest
from paddlectl.license_audit.policy import load_policy
from paddlectl.license_audit.reports.cyclonedx import CycloneDxValidationError, render_cyclonedx, validate_cyclonedx
from paddlectl.license_audit.reports.formats import FILE_NAMES, write_reports
from paddlectl.license_audit.reports.json_report import render_json
from paddlectl.license_audit.reports.markdown import render_markdown
from paddlectl.license_audit.reports.notice import render_notice
from paddlectl.license_audit.reports.spdx import render_spdx


@pytest.fixture(scope="module")
def environment_audit(kb, normalizer, generated_manifest, cards_dir):
    """The real environment, the PP-OCRv4 models, the fixture cards and generated content, all in one audit."""
    sources = Sources(
        environment=True,
        cards=(cards_dir,),
        manifests=(builtin_manifest("rapidocr-pp-ocrv4").path, generated_manifest),
    )
    items = build_inventory(sources, normalizer)
    return run_audit(items, load_policy("commercial-saas", kb, normalizer), kb, normalizer)


def _spdx_round_trip(text, tmp_path):
    path = tmp_path / "sbom.spdx.json"
    path.write_text(text)
    return json_parser.parse_from_file(str(path))


def test_spdx_document_is_valid_and_parses_back(environment_audit, tmp_path):
    text = render_spdx(environment_audit)
    document = _spdx_round_trip(text, tmp_path)
    assert validate_full_spdx_document(document, "SPDX-2.3") == []
    assert document.creation_info.spdx_version == "SPDX-2.3"
    assert len(document.packages) == len(environment_audit.audits)
    data = json.loads(text)
    refs = {e["licenseId"] for e in data["hasExtractedLicensingInfos"]}
    assert "LicenseRef-paddlectl-llama-3-license" in refs
    relationships = {(r["relationshipType"], r.get("comment")) for r in data["relationships"]}
    assert ("GENERATED_FROM", "trained on") in relationships
    assert any(kind == "DESCENDANT_OF" for kind, _ in relationships)
    unknown = next(p for p in data["packages"] if p["name"] == "acme/custom-terms")
    assert unknown["licenseDeclared"] == "NOASSERTION"


def test_cyclonedx_bom_validates_against_the_official_1_6_schema(environment_audit):
    text = render_cyclonedx(environment_audit)
    assert JsonStrictValidator(SchemaVersion.V1_6).validate_str(text) is None
    data = json.loads(text)
    assert data["specVersion"] == "1.6"
    types = {c["type"] for c in data["components"]}
    assert {"library", "machine-learning-model", "data"} <= types
    det = next(c for c in data["components"] if c["name"] == "ch_PP-OCRv4_det_infer")
    assert det["hashes"] == [
        {"alg": "SHA-256", "content": "d2a7720d45a54257208b1e13e36a8479894cb74155a5efe29462512d42f49da9"}
    ]
    assert det["licenses"] == [{"expression": "Apache-2.0"}]
    deps = {d["ref"]: d.get("dependsOn", []) for d in data["dependencies"]}
    assert deps["model:ch_PP-OCRv4_det_infer"] == ["model:PaddlePaddle/ch_PP-OCRv4_det_infer"]


def test_invalid_cyclonedx_is_refused():
    with pytest.raises(CycloneDxValidationError):
        validate_cyclonedx(json.dumps({"bomFormat": "CycloneDX", "specVersion": "1.6", "components": "nope"}))


def test_json_report(environment_audit):
    data = json.loads(render_json(environment_audit))
    assert data["summary"]["items"] == len(data["items"]) == len(environment_audit.audits)
    assert data["summary"]["exit_code"] == 1
    item = next(i for i in data["items"] if i["name"] == "acme/chain-grandchild")
    assert {"obligation": "non-commercial", "license": "CC-BY-NC-4.0",
            "chain": ["acme/chain-grandchild", "acme/apache-chat-model", "acme/nc-reviews"],
            "relations": ["base_model", "datasets"]} in item["inherited"]  # fmt: skip
    assert "non-commercial" in data["obligations"]
    assert "model:acme/broken-yaml" in data["unknowns"]


def test_markdown_report_reads_as_a_review_document(environment_audit):
    text = render_markdown(environment_audit)
    for heading in (
        "## Summary",
        "## Violations",
        "## Needs review",
        "## Licences not identified",
        "## Obligations checklist",
        "## Inventory",
        "## Licence sources",
    ):
        assert heading in text
    assert "acme/apache-chat-model <- acme/nc-reviews" in text
    assert "- [ ] **non-commercial** (deny under this policy)" in text
    assert "https://creativecommons.org/licenses/by-nc/4.0/legalcode" in text


def test_notice_file_carries_required_notices(environment_audit):
    text = render_notice(environment_audit)
    llama_notice = "Built with Meta Llama 3."
    block = text.split("acme/acme-chat-apache", 1)[1].split("-" * 78, 1)[0]
    assert llama_notice in block  # inherited from its base model, though it claims Apache-2.0
    assert "ch_PP-OCRv4_rec_infer 4.0 (model)" in text


def test_report_dir_writes_every_format(environment_audit, tmp_path):
    written = write_reports(environment_audit, tmp_path / "out")
    assert sorted(p.name for p in written) == sorted(FILE_NAMES.values())
    assert all(p.stat().st_size > 0 for p in written)
    assert not list((tmp_path / "out").glob(".*.tmp"))


def test_spdx_validation_refuses_a_broken_document(environment_audit):
    from paddlectl.license_audit.reports.spdx import SpdxValidationError, build_document, validate_spdx

    document = build_document(environment_audit)
    document.packages[0].spdx_id = "not an spdx id"
    with pytest.raises(SpdxValidationError, match="SPDXRef"):
        validate_spdx(document)
