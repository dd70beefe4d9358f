"""``paddlectl train -c CFG [-o Key=value ...] [--resume DIR]``: the task named in ``Global.task`` trained by
the framework's Trainer (checkpoints, metrics.jsonl, loss_curve.png in ``Global.output_dir``).

Exit codes: 0 trained, 2 bad input (config, task, checkpoint, data: one line on stderr, nothing
written), 130 stopped by Ctrl-C after writing ``latest/`` (the message says how to resume).
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from paddlectl.framework.config import load_config
from paddlectl.framework.errors import ConfigError

from .plugins import load_task

INTERRUPTED = 130


def resolve_config(config: str | None, overrides: list[str], resume: str | None) -> dict:
    """The experiment config: ``-c`` if given, else the one saved in the checkpoint being resumed."""
    if config is None:
        if resume is None:
            raise ConfigError("no config given; pass -c CONFIG.yml (or --resume DIR to continue a run)")
        from paddlectl.framework.hapi.checkpoint_dir import CONFIG_FILE, locate

        config = str(locate(resume) / CONFIG_FILE)
    return load_config(config, overrides)


def task_for(config: dict):
    """The Task object that ``Global.task`` names, through the ``paddlectl.tasks`` entry points."""
    name = (config.get("Global") or {}).get("task")
    if not name:
        raise ConfigError("Global.task is not set; name the task, e.g. Global.task: vision.cls (see `paddlectl tasks`)")
    task = load_task(name)
    return task() if isinstance(task, type) else task


def train_command(
    config: Annotated[str | None, typer.Option("-c", "--config", help="Experiment YAML file.")] = None,
    override: Annotated[list[str], typer.Option("-o", "--override", help="Key.sub=value, value parsed as YAML.")] = [],  # noqa: B006 - typer copies it
    resume: Annotated[
        str | None, typer.Option("--resume", help="Checkpoint directory (or a run's output dir) to continue from.")
    ] = None,
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="No progress bar.")] = False,
) -> None:
    """Train the task named in Global.task; Ctrl-C stops after the current step with a checkpoint."""
    from paddlectl.framework.hapi.trainer import Trainer

    from .app import console, usage_errors

    with usage_errors():
        resolved = resolve_config(config, override, resume)
        task = task_for(resolved)
        result = Trainer(task, resolved, console=console, progress=not quiet).train(resume)
    out = Path(result.output_dir)
    if result.interrupted:
        console.print(
            f"[yellow]interrupted[/] at epoch {result.epochs_done + 1}, step {result.global_step}; "
            f"checkpoint: {out / 'latest'}\nresume with: paddlectl train --resume {out / 'latest'}",
            highlight=False,
        )
        raise typer.Exit(INTERRUPTED)
    if result.best is not None:
        console.print(
            f"best {result.best['indicator']} = {result.best['value']:.4f} (epoch {result.best['epoch']}): "
            f"{out / 'best'}",
            highlight=False,
        )
    console.print(f"metrics: {out / 'metrics.jsonl'}  loss curve: {out / 'loss_curve.png'}", highlight=False)
