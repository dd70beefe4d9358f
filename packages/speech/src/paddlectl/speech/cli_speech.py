"""``paddlectl speech synth --out DIR --n N [--seed S] [--voice V]...``: build the synthetic corpus.

Exit codes: 0 done, 2 bad input or a missing espeak-ng (one line naming the fix; nothing written).
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

from paddlectl.cli.output import console, err_console, usage_errors

app = typer.Typer(
    name="speech",
    help="Speech data: build the synthetic espeak-ng corpus (manifest.jsonl + vocab.txt).",
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
        typer.Option("--voice", help="Only this espeak-ng voice (en-gb, or en-gb+f3); repeat it. Default: all."),
    ] = None,
) -> None:
    """Speak digit strings and short commands with every English espeak-ng voice and variant."""
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
