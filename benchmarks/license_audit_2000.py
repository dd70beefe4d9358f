"""Licence-audit benchmark: 2,000 inventory items (model cards, dataset cards, asset.yaml entries).

Generates a deterministic inventory with lineage (fine-tunes of fine-tunes, models trained on
datasets), then times reading it, auditing it under the commercial-saas policy, and rendering each
report. The target from the issue is under 5 s for reading plus auditing 2,000 items.

    python benchmarks/license_audit_2000.py [--items 2000] [--repeat 3]

Needs paddlectl-license-audit installed (pip install -e tools/license_audit).
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

LICENCES = [
    "apache-2.0", "mit", "bsd-3-clause", "cc-by-4.0", "cc-by-sa-4.0", "cc-by-nc-4.0", "cc0-1.0", "odbl",
    "openrail", "creativeml-openrail-m", "llama3", "llama2", "gemma", "agpl-3.0", "MIT OR GPL-3.0-only",
    "Apache-2.0 AND CC-BY-4.0", "other", "unknown",
]  # fmt: skip


def generate(root: Path, count: int, seed: int = 7) -> tuple[Path, Path]:
    """Write ``count`` items: three quarters as cards, the rest as asset.yaml entries."""
    rng = random.Random(seed)
    cards, datasets, models = root / "cards", [], []
    n_cards = count * 3 // 4
    for i in range(n_cards):
        is_dataset = i % 4 == 0
        name = f"org{i % 37}/{'data' if is_dataset else 'model'}-{i}"
        lines = [f"license: {rng.choice(LICENCES)}"]
        if is_dataset:
            lines.append("task_categories: [text-classification]")
            datasets.append(name)
        else:
            if models and rng.random() < 0.5:
                lines.append(f"base_model: {rng.choice(models[-200:])}")
            if datasets and rng.random() < 0.5:
                lines.append(f"datasets: [{rng.choice(datasets)}, {rng.choice(datasets)}]")
            models.append(name)
        card = cards / name / "README.md"
        card.parent.mkdir(parents=True, exist_ok=True)
        card.write_text("---\n" + "\n".join(lines) + "\n---\n\n# generated card\n")
    manifest = root / "asset.yaml"
    entries = []
    for i in range(count - n_cards):
        lineage = f"\n    lineage:\n      base_model: [{rng.choice(models)}]" if rng.random() < 0.6 else ""
        entries.append(
            f"  - name: asset-{i}\n    kind: model\n    version: '1.{i}'\n    source: https://example.com/{i}\n"
            f"    license: {rng.choice(LICENCES[:-2])}{lineage}"
        )
    manifest.write_text("schema_version: 1\nassets:\n" + "\n".join(entries) + "\n")
    return cards, manifest


def timed(fn, repeat: int):
    times, value = [], None
    for _ in range(repeat):
        start = time.perf_counter()
        value = fn()
        times.append(time.perf_counter() - start)
    return value, statistics.median(times)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--items", type=int, default=2000)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    try:
        from paddlectl.license_audit.audit import run_audit
        from paddlectl.license_audit.inventory.collect import Sources, build_inventory
        from paddlectl.license_audit.kb import load_knowledge_base
        from paddlectl.license_audit.normalize import Normalizer
        from paddlectl.license_audit.policy import load_policy
        from paddlectl.license_audit.reports.cyclonedx import render_cyclonedx
        from paddlectl.license_audit.reports.json_report import render_json
        from paddlectl.license_audit.reports.markdown import render_markdown
        from paddlectl.license_audit.reports.spdx import render_spdx
    except ImportError as exc:
        print(f"license_audit_2000: skipped, paddlectl-license-audit is not installed ({exc})")
        return 0

    with tempfile.TemporaryDirectory() as tmp:
        cards, manifest = generate(Path(tmp), args.items)
        kb = load_knowledge_base()
        start = time.perf_counter()
        normalizer = Normalizer(kb)  # fresh: normalisation caches start empty
        policy = load_policy("commercial-saas", kb, normalizer)
        items = build_inventory(Sources(environment=False, cards=(cards,), manifests=(manifest,)), normalizer)
        result = run_audit(items, policy, kb, normalizer)
        cold = time.perf_counter() - start
        _, read = timed(
            lambda: build_inventory(Sources(environment=False, cards=(cards,), manifests=(manifest,)), Normalizer(kb)),
            args.repeat,
        )
        _, audit = timed(lambda: run_audit(items, policy, kb, normalizer), args.repeat)
        rows = [("read + audit, cold (fresh normaliser)", cold), ("read inventory", read), ("audit", audit)]
        for name, render in (
            ("JSON", render_json),
            ("Markdown", render_markdown),
            ("SPDX 2.3", render_spdx),
            ("CycloneDX 1.6", render_cyclonedx),
        ):
            _, seconds = timed(lambda render=render: render(result), args.repeat)
            rows.append((f"render {name}", seconds))

    print(
        f"licence audit of {len(items)} inventory items ({len(result.findings)} findings, {len(result.violations)} violations)"
    )
    for name, seconds in rows:
        print(f"  {name:40s} {seconds:8.3f} s")
    verdict = "meets" if cold < 5 else "misses"
    print(f"  read + audit: {cold:.2f} s, {verdict} the 5 s target")
    return 0


if __name__ == "__main__":
    sys.exit(main())
