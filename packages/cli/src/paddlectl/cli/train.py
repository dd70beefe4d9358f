"""``paddlectl train -c CFG [-o Key=value ...] [--resume DIR]``: the task named in ``Global.task`` trained by
the framework's Trainer (checkpoints, metrics.jsonl, loss_curve.png in ``Global.output_dir``).

Exit codes: 0 trained, 2 bad input (config, task, checkpoint, data: one line on stderr, nothing
written), 130 stopped by Ctrl-C after writing ``latest/`` (the message says how to resume). A
second Ctrl-C stops at once, without a new checkpoint: the message then names the last one written
(or says that none was).
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from .output import console, escape, print_error, usage_errors
from .plugins import load_task

INTERRUPTED = 130


def resolve_config(config: str | None, overrides: list[str], resume: str | None) -> dict:
    """The experiment config: ``-c`` if given, else the one saved in the checkpoint being resumed."""
    from paddlectl.framework.config import load_config
    from paddlectl.framework.errors import ConfigError

    if config is None:
        if resume is None:
            raise ConfigError("no config given; pass -c CONFIG.yml (or --resume DIR to continue a run)")
        from paddlectl.framework.hapi.checkpoint_dir import CONFIG_FILE, locate

        config = str(locate(resume) / CONFIG_FILE)
    return load_config(config, overrides)


def task_for(config: dict):
    """The Task object that ``Global.task`` names, through the ``paddlectl.tasks`` entry points."""
    from paddlectl.framework.errors import ConfigError

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
    nproc: Annotated[
        int, typer.Option("--nproc", help="Train data-parallel on N ranks over mpiexec (rank 0 writes the run).")
    ] = 1,
) -> None:
    """Train the task named in Global.task; Ctrl-C stops after the current step with a checkpoint."""
    from paddlectl.framework.hapi.trainer import Trainer
    from paddlectl.framework.io.world import env_rank

    if nproc != 1:
        with usage_errors():  # a config that cannot load fails here once, not on every rank
            task_for(resolve_config(config, override, resume))
        _launch(nproc, config, override, resume, quiet)
    with usage_errors():
        resolved = resolve_config(config, override, resume)
        task = task_for(resolved)
        lead = env_rank() == 0  # one rank of `--nproc N` speaks for the run: the others print nothing
        trainer = Trainer(task, resolved, console=console if lead else None, progress=lead and not quiet)
        try:
            result = trainer.train(resume)
        except KeyboardInterrupt:
            _aborted(trainer)
    if trainer.share.rank:  # one rank of `--nproc N`: rank 0 reports the run
        return
    out = Path(result.output_dir)
    if result.interrupted:
        console.print(
            f"[yellow]interrupted[/] at epoch {result.epochs_done + 1}, step {result.global_step}; "
            f"checkpoint: {escape(str(out / 'latest'))}\n{_resume_hint(out / 'latest')}",
            highlight=False,
        )
        raise typer.Exit(INTERRUPTED)
    if result.best is not None:
        console.print(
            f"best {result.best['indicator']} = {result.best['value']:.4f} (epoch {result.best['epoch']}): "
            f"{out / 'best'}",
            highlight=False,
            markup=False,
        )
    console.print(
        f"metrics: {out / 'metrics.jsonl'}  loss curve: {out / 'loss_curve.png'}", highlight=False, markup=False
    )


def _launch(nproc: int, config: str | None, overrides: list[str], resume: str | None, quiet: bool) -> None:
    """This same command on ``nproc`` ranks (paddlectl launch): each trains on its rows of every batch;
    rank 0's progress comes through the launcher's pipe, so it shows each epoch's bar when the epoch ends."""
    from paddlectl.framework.distributed import launch

    argv = ["-m", "paddlectl.cli", "train"] + (["--quiet"] if quiet else [])
    argv += ["-c", config] if config is not None else []
    argv += [a for o in overrides for a in ("-o", o)] + (["--resume", resume] if resume is not None else [])
    with usage_errors():
        outcome = launch.run(argv, nproc, echo=lambda line: console.print(line, markup=False, highlight=False))
    for failure in outcome.failures:
        print_error(failure)
    raise typer.Exit(outcome.code)


def _resume_hint(checkpoint: Path) -> str:
    return f"resume with: paddlectl train --resume {escape(str(checkpoint))}"


def _aborted(trainer) -> None:
    """Ctrl-C stopped the run at once (a second one mid-step, or one outside the training loop):
    point at the last checkpoint written, if any, and exit 130."""
    output_dir = getattr(trainer, "output_dir", None)  # set once the trainer has read the config
    latest = Path(output_dir) / "latest" if output_dir is not None else None
    if latest is not None and latest.is_dir():
        message = (
            "[yellow]stopped at once[/] by Ctrl-C; steps after the last checkpoint are lost; "
            f"checkpoint: {escape(str(latest))}\n{_resume_hint(latest)}"
        )
    else:
        message = "[yellow]stopped at once[/] by Ctrl-C before the first checkpoint; nothing to resume"
    console.print(message, highlight=False)
    raise typer.Exit(INTERRUPTED)
