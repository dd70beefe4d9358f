import copy

import pytest

from paddlectl.license_audit.errors import KnowledgeBaseError
from paddlectl.license_audit.kb import build_knowledge_base
from paddlectl.license_audit.resources import load_data

REQUIRED = [
    "MIT", "BSD-2-Clause", "BSD-3-Clause", "Apache-2.0", "ISC", "GPL-2.0-only", "GPL-3.0-only", "LGPL-2.1-only",
    "LGPL-3.0-only", "AGPL-3.0-only", "MPL-2.0", "CC0-1.0", "CC-BY-4.0", "CC-BY-SA-4.0", "CC-BY-NC-4.0",
    "CC-BY-NC-SA-4.0", "CC-BY-ND-4.0", "ODC-By-1.0", "ODbL-1.0", "PDDL-1.0", "CDLA-Permissive-2.0", "CDLA-Sharing-1.0",
    "LicenseRef-paddlectl-openrail-m", "LicenseRef-paddlectl-creativeml-openrail-m",
    "LicenseRef-scancode-bigscience-rail-1.0", "LicenseRef-scancode-llama-2-license-2023",
    "LicenseRef-paddlectl-llama-3-license", "LicenseRef-scancode-gemma-tou-2024-04-01",
]  # fmt: skip


def test_issue_licences_are_covered_with_a_canonical_source(kb):
    for key in REQUIRED:
        facts = kb.get(key)
        assert facts is not None, key
        assert facts.source.startswith("https://")


def test_every_kb_id_is_known_to_the_normaliser(kb, normalizer):
    for key in kb.licenses:
        assert normalizer.normalize(key).expression == key


def test_facts_encode_the_distinctions_a_policy_needs(kb):
    assert "network-copyleft" in kb.get("AGPL-3.0-only").obligations
    assert "network-copyleft" not in kb.get("GPL-3.0-only").obligations
    assert not kb.get("CC-BY-NC-4.0").commercial_use
    assert "share-alike" in kb.get("ODbL-1.0").obligations
    assert kb.get("LicenseRef-paddlectl-llama-3-license").naming_prefix == "Llama 3"
    assert kb.get("LicenseRef-scancode-llama-2-license-2023").user_cap == 700_000_000
    assert kb.get("Apache-2.0").patent_grant and not kb.get("MIT").patent_grant
    assert kb.obligations_of("GPL-2.0-or-later", "Classpath-exception-2.0") >= {"weak-copyleft"}
    assert "strong-copyleft" not in kb.obligations_of("GPL-2.0-or-later", "Classpath-exception-2.0")
    assert kb.obligations_of("MIT", "No-Such-exception") is None


def _broken(mutate):
    raw = copy.deepcopy(load_data("licenses.yaml"))
    mutate(raw)
    return raw


@pytest.mark.parametrize(
    "mutate, message",
    [
        (lambda raw: raw["licenses"]["MIT"].update(obligations=["atribution"]), "unknown obligations"),
        (lambda raw: raw["licenses"]["MIT"].pop("source"), "missing fields"),
        (lambda raw: raw["licenses"]["MIT"].update(source="opensource.org/license/mit"), "canonical https URL"),
        (lambda raw: raw["licenses"]["CC-BY-NC-4.0"].update(commercial_use=True), "commercial_use"),
        (lambda raw: raw["licenses"]["MIT"].update(category="free"), "category"),
        (lambda raw: raw["licenses"]["LicenseRef-paddlectl-llama-3-license"].pop("naming_prefix"), "naming_prefix"),
        (lambda raw: raw["propagation"].pop("datasets"), "propagation"),
    ],
)
def test_inconsistent_data_is_refused(mutate, message):
    with pytest.raises(KnowledgeBaseError, match=message):
        build_knowledge_base(_broken(mutate))
