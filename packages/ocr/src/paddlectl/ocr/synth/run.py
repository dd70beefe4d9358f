"""What ``paddlectl ocr synth`` does with its options: resolve fonts and charset, render with a progress
bar, print a summary table."""

from __future__ import annotations

import dataclasses
import time
from pathlib import Path

from rich.console import Console
from rich.markup import escape
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn, TimeRemainingColumn
from rich.table import Table

from paddlectl.framework.errors import ConfigError, DataError

from . import charset as charsets
from . import fonts as fontlib
from .corpus import characters, read_corpus
from .dataset import Plan, Result, generate, preflight
from .scene import Settings

MAX_CHARS_LIMIT = 200
DEFAULT_VAL_FRACTION = 0.1
LINE_SLANT = 0.3
"""``--augment``'s shear range for training line crops: DejaVu's italics lean about 0.2."""
LINE_STROKE = 0.03
"""``--augment``'s stroke change per side, x the font size: about the gap between DejaVu's Book and Bold."""


def default_fonts(
    chars: str, held_out: list[fontlib.Font], names: tuple[str, ...] = fontlib.TEXT_FACES
) -> list[fontlib.Font]:
    """The bundled faces (``names``) not held out; for a charset they mostly lack (CJK), the installed
    CJK font instead (its absence is a MissingFontError that says how to install one)."""
    held = {f.path.resolve() for f in held_out}
    faces = [f for f in map(fontlib.resolve, names) if f.path.resolve() not in held]
    needed = [c for c in chars if c != " "]
    covered = sum(any(f.covers(c) for f in faces) for c in needed)
    if covered == len(needed):
        return faces
    cjk = fontlib.resolve("cjk")
    return [cjk] if covered < len(needed) / 2 else [*faces, cjk]


def make_plan(
    n: int,
    fonts: list[str],
    val_fonts: list[str],
    charset: list[str],
    kinds: tuple[str, ...],
    seed: int,
    val_fraction: float | None,
    max_chars: int,
    corpus: Path | None = None,
    augment: bool = False,
) -> Plan:
    """A checked Plan from the command's options (fonts as paths or names, charset as names or files;
    no ``val_fraction``: 10% held out when there are held-out fonts, else none; a corpus and no
    charset: the corpus's characters are the charset; ``augment``: training line crops slanted and
    their strokes thickened or thinned)."""
    if not 1 <= max_chars <= MAX_CHARS_LIMIT:
        raise ConfigError(f"--max-chars must be in [1, {MAX_CHARS_LIMIT}], got {max_chars}")
    lines = read_corpus(corpus) if corpus is not None else ()
    chars = charsets.resolve(charset) if charset or not lines else charsets.checked(characters(lines))
    outside = set(characters(lines)) - set(chars)
    if outside:
        shown = "".join(sorted(outside)[:20])
        raise DataError(
            f"the corpus uses {len(outside)} characters outside the charset ({shown!r}); "
            "add them to --charset, or drop --charset to take the corpus's own"
        )
    held_out = [fontlib.resolve(f) for f in val_fonts]
    chosen = [fontlib.resolve(f) for f in fonts] if fonts else default_fonts(chars, held_out)
    both = {f.path.resolve() for f in chosen} & {f.path.resolve() for f in held_out}
    if both:
        raise ConfigError(
            f"{', '.join(sorted(p.name for p in both))} is in both --fonts and --val-fonts; held-out fonts must be unseen"
        )
    settings = dataclasses.replace(
        Settings(),
        line_chars=(min(2, max_chars), max_chars),
        corpus=lines,
        line_slant=LINE_SLANT if augment else 0.0,
        line_stroke=LINE_STROKE if augment else 0.0,
    )
    if val_fraction is None:
        val_fraction = DEFAULT_VAL_FRACTION if held_out else 0.0
    plan = Plan(n, chars, chosen, held_out, kinds, seed, val_fraction, settings)
    plan.check()
    return plan


def run(out: Path, workers: int | None, overwrite: bool, **options) -> Result:
    """Render with a progress bar on stderr, then print the summary table on stdout."""
    plan = make_plan(**options)
    workers = preflight(plan, out, overwrite, workers)
    console, progress_console = Console(), Console(stderr=True)
    started = time.perf_counter()
    with Progress(
        TextColumn("rendering"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        TimeRemainingColumn(),
        console=progress_console,
    ) as progress:
        task = progress.add_task("synth", total=plan.n * len(plan.kinds))
        result = generate(plan, out, overwrite, workers, on_item=lambda _kind: progress.advance(task))
    console.print(summary(plan, result, time.perf_counter() - started))
    return result


def summary(plan: Plan, result: Result, seconds: float) -> Table:
    """Images and text lines per kind and split, with the label file each went to."""
    table = Table(title=f"synthetic OCR data in {escape(str(result.out))} ({seconds:.1f} s)")
    for column in ("kind", "split", "images", "text lines", "labels"):
        table.add_column(column, justify="right" if column in ("images", "text lines") else "left")
    for (kind, split), images in result.images.items():
        if images:
            labels = f"{kind}/{'val.txt' if split == 'val' else 'label.txt'}"
            table.add_row(kind, split, str(images), str(result.lines[kind, split]), labels)
    faces = ", ".join(f.name for f in plan.fonts)
    held = ", ".join(f.name for f in plan.val_fonts) or "same as train"
    table.caption = escape(
        f"charset: {len(charsets.dictionary(plan.charset).splitlines())} characters; fonts: {faces}; held-out fonts: {held}"
    )
    return table
