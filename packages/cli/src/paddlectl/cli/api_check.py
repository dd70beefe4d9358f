"""Which ``paddle.*`` names a script uses, found by reading it (``ast``; nothing of it runs), and which
of them paddlectl lacks, found by resolving each one against ``paddlectl.framework``.

Names are followed through imports and their aliases (``import paddle.nn.functional as F`` then
``F.relu`` is ``paddle.nn.functional.relu``; ``from paddle import nn`` then ``nn.Linear`` is
``paddle.nn.Linear``). What is reached through a value (a Tensor's methods, a layer's attributes)
cannot be known without running the script; ``paddlectl run`` names it when the script reaches it.
"""

from __future__ import annotations

import ast
import importlib
import types
from dataclasses import dataclass

from .paddle_alias import TARGET, is_alias


@dataclass(frozen=True)
class ApiUse:
    name: str  # ``paddle.nn.Linear``
    lines: tuple[int, ...]  # where the script names it
    missing: str | None  # the shortest prefix of ``name`` paddlectl lacks; None when all of it exists


def used_names(source: str, filename: str = "<script>") -> dict[str, list[int]]:
    """Every ``paddle.*`` dotted name in ``source``, with the lines it appears on.

    Raises SyntaxError when ``source`` is not Python.
    """
    tree = ast.parse(source, filename)
    bindings: dict[str, str] = {}  # a name in the script -> the paddle name it stands for
    uses: dict[str, list[int]] = {}

    def use(name: str, node: ast.AST) -> None:
        lines = uses.setdefault(name, [])
        if node.lineno not in lines:
            lines.append(node.lineno)

    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if is_alias(alias.name):
                    use(alias.name, node)
                    bindings[alias.asname or "paddle"] = alias.name if alias.asname else "paddle"
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module and is_alias(node.module):
            for alias in node.names:
                if alias.name == "*":
                    use(node.module, node)
                    continue
                use(f"{node.module}.{alias.name}", node)
                bindings[alias.asname or alias.name] = f"{node.module}.{alias.name}"

    inner = {id(node.value) for node in ast.walk(tree) if isinstance(node, ast.Attribute)}
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute | ast.Name) and id(node) not in inner and isinstance(node.ctx, ast.Load):
            name = _dotted(node, bindings)
            if name is not None:
                use(name, node)
    return uses


def _dotted(node: ast.AST, bindings: dict[str, str]) -> str | None:
    """``F.relu`` -> ``paddle.nn.functional.relu`` when ``F`` is bound to a paddle name, else None."""
    attrs: list[str] = []
    while isinstance(node, ast.Attribute):
        attrs.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name) or node.id not in bindings:
        return None
    return ".".join([bindings[node.id], *reversed(attrs)])


def missing_prefix(name: str) -> str | None:
    """The shortest prefix of the ``paddle.*`` name that paddlectl lacks, or None when it has it all.

    Each part is an attribute of the previous object or, below a module, a submodule of it.
    """
    parts = name.split(".")
    obj = importlib.import_module(TARGET)
    for depth, part in enumerate(parts[1:], start=2):
        if hasattr(obj, part):
            obj = getattr(obj, part)
            continue
        if isinstance(obj, types.ModuleType) and hasattr(obj, "__path__"):
            submodule = f"{obj.__name__}.{part}"
            try:
                obj = importlib.import_module(submodule)
                continue
            except ModuleNotFoundError as exc:
                if exc.name != submodule:
                    raise
        return ".".join(parts[:depth])
    return None


def check_source(source: str, filename: str = "<script>") -> list[ApiUse]:
    """Each paddle name ``source`` uses, sorted, with the part paddlectl lacks (if any)."""
    return [
        ApiUse(name, tuple(lines), missing_prefix(name)) for name, lines in sorted(used_names(source, filename).items())
    ]
