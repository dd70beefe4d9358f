"""The report formats by name, and where ``--report-dir`` writes each of them."""

from __future__ import annotations

from collections.abc import Callable
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING

from ..fileio import write_text

if TYPE_CHECKING:
    from ..audit import AuditResult


class Format(StrEnum):
    TABLE = "table"
    JSON = "json"
    MARKDOWN = "markdown"
    NOTICE = "notice"
    SPDX = "spdx"
    CYCLONEDX = "cyclonedx"


FILE_NAMES = {
    Format.JSON: "license-audit.json",
    Format.MARKDOWN: "license-audit.md",
    Format.NOTICE: "NOTICE.txt",
    Format.SPDX: "sbom.spdx.json",
    Format.CYCLONEDX: "sbom.cdx.json",
}


def renderer(fmt: Format, strict: bool = False, validate: bool = False) -> Callable[[AuditResult], str]:
    """The function that renders ``fmt`` as text (every format but the terminal table).

    ``validate`` checks SBOMs with their official validators first; it is slow for big inventories.
    The renderers are imported here: the SBOM libraries take seconds to import (CycloneDX's
    validator loads jsonschema), which `paddlectl license --help` and the terminal table need not pay.
    """
    from .cyclonedx import render_cyclonedx
    from .json_report import render_json
    from .markdown import render_markdown
    from .notice import render_notice
    from .spdx import render_spdx

    renderers: dict[Format, Callable[[AuditResult], str]] = {
        Format.JSON: lambda result: render_json(result, strict),
        Format.MARKDOWN: lambda result: render_markdown(result, strict),
        Format.NOTICE: render_notice,
        Format.SPDX: lambda result: render_spdx(result, validate),
        Format.CYCLONEDX: lambda result: render_cyclonedx(result, validate),
    }
    if fmt not in renderers:
        raise ValueError(f"{fmt} is printed to the terminal, not rendered as text")
    return renderers[fmt]


def write_reports(
    result: AuditResult, directory: str | Path, strict: bool = False, validate: bool = False
) -> list[Path]:
    """Write every file format into ``directory`` (each file atomically); return the paths written."""
    written = []
    for fmt, name in FILE_NAMES.items():
        path = Path(directory) / name
        write_text(path, renderer(fmt, strict, validate)(result))
        written.append(path)
    return written
