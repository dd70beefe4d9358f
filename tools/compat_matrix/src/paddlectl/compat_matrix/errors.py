"""Typed errors: each names where the problem is, what it is, and how to fix it.

The CLI maps every ``CompatError`` to exit code 2 (a usage or data error), which keeps
"does not fit" (exit 1) distinct from "you asked wrongly" (exit 2).
"""

from __future__ import annotations

from difflib import get_close_matches


class CompatError(Exception):
    """Base of every error this package raises on purpose; the message is meant for a person."""


class MatrixError(CompatError, ValueError):
    """A matrix, profile or pyproject file is missing, malformed or says something impossible."""

    def __init__(self, path: object, line: int | None, problem: str, fix: str = "") -> None:
        self.path, self.line, self.problem, self.fix = str(path), line, problem, fix
        where = f"{self.path}:{line}" if line else self.path
        super().__init__(f"{where}: {problem}" + (f"; {fix}" if fix else ""))


class UsageError(CompatError, ValueError):
    """A command-line argument names something unknown or is malformed."""


class LockError(CompatError, RuntimeError):
    """pip-compile could not turn a resolution into a lock file."""


def unknown_name(kind: str, name: str, known: list[str]) -> UsageError:
    """An error for an unknown name that suggests the nearest known ones."""
    close = get_close_matches(name, known, n=3, cutoff=0.6)
    hint = f"did you mean {', '.join(close)}?" if close else f"known: {', '.join(sorted(known)[:12])}"
    return UsageError(f"unknown {kind} {name!r}; {hint}")
