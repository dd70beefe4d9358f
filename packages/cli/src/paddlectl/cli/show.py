"""``paddlectl config`` and ``paddlectl tasks``: what a config resolves to, which tasks are installed."""

from __future__ import annotations

from typing import Annotated

import typer
from rich.table import Table

from .output import console, escape, usage_errors
from .plugins import tasks


def show_config(
    config: Annotated[str, typer.Option("-c", "--config", help="Experiment YAML file.")],
    override: Annotated[list[str], typer.Option("-o", "--override", help="Key.sub=value, value parsed as YAML.")] = [],  # noqa: B006 - typer copies it
) -> None:
    """Print the resolved experiment config: the file with its -o overrides applied and validated."""
    from paddlectl.framework.config import dump_config, load_config

    with usage_errors():
        resolved = load_config(config, override)
    console.print(dump_config(resolved), end="", markup=False, highlight=False)


def list_tasks() -> None:
    """List the tasks that installed suites provide (entry-point group paddlectl.tasks)."""
    table = Table(title="installed tasks")
    table.add_column("task")
    table.add_column("provided by")
    for name, plugin in sorted(tasks().items()):
        table.add_row(escape(name), escape(plugin.distribution))
    console.print(table)
