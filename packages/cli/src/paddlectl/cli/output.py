"""The consoles every command prints through, and the one-line form of a user's mistake.

Paths, config keys and messages can hold ``[...]`` (``paddlectl-framework[onnx]``, ``x[0]``),
which rich would read as markup and drop: anything that did not come from our own literal
markup goes through ``escape`` or is printed with ``markup=False``.
"""

from __future__ import annotations

import contextlib

import typer
from rich.console import Console
from rich.markup import escape

USAGE_ERROR = 2

console = Console()
err_console = Console(stderr=True)

__all__ = ["USAGE_ERROR", "console", "err_console", "escape", "print_error", "usage_errors"]


def print_error(message: object) -> None:
    """``error: <message>`` on stderr, verbatim (no markup, no highlighting, no wrapping)."""
    err_console.print(f"error: {message}", markup=False, highlight=False, soft_wrap=True)


@contextlib.contextmanager
def usage_errors():
    """Turn a user's mistake (bad config, bad path, unknown task) into a one-line message and exit code 2."""
    from paddlectl.framework.errors import PaddlectlError  # the framework is imported only by commands that use it

    from .plugins import MissingProviderError

    try:
        yield
    except (PaddlectlError, MissingProviderError) as exc:
        print_error(exc)
        raise typer.Exit(USAGE_ERROR) from None
