"""``paddlectl asr AUDIO|DIR... [--model DIR] [--json OUT]``: transcribe recordings with an exported
``speech.asr`` model (the shipped English digits-and-commands model when ``--model`` is not given).

Each file is recognised on its own (batch 1), so its real-time factor (compute seconds per second of
audio, from reading the file to the words decoded) is its own. Every input is read and
recognised before anything is written: a bad file (corrupt, empty, too long, not found) or a model
whose vocabulary does not fit its output stops the run with one line and exit code 2, and no
``--json`` file is left behind.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Annotated

import typer
from rich.markup import escape
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn
from rich.table import Table

from paddlectl.cli.output import console, err_console, usage_errors

AUDIO_SUFFIXES = (".wav", ".flac", ".ogg")

app = typer.Typer(
    name="asr",
    help="Transcribe audio files with a CTC speech recogniser (default: the shipped English digits-and-commands model).",
    invoke_without_command=True,
    no_args_is_help=True,
    add_completion=False,
    rich_markup_mode=None,
    subcommand_metavar="",
    context_settings={"allow_interspersed_args": True},
)


def audio_files(inputs: list[Path]) -> list[Path]:
    """The files named, and the audio files (wav, flac, ogg) directly inside the directories named."""
    from paddlectl.framework.errors import DataError

    files: list[Path] = []
    for path in inputs:
        if path.is_dir():
            found = sorted(p for p in path.iterdir() if p.is_file() and p.suffix.lower() in AUDIO_SUFFIXES)
            if not found:
                raise DataError(f"directory {str(path)!r} holds no {'/'.join(AUDIO_SUFFIXES)} files")
            files += found
        elif path.is_file():
            files.append(path)
        else:
            raise DataError(f"{str(path)!r} does not exist: give audio files or directories holding them")
    return files


class Recogniser:
    """An exported ``speech.asr`` model ready to transcribe one file at a time."""

    def __init__(self, model_dir: Path) -> None:
        from paddlectl.framework.errors import DataError
        from paddlectl.framework.hapi.export import served_task_name
        from paddlectl.framework.inference import Config, Predictor
        from paddlectl.framework.jit.saved_model import read_model_dir

        from .decode import Decoder
        from .task import AsrTask

        saved = read_model_dir(model_dir)
        name = served_task_name(saved)
        if name != AsrTask.name:
            raise DataError(f"{str(model_dir)!r} is a {name} model; `paddlectl asr` needs a speech.asr export")
        self.task, self.pre, post = AsrTask(), saved.meta["preprocess"], saved.meta["postprocess"]
        self.decoder = Decoder(post)
        width = (saved.meta.get("outputs") or [{}])[0].get("shape", [None])[-1]
        if isinstance(width, int) and width != len(self.decoder.classes):
            raise DataError(
                f"{str(model_dir)!r} gives {width} classes per frame but its vocabulary has "
                f"{len(self.decoder.classes)}; export the model again with the vocabulary it was trained with"
            )
        self.predictor = Predictor(Config(str(model_dir)), saved)

    def transcribe(self, raw) -> tuple[str, list[dict]]:
        """``(text, words)`` of a file, or of 16 kHz mono samples."""
        logits = self.predictor.run(self.task.preprocess(self.pre, [raw]))[0]
        return self.decoder(logits[0])

    def __call__(self, path: Path) -> dict:
        """``{input_path, text, words, rtf}``; the real-time factor counts reading the file too."""
        from paddlectl.framework import audio

        start = time.perf_counter()
        text, words = self.transcribe(path)
        elapsed = time.perf_counter() - start
        found = audio.info(path)
        seconds = found.num_samples / found.sample_rate
        return {"input_path": str(path), "text": text, "words": words, "rtf": round(elapsed / seconds, 5)}


def default_model_dir() -> Path:
    """The shipped model: English digits and short commands, trained on espeak-ng voices."""
    return Path(__file__).with_name("default_model")


def _table(records: list[dict]) -> Table:
    table = Table(title="paddlectl asr")
    for column in ("input", "text", "words (start-end s)", "rtf"):
        table.add_column(column)
    for rec in records:
        spans = " ".join(f"{w['word']}({w['start']:.2f}-{w['end']:.2f})" for w in rec["words"])
        table.add_row(escape(rec["input_path"]), escape(rec["text"]), escape(spans), f"{rec['rtf']:.3f}")
    return table


@app.callback()
def asr(
    inputs: Annotated[
        list[Path],
        typer.Argument(help="audio files (wav/flac/ogg, any rate; channels are averaged) or directories of them"),
    ],
    model: Annotated[
        Path | None, typer.Option("--model", help="an exported speech.asr model directory [default: the shipped model]")
    ] = None,
    json_out: Annotated[Path | None, typer.Option("--json", help="write [{input_path, text, words, rtf}] here")] = None,
) -> None:
    """Transcribe AUDIO files (or every audio file in DIR) and show text, word timings and real-time factor."""
    from paddlectl.framework.utils.fileio import atomic_write

    with usage_errors():
        if json_out is not None and json_out.is_dir():
            from paddlectl.framework.errors import DataError

            raise DataError(f"--json {str(json_out)!r} is a directory; give a file path")
        files = audio_files(inputs)
        recogniser = Recogniser(model or default_model_dir())
        records = []
        with Progress(
            TextColumn("asr"),
            BarColumn(),
            MofNCompleteColumn(),
            TimeRemainingColumn(),
            console=err_console,
            transient=True,
        ) as progress:
            bar = progress.add_task("asr", total=len(files))
            for path in files:
                records.append(recogniser(path))
                progress.advance(bar)
    console.print(_table(records))
    if json_out is not None:
        with atomic_write(json_out, "w", encoding="utf-8") as handle:
            json.dump(records, handle, indent=2, ensure_ascii=False)
        console.print(f"wrote {len(records)} transcript(s) to {escape(str(json_out))}")
