"""Every command of the root group, known without importing it.

``paddlectl --help`` lists each command with one line of help, and ``paddlectl --version`` runs no
command at all, so neither may import the framework (Numba) or a plugin (the eval harness pulls in
MLflow): built-in commands are named here with their one-line help, plugin commands come from the
``paddlectl.commands`` entry points with their distribution's summary as help. A command's module
is imported when that command runs (or prints its own help).
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass

import typer
import typer.main
from typer.core import TyperCommand

from .output import USAGE_ERROR, err_console, escape
from .plugins import COMMAND_PROVIDERS, Plugin, commands, install_hint


@dataclass(frozen=True)
class Builtin:
    """A command of this package: ``module:function``, its one-line help (the first line of the
    function's docstring, checked by a test) and, by name, the module's context settings or
    command class when it needs them."""

    module: str
    function: str
    help: str
    context: str | None = None
    command_class: str | None = None


BUILTINS = {
    "ckpt": Builtin(
        "paddlectl.cli.ckpt",
        "ckpt_command",
        "Merge a distributed checkpoint's shards into one ordinary safetensors file.",
    ),
    "config": Builtin(
        "paddlectl.cli.show",
        "show_config",
        "Print the resolved experiment config: the file with its -o overrides applied and validated.",
    ),
    "doctor": Builtin(
        "paddlectl.cli.doctor",
        "doctor_command",
        "Check this machine: Python, OS, CPU, numpy/numba, Numba JIT and cache, MPI, paddlectl packages.",
    ),
    "export": Builtin(
        "paddlectl.cli.export",
        "export_command",
        "Export trained weights as an inference model that `paddlectl predict` runs without a config.",
    ),
    "launch": Builtin(
        "paddlectl.cli.launch",
        "launch_command",
        "Run a script on N ranks over mpiexec; a failing rank stops the job and is named.",
        context="LAUNCH_CONTEXT",
    ),
    "predict": Builtin(
        "paddlectl.cli.predict",
        "predict_command",
        "Predict with an exported model (a directory or .onnx file); it brings its own pre/post-processing.",
        command_class="SpreadInputsCommand",
    ),
    "run": Builtin(
        "paddlectl.cli.run",
        "run_command",
        "Run a PaddlePaddle script unmodified on paddlectl (`import paddle` is paddlectl), or --check it.",
        context="RUN_CONTEXT",
    ),
    "tasks": Builtin(
        "paddlectl.cli.show",
        "list_tasks",
        "List the tasks that installed suites provide (entry-point group paddlectl.tasks).",
    ),
    "train": Builtin(
        "paddlectl.cli.train",
        "train_command",
        "Train the task named in Global.task; Ctrl-C stops after the current step with a checkpoint.",
    ),
}

PASSTHROUGH = {"allow_extra_args": True, "ignore_unknown_options": True}


class LazyCommand(TyperCommand):
    """A command as the root help lists it (name and one line); ``load`` builds the real one when it
    is run, and the real command parses the arguments and runs."""

    def __init__(self, name: str, short_help: str, load: Callable[[], object]) -> None:
        super().__init__(name, short_help=short_help, help=short_help)
        self._load = load

    def make_context(self, info_name, args, parent=None, **extra):
        return self._load().make_context(info_name, args, parent=parent, **extra)


def _single_command(name: str, function, **settings):
    holder = typer.Typer()
    holder.command(name, **settings)(function)
    return typer.main.get_command(holder)


def _unusable(name: str, why: str):
    """A command that only says why it cannot run and exits 2: its provider is missing or broken."""

    def unusable() -> None:
        err_console.print(f"[red]error:[/] `paddlectl {escape(name)}` {escape(why)}", soft_wrap=True)
        raise typer.Exit(USAGE_ERROR)

    return _single_command(name, unusable, context_settings=PASSTHROUGH)


def load_builtin(name: str, spec: Builtin):
    """The click command of built-in ``name``, its module imported now."""
    try:
        module = importlib.import_module(spec.module)
        function = getattr(module, spec.function)
    except Exception as exc:  # noqa: BLE001 - one broken module must not take the whole CLI down
        return _unusable(name, f"failed to load: {exc}; reinstall paddlectl")
    settings = {}
    if spec.context:
        settings["context_settings"] = getattr(module, spec.context)
    if spec.command_class:
        settings["cls"] = getattr(module, spec.command_class)
    return _single_command(name, function, **settings)


def load_plugin(name: str, plugin: Plugin):
    """The click group of plugin ``name``, its entry point loaded now."""
    try:
        group = typer.main.get_group(plugin.load())
    except Exception as exc:  # noqa: BLE001 - a broken plugin must not take the whole CLI down
        why = f"from {plugin.distribution} failed to load: {exc}; reinstall {plugin.distribution}"
        return _unusable(name, why)
    group.name = name
    return group


def _summary(plugin: Plugin) -> str:
    """The plugin distribution's one-line summary, as help text (the root help is plain text)."""
    dist = plugin.entry_point.dist
    summary = dist.metadata["Summary"] if dist is not None else None
    return summary or f"provided by {plugin.distribution}."


def root_commands() -> dict[str, LazyCommand]:
    """Every command, by name, sorted: known plugins that are not installed (they say what to
    install), installed plugins, and the built-ins, which no plugin can replace."""
    found: dict[str, LazyCommand] = {}
    for name, distribution in COMMAND_PROVIDERS.items():
        why = f"is provided by {distribution}; {install_hint(distribution)}"
        found[name] = LazyCommand(
            name, f"(not installed) provided by {distribution}.", lambda name=name, why=why: _unusable(name, why)
        )
    for name, plugin in commands().items():
        found[name] = LazyCommand(name, _summary(plugin), lambda name=name, plugin=plugin: load_plugin(name, plugin))
    for name, spec in BUILTINS.items():
        found[name] = LazyCommand(name, spec.help, lambda name=name, spec=spec: load_builtin(name, spec))
    return dict(sorted(found.items()))
