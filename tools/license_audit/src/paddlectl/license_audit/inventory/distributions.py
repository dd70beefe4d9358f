"""Installed Python distributions, read through ``importlib.metadata``.

Evidence, strongest first: the PEP 639 ``License-Expression``, the ``License`` field (an id, a
name, or a whole licence text), ``License ::`` trove classifiers, and the LICENSE/COPYING/NOTICE
files the distribution ships. NOTICE texts are kept for the attribution file.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from importlib.metadata import Distribution, distributions

from ..model import CONFIDENCE, Evidence, Item, Kind
from ..normalize import Normalized, Normalizer

LICENSE_FILE = re.compile(r"^(licen[cs]e|copying|notice)([._-].*)?$", re.IGNORECASE)
MAX_LICENSE_FILE_BYTES = 512 * 1024


def _canonical(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def _license_field(value: str, normalizer: Normalizer) -> Evidence:
    if "\n" in value.strip() or len(value) > 200:
        return Evidence(
            "License field", "License", value[:200], normalizer.licence_text(value), CONFIDENCE["License field text"]
        )
    normalized = normalizer.normalize(value)
    source = "License field" if normalized.method == "spdx" else "License field name"
    return Evidence("License field", "License", value, normalized, CONFIDENCE[source])


def _classifiers(classifiers: list[str], normalizer: Normalizer) -> list[Evidence]:
    """One evidence per classifier; several distinct licences also give one combined reading."""
    found = [Evidence("classifier", c, c, normalizer.classifier(c), CONFIDENCE["classifier"]) for c in classifiers]
    distinct = sorted({e.normalized.expression for e in found if e.normalized.known})
    if len(distinct) > 1:
        combined = normalizer.normalize(" OR ".join(distinct))
        note = Normalized(combined.expression, "classifier", "several licence classifiers, read as a choice")
        # Several classifiers may mean a choice or parts under different terms; trust it less.
        found = [Evidence("classifier", "; ".join(classifiers), note.note, note, CONFIDENCE["classifiers (several)"])]
    return found


def _license_files(dist: Distribution) -> list[tuple[str, str]]:
    out = []
    for path in dist.files or []:
        if not LICENSE_FILE.match(path.name) or path.suffix in {".py", ".pyc", ".html"}:
            continue
        located = dist.locate_file(path)
        try:
            if located.stat().st_size > MAX_LICENSE_FILE_BYTES:
                continue
            out.append((str(path), located.read_text(encoding="utf-8", errors="replace")))
        except OSError:
            continue  # listed in RECORD but not on disk: nothing to read
    return out


def _licence_files_evidence(files: list[tuple[str, str]], normalizer: Normalizer) -> Evidence:
    """All bundled licence files apply together; one that matches no known text leaves the whole unknown."""
    readings = [(path, normalizer.licence_text(text)) for path, text in files]
    locations = ", ".join(path for path, _ in readings)
    unread = [path for path, reading in readings if not reading.known]
    if unread:
        normalized = Normalized(None, "none", f"{', '.join(unread)} matches no known licence text")
    else:
        ids = dict.fromkeys(str(leaf) for _, r in readings for leaf in normalizer.leaves(r.expression))
        normalized = normalizer.normalize(" AND ".join(ids))
        normalized = Normalized(normalized.expression, "text", f"the bundled licence files ({len(readings)})")
    return Evidence("license file", locations, normalized.note, normalized, CONFIDENCE["license file"])


def distribution_item(dist: Distribution, normalizer: Normalizer) -> Item:
    """The inventory item of one installed distribution with every piece of licence evidence."""
    meta = dist.metadata
    name, version = meta["Name"], meta["Version"]
    evidence = []
    if meta.get("License-Expression"):
        value = meta["License-Expression"]
        evidence.append(
            Evidence(
                "License-Expression",
                "License-Expression",
                value,
                normalizer.normalize(value),
                CONFIDENCE["License-Expression"],
            )
        )
    if meta.get("License") and meta["License"].strip():
        evidence.append(_license_field(meta["License"], normalizer))
    classifiers = [c for c in meta.get_all("Classifier") or [] if c.startswith("License ::")]
    evidence += _classifiers(classifiers, normalizer)
    files = _license_files(dist)
    notices = [(path, text) for path, text in files if path.rsplit("/", 1)[-1].upper().startswith("NOTICE")]
    licence_files = [(path, text) for path, text in files if (path, text) not in notices]
    if licence_files:
        evidence.append(_licence_files_evidence(licence_files, normalizer))
    urls = [u.split(",", 1)[-1].strip() for u in meta.get_all("Project-URL") or []]
    return Item(
        name=name,
        kind=Kind.LIBRARY,
        version=version,
        evidence=evidence,
        notices=notices,
        source=meta.get("Home-page") or (urls[0] if urls else None),
        supplier=meta.get("Author") or meta.get("Maintainer") or meta.get("Author-email"),
        purl=f"pkg:pypi/{_canonical(name)}@{version}",
    )


def scan_distributions(normalizer: Normalizer, dists: Iterable[Distribution] | None = None) -> list[Item]:
    """Every installed distribution once (the first found on ``sys.path`` wins, as for imports)."""
    seen: set[str] = set()
    items = []
    for dist in distributions() if dists is None else dists:
        name = dist.metadata["Name"]
        if not name or _canonical(name) in seen:
            continue
        seen.add(_canonical(name))
        items.append(distribution_item(dist, normalizer))
    return sorted(items, key=lambda i: _canonical(i.name))
