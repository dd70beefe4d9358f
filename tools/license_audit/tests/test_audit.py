"""The audit of the fixture cards: the tricky cases of the issue, lineage conflicts with their chains."""

from paddlectl.license_audit.audit import run_audit
from paddlectl.license_audit.lineage import Lineage, follows_naming_rule
from paddlectl.license_audit.model import CONFIDENCE, Evidence, Item, Kind, Link
from paddlectl.license_audit.policy import Action, load_policy


def test_nc_dataset_under_an_apache_model_is_a_commercial_violation(audit_under, findings_of):
    result = audit_under("commercial-saas")
    [finding] = findings_of(result, "acme/apache-chat-model", "inherited")
    assert finding.action == Action.DENY and finding.obligation == "non-commercial"
    assert finding.chain == ("acme/apache-chat-model", "acme/nc-reviews")
    [grand] = findings_of(result, "acme/chain-grandchild", "inherited")
    assert grand.chain == ("acme/chain-grandchild", "acme/apache-chat-model", "acme/nc-reviews")
    assert not findings_of(audit_under("research"), "acme/apache-chat-model", "inherited")


def test_dual_licence_passes_through_the_permissive_choice(audit_under):
    result = audit_under("commercial-distribution")
    audit = next(a for a in result.audits if a.item.name == "acme/dual-licensed-tool")
    assert (audit.action, audit.verdict.choice) == (Action.ALLOW, "MIT")


def test_llama_3_naming_rule(audit_under, findings_of):
    result = audit_under("commercial-distribution")
    assert not findings_of(result, "acme/Llama-3-acme-chat", "lineage-conflict")
    assert not findings_of(result, "acme/Llama-3.1-acme-instruct", "lineage-conflict")
    [naming] = findings_of(result, "acme/acme-chat-8b", "lineage-conflict")
    assert naming.message.startswith("naming:") and "'Llama 3 ...'" in naming.message
    assert naming.chain == ("acme/acme-chat-8b", "meta-llama/Meta-Llama-3-8B")
    assert naming.action == Action.DENY
    assert findings_of(audit_under("internal"), "acme/acme-chat-8b", "lineage-conflict")[0].action == Action.FLAG


def test_relicensing_a_llama_derivative_drops_restrictions(audit_under, findings_of):
    kinds = sorted(
        f.message.split(":")[0]
        for f in findings_of(audit_under("commercial-saas"), "acme/acme-chat-apache", "lineage-conflict")
    )
    assert kinds == ["naming", "restriction-dropped"]


def test_openrail_finetune(audit_under, findings_of):
    result = audit_under("commercial-saas")
    assert not findings_of(result, "acme/sd-finetune-openrail", "lineage-conflict")
    assert {f.obligation for f in findings_of(result, "acme/sd-finetune-openrail")} == {"use-restrictions"}
    [dropped] = findings_of(result, "acme/sd-finetune-mit", "lineage-conflict")
    assert "use-restrictions terms must carry over" in dropped.message


def test_share_alike_propagation(audit_under, findings_of):
    result = audit_under("commercial-saas")
    [dropped] = findings_of(result, "acme/sa-finetune", "lineage-conflict")
    assert dropped.obligation == "share-alike" and dropped.license == "CC-BY-SA-4.0"
    # Training data passes share-alike on as an inherited term, not as a relicensing conflict.
    assert not findings_of(result, "acme/wiki-model", "lineage-conflict")
    [inherited] = findings_of(result, "acme/wiki-model", "inherited")
    assert (inherited.obligation, inherited.action) == ("share-alike", Action.FLAG)


def test_no_derivatives_base(audit_under, findings_of):
    [conflict] = findings_of(audit_under("commercial-saas"), "acme/nd-finetune", "lineage-conflict")
    assert conflict.message.startswith("no-derivatives:")


def test_unknowns_and_unresolved_lineage_are_flagged(audit_under, findings_of):
    result = audit_under("commercial-saas")
    unknown = {a.item.name for a in result.unknowns}
    assert {
        "acme/broken-yaml",
        "acme/no-license",
        "acme/custom-terms",
        "acme/gpl-ambiguous",
        "acme/unknown-word",
    } <= unknown
    [orphan] = findings_of(result, "acme/orphan-finetune", "lineage")
    assert "nowhere/missing-model" in orphan.message and orphan.action == Action.FLAG


def test_generated_content_carries_the_generators_terms(audit_under, findings_of):
    result = audit_under("commercial-distribution")
    [naming] = findings_of(result, "acme/distilled-small", "lineage-conflict")
    assert naming.chain == ("acme/distilled-small", "acme/synthetic-instructions", "meta-llama/Meta-Llama-3-8B")
    content = findings_of(result, "acme/synthetic-instructions", "lineage-conflict")
    assert content == []  # the naming rule binds models, not data


def test_exit_codes(audit_under):
    assert audit_under("commercial-saas").exit_code() == 1
    research = audit_under("research")
    assert not research.violations and research.exit_code() == 0 and research.exit_code(strict=True) == 1


def test_checklist_names_inherited_obligations(audit_under):
    checklist = audit_under("commercial-saas").checklist()
    rows = checklist["non-commercial"]
    assert (
        "acme/chain-grandchild",
        "CC-BY-NC-4.0",
        ("acme/chain-grandchild", "acme/apache-chat-model", "acme/nc-reviews"),
    ) in rows


def _model(name, licence, normalizer, links=()):
    reading = normalizer.normalize(licence)
    return Item(
        name,
        Kind.MODEL,
        evidence=[Evidence("card license", name, licence, reading, CONFIDENCE["card license"])],
        links=list(links),
    )


def test_lineage_cycles_are_reported(kb, normalizer):
    a = _model("a", "MIT", normalizer, [Link("base_model", "b")])
    b = _model("b", "MIT", normalizer, [Link("base_model", "a")])
    result = run_audit([a, b], load_policy("research", kb, normalizer), kb, normalizer)
    assert any(f.message.startswith("cycle:") for f in result.findings)


def test_low_confidence_is_flagged(kb, normalizer):
    item = _model("weak", "MIT", normalizer)
    item.evidence = [Evidence("license file", "LICENSE", "", normalizer.normalize("MIT"), 0.3)]
    result = run_audit([item], load_policy("research", kb, normalizer), kb, normalizer)
    assert [f.rule for f in result.findings] == ["low-confidence"]


def test_naming_rule_matching():
    assert follows_naming_rule("acme/Llama-3-chat", "Llama 3")
    assert follows_naming_rule("llama3_small", "Llama 3")
    assert not follows_naming_rule("acme/chat-llama-3", "Llama 3")
    assert follows_naming_rule("Llama-3.1-acme", "Llama")


def test_lineage_prefers_the_kind_the_relation_implies(kb, normalizer):
    model = _model("shared-name", "MIT", normalizer)
    data = Item("shared-name", Kind.DATASET)
    lineage = Lineage([model, data], {}, kb)
    assert lineage.resolve(Link("datasets", "shared-name")) is data
    assert lineage.resolve(Link("base_model", "shared-name")) is model
