"""``paddlectl ocr IMAGE|DIR|PDF... [--models NAME|DIR] [--json OUT] [--vis DIR] [--min-score S] [--review DIR]``
and ``paddlectl ocr synth ...``: a typer group whose first argument, when it is not a sub-command's
name, starts the ``run`` command, so both command lines work as written.

Exit codes: 0 done, 2 bad input (a path, an image, a PDF, a model set, a dictionary; nothing written).
"""

from __future__ import annotations

import contextlib
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.markup import escape
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn
from rich.table import Table
from typer.core import TyperGroup

from .synth.command import synth_command

USAGE_ERROR = 2
RUN = "run"

console = Console()
err_console = Console(stderr=True)


class _InputsFirstGroup(TyperGroup):
    """``paddlectl ocr a.png`` means ``paddlectl ocr run a.png``: arguments that do not start with a
    sub-command's name (or ask for help) go to ``run``. ``--help`` lists the sub-commands and the
    options of ``run``."""

    def parse_args(self, ctx, args: list[str]) -> list[str]:
        if args and args[0] not in self.commands and args[0] not in ctx.help_option_names:
            args = [RUN, *args]
        return super().parse_args(ctx, args)

    def format_help(self, ctx, formatter) -> None:
        super().format_help(ctx, formatter)
        run = self.commands[RUN]
        with formatter.section(f"Options of `paddlectl ocr IMAGE|DIR|PDF...` (= `paddlectl ocr {RUN}`)"):
            formatter.write_dl([p.get_help_record(ctx) for p in run.get_params(ctx) if p.get_help_record(ctx)])


app = typer.Typer(
    name="ocr",
    cls=_InputsFirstGroup,
    help="OCR images and PDFs with PP-OCR models (det -> crop -> cls -> rec), or render training data.",
    subcommand_metavar="IMAGE|DIR|PDF... | COMMAND [ARGS]...",
    no_args_is_help=True,
    add_completion=False,
    rich_markup_mode=None,
)


app.command("synth")(synth_command)


@contextlib.contextmanager
def _usage_errors():
    """A user's mistake (a typed error) as one line and exit code 2."""
    from paddlectl.framework.errors import PaddlectlError

    try:
        yield
    except PaddlectlError as exc:
        err_console.print(f"error: {' '.join(str(exc).split())}", markup=False, highlight=False, soft_wrap=True)
        raise typer.Exit(USAGE_ERROR) from None


def _table(records: list[dict], min_score: float | None) -> Table:
    table = Table(title="paddlectl ocr")
    for column in ("input", "page", "line", "text", "score"):
        table.add_column(column)
    for rec in records:
        page = "" if rec["page_index"] is None else str(rec["page_index"])
        for i, (text, score) in enumerate(zip(rec["rec_texts"], rec["rec_scores"], strict=True)):
            flagged = min_score is not None and score < min_score
            table.add_row(
                escape(rec["input_path"]),
                page,
                str(i),
                escape(text),
                f"[red]{score:.3f}[/]" if flagged else f"{score:.3f}",
            )
    return table


@app.command(RUN)
def run_command(
    inputs: Annotated[
        list[str], typer.Argument(help="Image files, PDFs, or directories (every image and PDF inside).")
    ],
    models: Annotated[
        str,
        typer.Option(
            "--models",
            help="pp-ocrv4, pp-ocrv5, pp-ocrv6 (small), pp-ocrv6-tiny, or a directory of `paddlectl export` models.",
        ),
    ] = "pp-ocrv6",
    json_out: Annotated[
        Path | None, typer.Option("--json", help="Write one PaddleOCR 3.x-style record per image or PDF page here.")
    ] = None,
    vis_dir: Annotated[
        Path | None, typer.Option("--vis", help="Write a PNG per image or page: boxes, and the text beside them.")
    ] = None,
    min_score: Annotated[
        float | None, typer.Option("--min-score", min=0.0, max=1.0, help="Lines scoring under this go to --review.")
    ] = None,
    review_dir: Annotated[
        Path | None,
        typer.Option("--review", help="Write review.jsonl here: each line under --min-score, its box and source."),
    ] = None,
    workers: Annotated[
        int,
        typer.Option(
            "--workers", min=0, help="Images read at a time, each on one thread (0: one per physical core, at most 4)."
        ),
    ] = 0,
) -> None:
    """OCR images and PDF pages: det -> crop -> cls -> rec; a table, and JSON / pictures / a review file."""
    if (min_score is None) != (review_dir is None):
        err_console.print("error: --min-score and --review go together: lines under S go to DIR", markup=False)
        raise typer.Exit(USAGE_ERROR)
    from . import job
    from .models import model_set
    from .sources import collect

    with _usage_errors():
        outputs = job.Outputs(json_out, vis_dir, review_dir, min_score or 0.0)
        outputs.check()
        chosen = model_set(models)
        sources = collect(inputs)
        if vis_dir is not None:
            from .vis import font_path

            warning = font_path()[1]
            if warning:
                err_console.print(f"warning: {warning}", markup=False, highlight=False, soft_wrap=True)
        system = chosen.load(workers=workers)
        columns = (TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeRemainingColumn())
        with Progress(*columns, console=err_console, transient=True, disable=not err_console.is_terminal) as progress:
            task = progress.add_task("ocr", total=len(sources))
            records, review = job.run(system, sources, outputs, lambda s: progress.advance(task))
    console.print(_table(records, min_score))
    for flag, path in (("json", json_out), ("vis", vis_dir)):
        if path is not None:
            err_console.print(f"wrote {flag}: {path}", markup=False, highlight=False)
    if review_dir is not None:
        err_console.print(
            f"{len(review)} line(s) under {min_score} for review: {review_dir / job.REVIEW_FILE}", markup=False
        )
