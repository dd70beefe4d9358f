"""``paddlectl launch --nproc N [--hosts h1,h2] script.py [ARGS...]``: N ranks of a script under mpiexec.

Exit codes: 0 every rank finished, 1 a rank failed or died (the job is stopped at once; the rank
and its error are named), 2 bad arguments or a rank's input error (a typed paddlectl error such
as ranks passing different shapes to a collective).
"""

from __future__ import annotations

from typing import Annotated

import typer

from .output import console, print_error, usage_errors

LAUNCH_CONTEXT = {"allow_extra_args": True, "ignore_unknown_options": True, "allow_interspersed_args": False}


def launch_command(
    ctx: typer.Context,
    script: Annotated[str, typer.Argument(help="The training script; every argument after it is passed to it.")],
    nproc: Annotated[int, typer.Option("--nproc", help="Number of processes (ranks).")] = 1,
    hosts: Annotated[
        str | None, typer.Option("--hosts", help="Comma-separated hosts to spread the ranks over (mpiexec -hosts).")
    ] = None,
) -> None:
    """Run a script on N ranks over mpiexec; a failing rank stops the job and is named."""
    from paddlectl.framework.distributed import launch

    with usage_errors():
        host_list = hosts.split(",") if hosts is not None else None
        outcome = launch.run(
            [script, *ctx.args],
            nproc,
            host_list,
            echo=lambda line: console.print(line, markup=False, highlight=False, soft_wrap=True),
        )
    for failure in outcome.failures:
        print_error(failure)
    raise typer.Exit(outcome.code)
