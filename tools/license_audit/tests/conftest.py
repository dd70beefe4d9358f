"""Shared fixtures: the shipped knowledge base, one normaliser, the fixture cards and manifests."""

from __future__ import annotations

from pathlib import Path

import pytest

from paddlectl.license_audit.audit import run_audit
from paddlectl.license_audit.inventory.collect import Sources, build_inventory
from paddlectl.license_audit.kb import load_knowledge_base
from paddlectl.license_audit.normalize import default_normalizer
from paddlectl.license_audit.policy import load_policy

DATA = Path(__file__).parent / "data"
CARDS = DATA / "cards"
GENERATED = DATA / "generated.asset.yaml"


@pytest.fixture(scope="session")
def cards_dir():
    return CARDS


@pytest.fixture(scope="session")
def generated_manifest():
    return GENERATED


@pytest.fixture(scope="session")
def kb():
    return load_knowledge_base()


@pytest.fixture(scope="session")
def normalizer():
    return default_normalizer()


@pytest.fixture(scope="session")
def fixture_items(normalizer):
    return build_inventory(Sources(environment=False, cards=(CARDS,), manifests=(GENERATED,)), normalizer)


@pytest.fixture(scope="session")
def audit_under(fixture_items, kb, normalizer):
    """Audit the fixture cards and the generated-content manifest under a shipped policy (cached per policy)."""
    cache = {}

    def run(policy_name: str):
        if policy_name not in cache:
            cache[policy_name] = run_audit(fixture_items, load_policy(policy_name, kb, normalizer), kb, normalizer)
        return cache[policy_name]

    return run


@pytest.fixture(scope="session")
def findings_of():
    """The findings on the item called ``name`` in an audit result (optionally of one rule)."""

    def find(result, name: str, rule: str | None = None):
        audit = next(a for a in result.audits if a.item.name == name)
        return [f for f in audit.findings if rule is None or f.rule == rule]

    return find
