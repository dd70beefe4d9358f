"""A project's declared dependencies, followed transitively through what is installed.

The licence of a project's dependency is read from the installed distribution, because that is
what the project runs with and nothing is fetched from the network. A dependency that is not
installed is still inventoried, as UNKNOWN naming the requirement and who declared it: its
declared version range says nothing about its licence. Markers are evaluated for the running
interpreter, and the extras a requirement names (``X[onnx]``) are followed too.
"""

from __future__ import annotations

from collections.abc import Iterable
from importlib.metadata import Distribution, distributions

from packaging.requirements import InvalidRequirement, Requirement
from packaging.utils import canonicalize_name

from ..errors import InputError
from ..model import Evidence, Item, Kind
from ..normalize import Normalized, Normalizer
from .distributions import distribution_item

MISSING = "project dependency"


def _requirements(values: Iterable[str], extras: Iterable[str], where: str) -> list[Requirement]:
    """The requirements among ``values`` whose markers hold here for one of ``extras`` (or none)."""
    found = []
    for value in values:
        try:
            req = Requirement(value)
        except InvalidRequirement as exc:
            raise InputError(f"{where} declares the dependency {value!r}, which is not PEP 508: {exc}") from None
        if req.marker is None or any(req.marker.evaluate({"extra": extra}) for extra in ("", *extras)):
            found.append(req)
    return found


def _missing(req: Requirement, declared_by: str) -> Item:
    note = (
        f"not installed here (declared as {str(req)!r} by {declared_by}); install the project's dependencies "
        "so the licence can be read from the installed distribution"
    )
    return Item(
        name=req.name,
        kind=Kind.LIBRARY,
        evidence=[Evidence(MISSING, declared_by, str(req), Normalized(None, "none", note), 0.0)],
        purl=f"pkg:pypi/{canonicalize_name(req.name)}",
    )


def dependency_items(
    project: dict, where: str, normalizer: Normalizer, installed: Iterable[Distribution] | None = None
) -> list[Item]:
    """Every distribution the ``[project]`` table needs, directly or through other dependencies."""
    by_name: dict[str, Distribution] = {}
    for dist in distributions() if installed is None else installed:
        if dist.metadata["Name"]:
            by_name.setdefault(canonicalize_name(dist.metadata["Name"]), dist)
    declared = project.get("dependencies", [])
    if not isinstance(declared, list) or not all(isinstance(d, str) for d in declared):
        raise InputError(f"{where}: [project] dependencies must be a list of requirement strings")
    queue = [(req, project["name"]) for req in _requirements(declared, (), where)]
    items: dict[str, Item] = {}
    followed: dict[str, set[str]] = {}
    while queue:
        req, declared_by = queue.pop(0)
        key = canonicalize_name(req.name)
        dist = by_name.get(key)
        if dist is None:
            items.setdefault(key, _missing(req, declared_by))
            continue
        new_extras = set(req.extras) - followed.get(key, set())
        if key in followed and not new_extras:
            continue
        followed.setdefault(key, set()).update(new_extras)
        if key not in items:
            items[key] = distribution_item(dist, normalizer)
        name = dist.metadata["Name"]
        queue += [(r, name) for r in _requirements(dist.requires or [], sorted(new_extras), name)]
    return list(items.values())
