"""Inventory of installed distributions: the real environment, and crafted dist-info folders for edge cases."""

import re
from importlib.metadata import PathDistribution, distributions

import pytest

from paddlectl.license_audit.inventory.distributions import distribution_item, scan_distributions
from paddlectl.license_audit.textmatch import identify_text


@pytest.fixture(scope="module")
def environment(normalizer):
    return scan_distributions(normalizer)


def test_every_installed_distribution_is_inventoried_once(environment):
    names = {re.sub(r"[-_.]+", "-", d.metadata["Name"]).lower() for d in distributions() if d.metadata["Name"]}
    inventoried = [re.sub(r"[-_.]+", "-", i.name).lower() for i in environment]
    assert sorted(inventoried) == sorted(names)
    assert all(i.purl.startswith("pkg:pypi/") and i.evidence for i in environment)


def test_declared_license_expressions_win(environment, normalizer):
    by_name = {i.name: i for i in environment}
    for dist in distributions():
        declared = dist.metadata.get("License-Expression")
        item = by_name.get(dist.metadata["Name"])
        if declared and item is not None and normalizer.normalize(declared).known:
            assert item.license == normalizer.normalize(declared).expression
            assert item.confidence == 0.95
            assert item.best.source == "License-Expression"


def test_this_package_reads_as_apache(environment):
    item = next(i for i in environment if i.name == "paddlectl-license-audit")
    assert item.license == "Apache-2.0"


def test_bundled_licence_files_of_real_distributions_are_identified():
    """A distribution that declares one fingerprinted licence and ships one licence file: the file matches it."""
    checked = 0
    for dist in distributions():
        declared = dist.metadata.get("License-Expression")
        files = [f for f in dist.files or [] if re.match(r"^(licen[cs]e|copying)(\.(txt|md|rst))?$", f.name, re.I)]
        if declared not in ("MIT", "Apache-2.0", "BSD-3-Clause") or len(files) != 1:
            continue
        text = dist.locate_file(files[0]).read_text(encoding="utf-8", errors="replace")
        assert declared in identify_text(text), dist.metadata["Name"]
        checked += 1
    assert checked >= 3


def _dist(tmp_path, metadata: str, files: dict[str, str] | None = None) -> PathDistribution:
    info = tmp_path / "demo-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.4\nName: demo\nVersion: 1.0\n" + metadata)
    record = ["demo-1.0.dist-info/METADATA,,"]
    for name, text in (files or {}).items():
        (info / name).parent.mkdir(parents=True, exist_ok=True)
        (info / name).write_text(text)
        record.append(f"demo-1.0.dist-info/{name},,")
    (info / "RECORD").write_text("\n".join(record) + "\n")
    return PathDistribution(info)


MIT_TEXT = (
    "Copyright (c) 2024 Demo\n\nPermission is hereby granted, free of charge, to any person obtaining a copy of this "
    "software ... The above copyright notice and this permission notice shall be included in all copies or substantial "
    "portions of the Software."
)


def test_ambiguous_field_is_resolved_by_the_licence_file(tmp_path, normalizer):
    item = distribution_item(
        _dist(
            tmp_path,
            "License: BSD\nClassifier: License :: OSI Approved :: BSD License\n",
            {"licenses/LICENSE": MIT_TEXT},
        ),
        normalizer,
    )
    assert item.license == "MIT"
    assert item.confidence == 0.6
    assert any("ambiguous" in e.normalized.note for e in item.evidence)


def test_nothing_usable_stays_unknown(tmp_path, normalizer):
    item = distribution_item(_dist(tmp_path, "License: UNKNOWN\n", {"LICENSE": "All rights reserved."}), normalizer)
    assert item.license is None and item.confidence == 0.0


def test_several_classifiers_are_a_low_confidence_choice_and_notice_files_are_kept(tmp_path, normalizer):
    item = distribution_item(
        _dist(
            tmp_path,
            "Classifier: License :: OSI Approved :: MIT License\nClassifier: License :: OSI Approved :: Apache Software License\n",
            {"NOTICE": "Demo includes software developed at Example Inc."},
        ),
        normalizer,
    )
    assert item.license == "Apache-2.0 OR MIT" and item.confidence == 0.5
    assert item.notices == [("demo-1.0.dist-info/NOTICE", "Demo includes software developed at Example Inc.")]


def test_license_field_holding_a_whole_text(tmp_path, normalizer):
    field = MIT_TEXT.replace("\n", "\n        ")
    item = distribution_item(_dist(tmp_path, f"License: {field}\n"), normalizer)
    assert item.license == "MIT" and item.best.source == "License field"
