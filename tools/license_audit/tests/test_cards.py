"""Model and dataset cards: the fixture set of tricky cards (see tests/data/cards)."""

import pytest

from paddlectl.license_audit.inventory.cards import front_matter, scan_cards
from paddlectl.license_audit.model import Kind


@pytest.fixture(scope="module")
def cards(normalizer, cards_dir):
    return {item.name: item for item in scan_cards(cards_dir, normalizer)}


def test_fixture_set_is_large_enough(cards):
    assert len(cards) >= 25


@pytest.mark.parametrize(
    "name, licence, kind",
    [
        ("acme/nc-reviews", "CC-BY-NC-4.0", Kind.DATASET),
        ("acme/apache-chat-model", "Apache-2.0", Kind.MODEL),
        ("acme/dual-licensed-tool", "MIT OR GPL-3.0-only", Kind.MODEL),
        ("meta-llama/Meta-Llama-3-8B", "LicenseRef-paddlectl-llama-3-license", Kind.MODEL),
        ("CompVis/stable-diffusion-v1-4", "LicenseRef-paddlectl-creativeml-openrail-m", Kind.MODEL),
        ("wikimedia/wiki-sa", "CC-BY-SA-4.0", Kind.DATASET),
        ("acme/odbl-data", "ODbL-1.0", Kind.DATASET),
        ("acme/list-license", "MIT AND CC-BY-4.0", Kind.MODEL),
        ("acme/other-named-llama", "LicenseRef-paddlectl-llama-3-license", Kind.MODEL),
    ],
)
def test_card_licences(cards, name, licence, kind):
    assert (cards[name].license, cards[name].kind) == (licence, kind)


@pytest.mark.parametrize(
    "name, why",
    [
        ("acme/broken-yaml", "not valid YAML at line 3"),
        ("acme/no-license", "declares no licence"),
        ("acme/no-front-matter", "no YAML front matter"),
        ("acme/unclosed", "not closed"),
        ("acme/unknown-word", "names no licence"),
        ("acme/gpl-ambiguous", "ambiguous"),
        ("acme/custom-terms", "https://example.com/acme-research-license"),
    ],
)
def test_unreadable_or_unlicensed_cards_are_kept_as_unknown(cards, name, why):
    item = cards[name]
    assert item.license is None
    assert why in item.evidence[0].normalized.note


def test_other_with_a_known_licence_name_is_trusted_less(cards):
    assert cards["acme/other-named-llama"].confidence < cards["meta-llama/Meta-Llama-3-8B"].confidence


def test_lineage_links(cards):
    assert [(lnk.relation, lnk.target) for lnk in cards["acme/apache-chat-model"].links] == [
        ("datasets", "acme/nc-reviews")
    ]
    assert [(lnk.relation, lnk.target) for lnk in cards["acme/Llama-3.1-acme-instruct"].links] == [
        ("base_model", "meta-llama/Llama-3.1-8B")
    ]


def test_broken_card_records_the_problem(cards):
    assert [p.kind for p in cards["acme/broken-yaml"].problems] == ["unreadable"]


def test_front_matter_rejects_a_list():
    with pytest.raises(ValueError, match="must be a mapping"):
        front_matter("---\n- a\n- b\n---\n")


def test_scanning_a_missing_folder_is_a_usage_error(tmp_path, normalizer):
    from paddlectl.license_audit.errors import InputError

    with pytest.raises(InputError, match="does not exist"):
        scan_cards(tmp_path / "nope", normalizer)
    with pytest.raises(InputError, match="no README.md"):
        scan_cards(tmp_path, normalizer)


def test_a_single_card_file_is_named_after_its_folder(normalizer, cards_dir):
    [item] = scan_cards(cards_dir / "acme" / "nd-base" / "README.md", normalizer)
    assert (item.name, item.license) == ("nd-base", "CC-BY-ND-4.0")
