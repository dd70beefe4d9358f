"""``paddlectl speech synth --out DIR --n N [--seed S] [--voice V]...``: build the synthetic corpus;
``paddlectl speech average CHECKPOINT... --out FILE.pdparams``: average a run's checkpoints before export.

Exit codes: 0 done, 2 bad input, a missing espeak-ng or flite or checkpoints that do not fit together (one line
naming the fix; nothing written).
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

from paddlectl.cli.output import console, err_console, usage_errors

app = typer.Typer(
    name="speech",
    help="Speech data and weights: build the synthetic espeak-ng/flite corpus, average checkpoints.",
    no_args_is_help=True,
    add_completion=False,
    rich_markup_mode=None,
)


@app.callback()
def _group() -> None:
    """Speech data tools (a group, so `paddlectl speech synth` keeps its name)."""


@app.command("synth")
def synth_command(
    out: Annotated[Path, typer.Option("--out", help="A new (or empty) folder for wavs/, manifest.jsonl, vocab.txt.")],
    n: Annotated[int, typer.Option("--n", min=1, help="Number of utterances.")],
    seed: Annotated[int, typer.Option("--seed", help="Seed of every draw (text, voice, rate, pitch, noise).")] = 0,
    voice: Annotated[
        list[str] | None,
        typer.Option(
            "--voice",
            help="Only this voice: espeak-ng (en-gb, en-gb+f3) or flite (flite:slt); repeat it. Default: all.",
        ),
    ] = None,
) -> None:
    """Speak digit strings and short commands with every English espeak-ng voice and variant and flite's voices."""
    from .synth import synthesize

    with usage_errors():
        with Progress(
            TextColumn("[bold]synth"),
            BarColumn(),
            MofNCompleteColumn(),
            TimeRemainingColumn(),
            console=err_console,
            transient=True,
        ) as bar:
            task = bar.add_task("synth", total=n)
            synthesize(out, n, seed=seed, voices=voice, progress=lambda done: bar.update(task, completed=done))
    console.print(f"wrote {n} utterances to {out} (manifest.jsonl, vocab.txt, corpus.json)", markup=False)


@app.command("average")
def average_command(
    checkpoints: Annotated[list[Path], typer.Argument(help="Checkpoint directories (or .pdparams files) of one run.")],
    out: Annotated[Path, typer.Option("--out", help="The .pdparams file to write (export takes it as --weights).")],
) -> None:
    """Average checkpoints' weights (PaddleSpeech's avg_model.py), e.g. a run's last epochs."""
    from .average import write_average

    with usage_errors():
        write_average(checkpoints, out)
    console.print(f"wrote the mean of {len(checkpoints)} checkpoints to {out}", markup=False)
