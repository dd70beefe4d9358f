import pytest
from hypothesis import given
from hypothesis import strategies as st

from paddlectl.license_audit.normalize import Leaf, Op


@pytest.mark.parametrize(
    "text, expected, method",
    [
        ("MIT", "MIT", "spdx"),
        ("mit", "MIT", "spdx"),
        ("bigscience-bloom-rail-1.0", "LicenseRef-scancode-bigscience-rail-1.0", "huggingface"),
        ("Apache 2.0", "Apache-2.0", "alias"),
        ("Apache License, Version 2.0", "Apache-2.0", "alias"),
        ("MIT OR GPL-3.0-only", "MIT OR GPL-3.0-only", "spdx"),
        ("mit and (apache-2.0 or bsd-3-clause)", "MIT AND (Apache-2.0 OR BSD-3-Clause)", "spdx"),
        ("GPL-2.0-or-later WITH Classpath-exception-2.0", "GPL-2.0-or-later WITH Classpath-exception-2.0", "spdx"),
        ("llama3", "LicenseRef-paddlectl-llama-3-license", "huggingface"),
        ("llama2", "LicenseRef-scancode-llama-2-license-2023", "huggingface"),
        ("gemma", "LicenseRef-scancode-gemma-tou-2024-04-01", "huggingface"),
        ("creativeml-openrail-m", "LicenseRef-paddlectl-creativeml-openrail-m", "huggingface"),
        ("odc-by", "ODC-By-1.0", "huggingface"),
        ("MIT license", "MIT", "alias"),
        ("SIL OFL 1.1", "OFL-1.1", "alias"),  # the font packages' License field (paddlectl-ocr's synth faces)
        ("LicenseRef-scancode-llama-3.1-license-2024", "LicenseRef-scancode-llama-3.1-license-2024", "spdx"),
    ],
)
def test_known_statements_normalise(normalizer, text, expected, method):
    result = normalizer.normalize(text)
    assert (result.expression, result.method) == (expected, method)


@pytest.mark.parametrize(
    "text, why",
    [
        ("UNKNOWN", "names no licence"),
        ("other", "names no licence"),
        ("", "names no licence"),
        ("BSD", "ambiguous"),
        ("GPL", "ambiguous"),
        ("LicenseRef-MPICH", "neither the SPDX list"),
        ("MIT OR", "not a licence expression"),
        ("Some Custom License v2", "neither the SPDX list"),
    ],
)
def test_unknown_and_ambiguous_are_flagged_not_guessed(normalizer, text, why):
    result = normalizer.normalize(text)
    assert result.expression is None and why in result.note
    assert str(result) == "UNKNOWN"


def test_classifiers(normalizer):
    assert normalizer.classifier("License :: OSI Approved :: MIT License").expression == "MIT"
    assert normalizer.classifier("License :: OSI Approved :: BSD License").expression is None
    ofl = "License :: OSI Approved :: SIL Open Font License 1.1 (OFL-1.1)"
    assert normalizer.classifier(ofl).expression == "OFL-1.1"
    assert "not in the classifier table" in normalizer.classifier("License :: Made Up").note


def test_parse_tree(normalizer):
    tree = normalizer.parse("MIT AND (Apache-2.0 OR GPL-2.0-only WITH Classpath-exception-2.0)")
    assert tree == Op(
        "AND", (Leaf("MIT"), Op("OR", (Leaf("Apache-2.0"), Leaf("GPL-2.0-only", "Classpath-exception-2.0"))))
    )
    assert [str(leaf) for leaf in normalizer.leaves(str(tree))] == [
        "MIT", "Apache-2.0", "GPL-2.0-only WITH Classpath-exception-2.0",
    ]  # fmt: skip


@given(st.text(max_size=60))
def test_any_text_normalises_without_raising_and_known_results_are_stable(normalizer, text):
    result = normalizer.normalize(text)
    if result.known:
        assert normalizer.normalize(result.expression).expression == result.expression


@given(
    st.lists(
        st.sampled_from(["MIT", "Apache-2.0", "BSD-3-Clause", "CC-BY-4.0", "GPL-3.0-only"]), min_size=1, max_size=5
    ),
    st.sampled_from([" AND ", " OR "]),
)
def test_generated_expressions_round_trip(normalizer, ids, op):
    result = normalizer.normalize(op.join(ids))
    assert result.known
    assert {str(leaf) for leaf in normalizer.leaves(result.expression)} == set(ids)
