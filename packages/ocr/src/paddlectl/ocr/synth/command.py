"""``paddlectl ocr synth``: render a synthetic OCR data set (det pages and rec lines) in PaddleOCR's label
formats. Only the options live here; rendering is imported when the command runs."""

from __future__ import annotations

import enum
from pathlib import Path
from typing import Annotated

import typer

USAGE_ERROR = 2


class Kind(enum.StrEnum):
    lines = "lines"
    pages = "pages"
    both = "both"


KIND_SETS = {Kind.lines: ("rec",), Kind.pages: ("det",), Kind.both: ("rec", "det")}
FONTS_HELP = (
    "Font files, names of faces that come with the dependencies (DejaVuSerif-Bold, STIXGeneralItalic, "
    "Lato-Italic) or 'cjk'; repeat or comma-separate. Default: all 36 of them, matplotlib's DejaVu and "
    "STIX faces and five PyPI font families (the CJK font instead when the charset needs it)."
)
CORPUS_HELP = (
    "UTF-8 text to cut line texts from (your domain's words); without --charset its characters are the "
    "charset. Default: generated words."
)
CHARSET_HELP = (
    "A PaddleOCR dictionary file (one character per line) or a named set: latin (default), digits, "
    "cjk-common; several are merged."
)


def synth_command(
    out: Annotated[
        Path,
        typer.Option(
            "--out", metavar="DIR", help="Folder to write (det/, rec/, synth.json); made whole or not at all."
        ),
    ],
    n: Annotated[int, typer.Option("--n", metavar="N", help="Images of each kind: N line crops and/or N pages.")],
    fonts: Annotated[list[str] | None, typer.Option("--fonts", metavar="FONT", help=FONTS_HELP)] = None,
    val_fonts: Annotated[
        list[str] | None,
        typer.Option(
            "--val-fonts", metavar="FONT", help="Fonts used only for the held-out split (score on unseen faces)."
        ),
    ] = None,
    charset: Annotated[list[str] | None, typer.Option("--charset", metavar="SET|FILE", help=CHARSET_HELP)] = None,
    corpus: Annotated[Path | None, typer.Option("--corpus", metavar="FILE", help=CORPUS_HELP)] = None,
    kind: Annotated[Kind, typer.Option("--kind", help="lines (rec), pages (det) or both.")] = Kind.both,
    seed: Annotated[int, typer.Option("--seed", help="Same seed, same images and labels.")] = 0,
    val_fraction: Annotated[
        float | None,
        typer.Option(
            "--val-fraction", help="Share of each kind held out in val.txt (default: 0.1 with --val-fonts, else 0)."
        ),
    ] = None,
    max_chars: Annotated[
        int, typer.Option("--max-chars", help="Longest line crop text, spaces included (PaddleOCR's max_text_length).")
    ] = 20,
    augment: Annotated[
        bool,
        typer.Option(
            "--augment/--no-augment",
            help="Slant and stroke-width changes of the training line crops (the held-out split stays plain).",
        ),
    ] = True,
    workers: Annotated[
        int | None, typer.Option("--workers", help="Rendering processes (default: the CPUs, at most 8).")
    ] = None,
    overwrite: Annotated[bool, typer.Option("--overwrite", help="Replace a non-empty --out folder.")] = False,
) -> None:
    """Render text lines (recognition) and pages of lines (detection) with several fonts, sizes, colours,
    rotations, perspective, blur, noise and backgrounds, seeded; write PaddleOCR's label files."""
    from paddlectl.framework.errors import PaddlectlError

    from .run import run

    try:
        run(
            out=out,
            n=n,
            fonts=_split(fonts),
            val_fonts=_split(val_fonts),
            charset=charset or [],
            kinds=KIND_SETS[kind],
            seed=seed,
            val_fraction=val_fraction,
            max_chars=max_chars,
            corpus=corpus,
            augment=augment,
            workers=workers,
            overwrite=overwrite,
        )
    except PaddlectlError as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(USAGE_ERROR) from None


def _split(values: list[str] | None) -> list[str]:
    """``--fonts a,b --fonts c`` -> [a, b, c]."""
    return [part.strip() for value in values or [] for part in value.split(",") if part.strip()]
