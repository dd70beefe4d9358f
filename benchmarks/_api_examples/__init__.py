"""Collecting Paddle's docstring examples and comparing what two runs of one printed."""

from __future__ import annotations

import doctest
import importlib
import inspect
import math
import re

# xdoctest directives Paddle's docstrings use: a block that needs a device, a download or a file
# the docs do not ship is not a CPU example
_DIRECTIVE = re.compile(r"#\s*(?:x)?doctest:\s*(.*)$")
_UNRUNNABLE = re.compile(r"REQUIRES|SKIP")
_NUMBER = re.compile(r"(?<![\w.])[-+]?(?:(?:\d+\.\d*|\.\d+|\d+)(?:[eE][-+]?\d+)?|nan|inf)(?![\w])")
_WORDS = re.compile(r"\b(?:True|False|None|bool|u?int(?:8|16|32|64)|float(?:16|32|64)|bfloat16|complex(?:64|128))\b")


def _blocks(doc: str) -> list[list[str]]:
    """The statements of each ``.. code-block::`` of a docstring that holds ``>>>`` examples."""
    found = []
    for chunk in re.split(r"\.\.\s+code-block::", doc):
        lines = chunk.splitlines()
        if any(_UNRUNNABLE.search(m.group(1)) for m in map(_DIRECTIVE.search, lines) if m):
            continue
        cleaned = "\n".join(_DIRECTIVE.sub("", line) for line in lines)
        try:
            examples = doctest.DocTestParser().get_examples(cleaned)
        except ValueError:  # inconsistent indentation: the docs' own typo, not an example
            continue
        statements = [e.source for e in examples if e.source.strip()]
        if statements:
            found.append(statements)
    return found


def _documented(module) -> list[tuple[str, object]]:
    names = getattr(module, "__all__", None) or [n for n in dir(module) if not n.startswith("_")]
    found = []
    for name in names:
        obj = getattr(module, name, None)
        if obj is None or inspect.ismodule(obj):
            continue
        found.append((name, obj))
        if inspect.isclass(obj):
            found += [
                (f"{name}.{attr}", member)
                for attr, member in vars(obj).items()
                if not attr.startswith("_") and (callable(member) or isinstance(member, property))
            ]
    return found


def collect(module_names: list[str]) -> list[dict]:
    """One record per example block: ``id`` (module.name#k), ``module``, ``source`` (statements).
    A docstring shared by aliases (paddle.add, Tensor.add) is collected once, under its first name."""
    seen: set[str] = set()
    examples = []
    for module_name in module_names:
        module = importlib.import_module(module_name)
        for name, obj in _documented(module):
            doc = inspect.getdoc(obj) or ""
            if ">>>" not in doc or doc in seen:
                continue
            seen.add(doc)
            for k, statements in enumerate(_blocks(doc)):
                examples.append({"id": f"{module_name}.{name}#{k}", "module": module_name, "source": statements})
    return examples


def _parse(text: str) -> tuple[list[float], list[str]]:
    return [float(n) for n in _NUMBER.findall(text)], _WORDS.findall(text)


def _close(a: float, b: float, tol: float) -> bool:
    return (math.isnan(a) and math.isnan(b)) or math.isclose(a, b, rel_tol=tol, abs_tol=tol)


def compare(theirs: list[str], ours: list[str], tol: float = 1e-4) -> bool:
    """Whether both printed the same numbers (within ``tol``, relative or absolute) and the same
    dtype/boolean words; layout (spacing, digits shown, ``paddle.Size`` around a shape) is ignored."""
    a_num, a_words = _parse("\n".join(theirs))
    b_num, b_words = _parse("\n".join(ours))
    return a_words == b_words and len(a_num) == len(b_num) and all(map(_close, a_num, b_num, [tol] * len(a_num)))
