"""Policies: loading and validation, and how expressions are judged."""

import pytest

from paddlectl.license_audit.errors import PolicyError
from paddlectl.license_audit.policy import Action, builtin_policies, evaluate_expression, load_policy, parse_policy


@pytest.fixture(scope="module")
def saas(kb, normalizer):
    return load_policy("commercial-saas", kb, normalizer)


def test_shipped_policies(kb, normalizer):
    assert builtin_policies() == ["commercial-distribution", "commercial-saas", "internal", "research"]
    for name in builtin_policies():
        policy = load_policy(name, kb, normalizer)
        assert policy.name == name and policy.description


def test_or_passes_if_one_choice_passes_and_names_it(saas, kb, normalizer):
    verdict = evaluate_expression("AGPL-3.0-only OR MIT", saas, kb, normalizer)
    assert (verdict.action, verdict.choice, verdict.alternatives) == (Action.ALLOW, "MIT", ("AGPL-3.0-only",))


def test_or_of_failing_choices_fails_with_the_least_bad(saas, kb, normalizer):
    verdict = evaluate_expression("CC-BY-NC-4.0 OR LicenseRef-paddlectl-openrail-m", saas, kb, normalizer)
    assert (verdict.action, verdict.choice) == (Action.FLAG, "LicenseRef-paddlectl-openrail-m")


def test_and_needs_every_part(saas, kb, normalizer):
    verdict = evaluate_expression("MIT AND AGPL-3.0-only", saas, kb, normalizer)
    assert verdict.action == Action.DENY
    assert [(r.license, r.obligation) for r in verdict.reasons] == [("AGPL-3.0-only", "network-copyleft")]


def test_nested_choice_inside_and(saas, kb, normalizer):
    verdict = evaluate_expression("Apache-2.0 AND (CC-BY-NC-4.0 OR CC-BY-4.0)", saas, kb, normalizer)
    assert (verdict.action, verdict.choice) == (Action.ALLOW, "CC-BY-4.0")
    assert {t.license for t in verdict.terms} == {"Apache-2.0", "CC-BY-4.0"}


def test_use_case_changes_the_verdict(kb, normalizer):
    verdicts = {
        name: evaluate_expression("AGPL-3.0-only", load_policy(name, kb, normalizer), kb, normalizer).action
        for name in builtin_policies()
    }
    assert verdicts == {
        "commercial-distribution": Action.DENY, "commercial-saas": Action.DENY,
        "internal": Action.ALLOW, "research": Action.ALLOW,
    }  # fmt: skip
    nc = {
        name: evaluate_expression("CC-BY-NC-4.0", load_policy(name, kb, normalizer), kb, normalizer).action
        for name in builtin_policies()
    }
    assert nc["research"] == Action.ALLOW and nc["commercial-saas"] == Action.DENY


def test_exception_changes_obligations(kb, normalizer):
    policy = load_policy("commercial-distribution", kb, normalizer)
    assert evaluate_expression("GPL-2.0-or-later", policy, kb, normalizer).action == Action.DENY
    assert (
        evaluate_expression("GPL-2.0-or-later WITH Classpath-exception-2.0", policy, kb, normalizer).action
        == Action.FLAG
    )


def test_licence_not_in_the_knowledge_base_gets_the_unknown_action(saas, kb, normalizer):
    verdict = evaluate_expression("AFL-3.0", saas, kb, normalizer)
    assert verdict.action == saas.unknown and verdict.reasons[0].rule == "unknown"


def test_user_policy_by_licence_overrides_obligations(tmp_path, kb, normalizer):
    path = tmp_path / "mine.yaml"
    path.write_text(
        "name: mine\nlicenses:\n  allow: [AGPL-3.0-only]\n  deny: [mit]\nobligations:\n  network-copyleft: deny\nunknown: deny\n"
    )
    policy = load_policy(path, kb, normalizer)
    assert evaluate_expression("AGPL-3.0-only", policy, kb, normalizer).action == Action.ALLOW
    verdict = evaluate_expression("MIT", policy, kb, normalizer)
    assert verdict.action == Action.DENY and verdict.reasons[0].rule == "license"
    assert evaluate_expression("AFL-3.0", policy, kb, normalizer).action == Action.DENY


@pytest.mark.parametrize(
    "data, message",
    [
        ({"name": "x", "obligation": {}}, "did you mean 'obligations'"),
        ({"name": "x", "obligations": {"non-comercial": "deny"}}, "did you mean 'non-commercial'"),
        ({"name": "x", "obligations": {"non-commercial": "forbid"}}, "action must be one of"),
        ({"name": "x", "licenses": {"deny": ["Not A Licence"]}}, "is not one licence id"),
        ({"name": "x", "licenses": {"deny": ["MIT OR BSD-3-Clause"]}}, "is not one licence id"),
        ({"name": "x", "min_confidence": 2}, "min_confidence"),
        ({"description": "no name"}, "'name' is required"),
        (["not", "a", "mapping"], "a policy is a YAML mapping"),
    ],
)
def test_policy_mistakes_are_named(kb, normalizer, data, message):
    with pytest.raises(PolicyError, match=message):
        parse_policy(data, "p.yaml", kb, normalizer)


def test_missing_policy_suggests_a_shipped_one(kb, normalizer):
    with pytest.raises(PolicyError, match="did you mean 'commercial-saas'"):
        load_policy("comercial-saas", kb, normalizer)
