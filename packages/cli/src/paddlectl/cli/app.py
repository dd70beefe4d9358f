"""The ``paddlectl`` command: a typer app whose sub-commands come from entry points."""

from __future__ import annotations

import contextlib
import functools
import json
from typing import Annotated

import typer
import typer.main
from rich.console import Console
from rich.table import Table
from typer.core import TyperGroup

from paddlectl.framework.config import dump_config, load_config
from paddlectl.framework.errors import PaddlectlError

from . import doctor as doctor_module
from .plugins import COMMAND_PROVIDERS, MissingProviderError, commands, install_hint, installed_paddlectl, tasks

USAGE_ERROR = 2

console = Console()
err_console = Console(stderr=True)


class _PluginGroup(TyperGroup):
    """The root command group: a plugin's sub-app is imported when its command is used (or when
    help lists the commands), not at every start-up, so `paddlectl train` does not pay for
    importing every installed tool (the eval harness pulls in MLflow)."""

    def list_commands(self, ctx):
        return sorted(set(super().list_commands(ctx)) | set(commands()))

    def get_command(self, ctx, name):
        return super().get_command(ctx, name) or _plugin_command(name)


app = typer.Typer(
    cls=_PluginGroup,
    name="paddlectl",
    help="Train, export, evaluate and ship PaddlePaddle-style models on a Numba-JIT core.",
    no_args_is_help=True,
    add_completion=False,
)


def _print_versions(value: bool) -> None:
    if not value:
        return
    table = Table(title="installed paddlectl distributions")
    table.add_column("distribution")
    table.add_column("version")
    for name, version in installed_paddlectl().items():
        table.add_row(name, version)
    console.print(table)
    raise typer.Exit()


@app.callback()
def root(
    version: bool = typer.Option(
        False, "--version", callback=_print_versions, is_eager=True, help="List installed paddlectl packages."
    ),
) -> None:
    """paddlectl: the PaddlePaddle workflow on a Numba-JIT core."""


@contextlib.contextmanager
def usage_errors():
    """Turn a user's mistake (bad config, bad path, unknown task) into a one-line message and exit code 2."""
    try:
        yield
    except (PaddlectlError, MissingProviderError) as exc:
        err_console.print(f"error: {exc}", markup=False, highlight=False, soft_wrap=True)
        raise typer.Exit(USAGE_ERROR) from None


STATUS_STYLE = {"ok": "[green]ok[/]", "warn": "[yellow]warn[/]", "fail": "[red]FAIL[/]"}


@app.command()
def doctor(
    json_out: str | None = typer.Option(None, "--json", help="Also write the findings to this JSON file."),
) -> None:
    """Check this machine: Python, OS, CPU, numpy/numba, Numba JIT and cache, MPI, paddlectl packages."""
    with console.status("checking this machine (compiling a Numba kernel twice)..."):
        findings = doctor_module.diagnose()
    table = Table(title="paddlectl doctor")
    for column in ("check", "status", "detail"):
        table.add_column(column)
    for f in findings:
        table.add_row(f.name, STATUS_STYLE[f.status], f.detail)
    console.print(table)
    if json_out:
        from paddlectl.framework.utils.fileio import atomic_write

        with atomic_write(json_out, "w", encoding="utf-8") as handle:
            json.dump([f.__dict__ for f in findings], handle, indent=2)
    broken = [f for f in findings if f.status == "fail"]
    if broken:
        err_console.print(f"[red]broken:[/] {'; '.join(f'{f.name}: {f.detail}' for f in broken)}")
        raise typer.Exit(1)
    console.print("[green]paddlectl works on this machine.[/]")


@app.command("config")
def show_config(
    config: Annotated[str, typer.Option("-c", "--config", help="Experiment YAML file.")],
    override: Annotated[list[str], typer.Option("-o", "--override", help="Key.sub=value, value parsed as YAML.")] = [],  # noqa: B006 - typer copies it
) -> None:
    """Print the resolved experiment config: the file with its -o overrides applied and validated."""
    with usage_errors():
        resolved = load_config(config, override)
    console.print(dump_config(resolved), end="", markup=False, highlight=False)


@app.command("tasks")
def list_tasks() -> None:
    """List the tasks that installed suites provide (entry-point group paddlectl.tasks)."""
    table = Table(title="installed tasks")
    table.add_column("task")
    table.add_column("provided by")
    for name, plugin in sorted(tasks().items()):
        table.add_row(name, plugin.distribution)
    console.print(table)


def _missing_command(name: str, distribution: str):
    def missing() -> None:
        err_console.print(
            f"[red]error:[/] `paddlectl {name}` is provided by {distribution}; {install_hint(distribution)}",
            soft_wrap=True,
        )
        raise typer.Exit(USAGE_ERROR)

    missing.__doc__ = f"(not installed) provided by {distribution}."
    return missing


def _broken_command(name: str, distribution: str, error: Exception):
    def broken() -> None:
        err_console.print(
            f"[red]error:[/] `paddlectl {name}` from {distribution} failed to load: {error}; reinstall {distribution}",
            soft_wrap=True,
        )
        raise typer.Exit(USAGE_ERROR)

    broken.__doc__ = f"(broken install) provided by {distribution}."
    return broken


@functools.cache
def _plugin_command(name: str):
    """The click command of plugin ``name``, loaded now; one that fails to import answers with the error."""
    plugin = commands().get(name)
    if plugin is None:
        return None
    try:
        group = typer.main.get_group(plugin.load())
    except Exception as exc:  # noqa: BLE001 - a broken plugin must not take the whole CLI down
        holder = typer.Typer()
        holder.command(name, context_settings={"allow_extra_args": True, "ignore_unknown_options": True})(
            _broken_command(name, plugin.distribution, exc)
        )
        return typer.main.get_command(holder)
    group.name = name
    return group


def _register_commands() -> None:
    """Commands whose provider is not installed still exist and say what to install."""
    found = commands()
    for name, distribution in COMMAND_PROVIDERS.items():
        if name not in found:
            app.command(name, context_settings={"allow_extra_args": True, "ignore_unknown_options": True})(
                _missing_command(name, distribution)
            )


from .export import export_command  # noqa: E402 - the command modules use usage_errors and the consoles above
from .predict import predict_command  # noqa: E402
from .run import RUN_CONTEXT, run_command  # noqa: E402
from .train import train_command  # noqa: E402

app.command("train")(train_command)
app.command("export")(export_command)
app.command("predict")(predict_command)
app.command("run", context_settings=RUN_CONTEXT)(run_command)
_register_commands()


def main() -> None:
    app()
