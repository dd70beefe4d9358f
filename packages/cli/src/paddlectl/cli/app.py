"""The ``paddlectl`` command: a typer app whose sub-commands are imported only when they run.

Start-up imports typer and rich and nothing of the framework or the plugins, so ``--help`` and
``--version`` answer at once (benchmarks/cli_startup.py). A new command goes into
``registry.BUILTINS`` (or is a plugin's ``paddlectl.commands`` entry point), not ``app.command``.
"""

from __future__ import annotations

import sys

import typer
import typer.main
from typer.core import TyperGroup

from . import crash
from .output import USAGE_ERROR, console, err_console, escape, usage_errors
from .plugins import installed_paddlectl
from .registry import root_commands

__all__ = ["USAGE_ERROR", "app", "console", "err_console", "main", "usage_errors"]


class _LazyGroup(TyperGroup):
    """The root group: every command is a registry.LazyCommand, imported when it runs."""

    def __init__(self, **attrs) -> None:
        super().__init__(**attrs)
        self.commands.update(root_commands())


app = typer.Typer(
    cls=_LazyGroup,
    name="paddlectl",
    help="Train, export, evaluate and ship PaddlePaddle-style models on a Numba-JIT core.",
    no_args_is_help=True,
    add_completion=False,
    rich_markup_mode=None,  # click's plain help: typer's rich help imports rich.markdown, half of --help's time
)


def _print_versions(value: bool) -> None:
    if not value:
        return
    from rich.table import Table

    table = Table(title="installed paddlectl distributions")
    table.add_column("distribution")
    table.add_column("version")
    for name, version in installed_paddlectl().items():
        table.add_row(escape(name), escape(version))
    console.print(table)
    raise typer.Exit()


@app.callback()
def root(
    version: bool = typer.Option(
        False, "--version", callback=_print_versions, is_eager=True, help="List installed paddlectl packages."
    ),
    debug: bool = typer.Option(
        False,
        crash.DEBUG_FLAG,
        envvar=crash.DEBUG_ENV,
        help="On an internal error, print the traceback instead of one line.",
    ),
) -> None:
    """paddlectl: the PaddlePaddle workflow on a Numba-JIT core."""


def main() -> None:
    """The console script: run the command; an exception no command handled is one line (crash)."""
    argv = sys.argv[1:]
    try:
        typer.main.get_command(app).main(argv, prog_name="paddlectl")
    except Exception as exc:  # noqa: BLE001 - the last line of defence: no traceback reaches a user
        sys.exit(crash.handle(exc, argv))
