"""Discovery of what is installed: sub-commands and tasks come from entry points (DESIGN.md §2).

The CLI imports no suite or tool directly, so installing a package adds its
commands and uninstalling it removes them; for what is missing we still know
which distribution provides it and say so.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from importlib.metadata import EntryPoint, distributions, entry_points

COMMAND_GROUP = "paddlectl.commands"
TASK_GROUP = "paddlectl.tasks"

COMMAND_PROVIDERS = {
    "compat": "paddlectl-compat-matrix",
    "license": "paddlectl-license-audit",
    "eval": "paddlectl-eval-harness",
    "ocr": "paddlectl-ocr",
    "nlp": "paddlectl-nlp",
    "det": "paddlectl-detection",
    "seg": "paddlectl-seg",
    "rec": "paddlectl-rec",
    "speech": "paddlectl-speech",
    "asr": "paddlectl-speech",
    "serve": "paddlectl-serving",
}
"""Sub-commands the CLI knows about even when their provider is not installed."""

TASK_PROVIDERS = {
    "vision": "paddlectl-framework",
    "ocr": "paddlectl-ocr",
    "nlp": "paddlectl-nlp",
    "det": "paddlectl-detection",
    "seg": "paddlectl-seg",
    "speech": "paddlectl-speech",
    "rec": "paddlectl-rec",
}
"""Task-name prefixes and the suite that provides them (``ocr.rec`` comes from paddlectl-ocr)."""


class MissingProviderError(LookupError):
    """A command or task was asked for whose distribution is not installed."""


@dataclass(frozen=True)
class Plugin:
    name: str
    entry_point: EntryPoint

    @property
    def distribution(self) -> str:
        dist = self.entry_point.dist
        return dist.name if dist is not None else "?"

    def load(self):
        return self.entry_point.load()


def _plugins(group: str) -> dict[str, Plugin]:
    return {ep.name: Plugin(ep.name, ep) for ep in entry_points(group=group)}


def commands() -> dict[str, Plugin]:
    return _plugins(COMMAND_GROUP)


def tasks() -> dict[str, Plugin]:
    return _plugins(TASK_GROUP)


def install_hint(distribution: str) -> str:
    return f"install it with: pip install {distribution}"


def load_task(name: str):
    """The Task object registered under ``name``, or a MissingProviderError that names its package."""
    found = tasks()
    if name in found:
        return found[name].load()
    provider = TASK_PROVIDERS.get(name.split(".", 1)[0])
    known = ", ".join(sorted(found)) or "none installed"
    if provider is None:
        raise MissingProviderError(f"unknown task {name!r}; installed tasks: {known}")
    if provider in installed_paddlectl():
        raise MissingProviderError(
            f"unknown task {name!r}: {provider} is installed but provides no such task; installed tasks: {known}"
        )
    raise MissingProviderError(
        f"task {name!r} is provided by {provider}, which is not installed; {install_hint(provider)}"
    )


_NAME = re.compile(r"^Name:[ \t]*(\S+)", re.MULTILINE)


def installed_paddlectl() -> dict[str, str]:
    """Every installed paddlectl distribution and its version, by name. The name is read with a
    regex rather than ``dist.metadata`` (a full e-mail-header parse of every installed
    distribution would take most of ``paddlectl --version``'s time)."""
    found = {}
    for dist in distributions():
        headers = (dist.read_text("METADATA") or dist.read_text("PKG-INFO") or "").split("\n\n", 1)[0]
        match = _NAME.search(headers)
        name = match.group(1) if match else ""
        if name == "paddlectl" or name.startswith("paddlectl-"):
            found[name] = dist.version
    return dict(sorted(found.items()))
