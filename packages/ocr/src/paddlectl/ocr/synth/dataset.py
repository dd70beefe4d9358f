"""Render a whole data set in PaddleOCR's layouts, in worker processes, into a temporary folder that is
renamed to OUT only when everything is written.

    OUT/det/images/000000.png   OUT/det/label.txt  (train)  OUT/det/val.txt  (held out)
    OUT/rec/images/000000.png   OUT/rec/label.txt  (train)  OUT/rec/val.txt  (held out)
    OUT/rec/dict.txt            the charset, one character per line
    OUT/synth.json              what was asked for, to regenerate the same set

Label paths are relative to OUT/det or OUT/rec (PaddleOCR's ``data_dir``). Every item is rendered from
its own generator, seeded by (seed, kind, index): the set does not depend on the number of workers.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import multiprocessing
import os
import shutil
import tempfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import cv2
import numpy as np

from paddlectl.framework.errors import ConfigError, DataError

from .charset import dictionary
from .fonts import Font
from .layer import text_layer
from .scene import Palette, Sample, Settings, render_line, render_page

KINDS = {"rec": (1, render_line), "det": (2, render_page)}
"""Each kind's seed stream and renderer."""

BYTES_PER_ITEM = {"rec": 20_000, "det": 850_000}
"""Mean PNG size measured on 20,000 line crops (375 MB) and 300 pages (242 MB)."""


@dataclass
class Plan:
    """What to render: ``n`` items of each kind, the last ``val_fraction`` of them held out (drawn from
    ``val_fonts`` when given, so a model can be scored on faces it never saw)."""

    n: int
    charset: str
    fonts: list[Font]
    val_fonts: list[Font] = field(default_factory=list)
    kinds: tuple[str, ...] = ("rec", "det")
    seed: int = 0
    val_fraction: float = 0.0
    settings: Settings = field(default_factory=Settings)

    @property
    def n_val(self) -> int:
        if self.val_fraction <= 0:
            return 0
        return min(max(1, round(self.n * self.val_fraction)), self.n - 1)

    def settings_for(self, held_out: bool) -> Settings:
        """The held-out split is rendered without the line augmentation: it is scored as fonts draw it."""
        return dataclasses.replace(self.settings, line_slant=0.0, line_stroke=0.0) if held_out else self.settings

    def palettes(self) -> tuple[Palette, Palette]:
        """(train, held-out) fonts with the part of the charset each can draw."""
        train = palette(self.fonts, self.charset)
        return train, (palette(self.val_fonts, self.charset) if self.val_fonts else train)

    def check(self) -> None:
        """Refuse what cannot be rendered, with the option to change."""
        if self.n <= 0:
            raise ConfigError(f"--n must be at least 1, got {self.n}")
        if self.seed < 0:
            raise ConfigError(f"--seed must be a non-negative integer, got {self.seed}")
        if not 0.0 <= self.val_fraction < 1.0:
            raise ConfigError(f"--val-fraction must be in [0, 1), got {self.val_fraction}")
        if not self.kinds or set(self.kinds) - set(KINDS):
            raise ConfigError(f"kinds must be among {', '.join(KINDS)}, got {', '.join(self.kinds) or 'none'}")
        if self.val_fonts and not self.n_val:
            raise ConfigError("held-out fonts need held-out items; pass --val-fraction above 0")
        if not self.fonts:
            raise ConfigError("no fonts to render with; pass --fonts")
        for font, alphabet in {f.path: (f, a) for part in self.palettes() for f, a in part}.values():
            text_layer(alphabet, font.at(16), margin=1)  # a damaged glyph fails here, not an hour in


def palette(fonts: list[Font], charset: str) -> Palette:
    """Each font with the charset's characters it has glyphs for; refused when a font draws none of
    them, or when some character is in no font (a dictionary entry never rendered)."""
    chars = [c for c in charset if c != " "]
    found = []
    for font in fonts:
        alphabet = "".join(c for c in chars if font.covers(c))
        if not alphabet:
            raise DataError(f"font {font.name!r} ({font.path}) has none of the charset's characters; drop it")
        found.append((font, alphabet))
    missing = [c for c in chars if not any(f.covers(c) for f in fonts)]
    if missing:
        shown = "".join(missing[:20])
        raise DataError(
            f"no font given has glyphs for {len(missing)} of the charset's characters ({shown!r}...); "
            "add a font that has them (--fonts cjk for CJK) or remove them from the charset"
        )
    return found


@dataclass
class Result:
    """Counts per (kind, split): images and text lines; where the set was written."""

    out: Path
    images: dict[tuple[str, str], int]
    lines: dict[tuple[str, str], int]


_STATE: dict = {}


def _start_worker(plan: Plan, root: Path) -> None:
    _STATE.update(plan=plan, root=root, palettes=plan.palettes())


def _render_job(job: tuple[str, int]) -> tuple[str, int, str, int]:
    """Render and write one item; returns (kind, index, label line, text lines in it)."""
    kind, index = job
    plan: Plan = _STATE["plan"]
    held_out = index >= plan.n - plan.n_val
    stream, renderer = KINDS[kind]
    sample = renderer(
        np.random.default_rng([plan.seed, stream, index]), _STATE["palettes"][held_out], plan.settings_for(held_out)
    )
    name = f"images/{index:06d}.png"
    ok, png = cv2.imencode(".png", sample.image)
    if not ok:
        raise DataError(f"OpenCV could not encode {kind} image {index} as PNG")
    (_STATE["root"] / kind / name).write_bytes(png.tobytes())
    return kind, index, f"{name}\t{label(kind, sample)}", len(sample.lines)


def label(kind: str, sample: Sample) -> str:
    """The label after the tab: the text (rec), or PaddleOCR's JSON list of transcriptions and integer
    points clipped to the image (det)."""
    if kind == "rec":
        return sample.lines[0][0]
    h, w = sample.image.shape[:2]
    boxes = []
    for text, quad in sample.lines:
        points = np.clip(np.rint(quad), 0, [w - 1, h - 1]).astype(int).tolist()
        boxes.append({"transcription": text, "points": points})
    return json.dumps(boxes, ensure_ascii=False)


def worker_count(workers: int | None) -> int:
    """``workers``, checked; None: the CPUs this process may use, at most 8."""
    if workers is None:
        return max(1, min(len(os.sched_getaffinity(0)), 8))
    if workers < 1:
        raise ConfigError(f"--workers must be at least 1, got {workers}")
    return workers


def generate(
    plan: Plan,
    out: Path,
    overwrite: bool = False,
    workers: int | None = None,
    on_item: Callable[[str], None] = lambda kind: None,
) -> Result:
    """Render ``plan`` into ``out`` (made whole or not at all); ``on_item`` is called once per item."""
    workers = preflight(plan, out, overwrite, workers)
    with _staging(out) as root:
        for kind in plan.kinds:
            (root / kind / "images").mkdir(parents=True)
        labels: dict[tuple[str, str], list[str]] = {(k, s): [] for k in plan.kinds for s in ("train", "val")}
        lines = dict.fromkeys(labels, 0)
        jobs = [(kind, i) for kind in plan.kinds for i in range(plan.n)]
        for kind, index, line, count in _run(plan, root, jobs, workers):
            split = "val" if index >= plan.n - plan.n_val else "train"
            labels[kind, split].append(line)
            lines[kind, split] += count
            on_item(kind)
        for (kind, split), rows in labels.items():
            if rows:
                (root / kind / ("val.txt" if split == "val" else "label.txt")).write_text(
                    "".join(f"{r}\n" for r in rows), encoding="utf-8"
                )
        if "rec" in plan.kinds:
            (root / "rec" / "dict.txt").write_text(dictionary(plan.charset), encoding="utf-8")
        (root / "synth.json").write_text(json.dumps(_manifest(plan), indent=2, ensure_ascii=False), encoding="utf-8")
    return Result(out, {k: len(v) for k, v in labels.items()}, lines)


def _run(plan: Plan, root: Path, jobs: list[tuple[str, int]], workers: int) -> Iterator[tuple[str, int, str, int]]:
    """Jobs in order: in this process for one worker or a handful of jobs, else in forked workers
    (forked, not spawned: the children start with the modules already imported)."""
    if workers == 1 or len(jobs) < 32:
        _start_worker(plan, root)
        try:
            yield from map(_render_job, jobs)
        finally:
            _STATE.clear()
        return
    # One OpenCV thread per worker, the processes are the parallelism. Set in this process before the
    # fork, so no OpenCV pool thread is alive when it forks: a child that resized an inherited pool
    # hung in pthread_cond_destroy (seen in CI).
    threads = cv2.getNumThreads()
    cv2.setNumThreads(1)
    try:
        context = multiprocessing.get_context("fork")
        with context.Pool(workers, initializer=_start_worker, initargs=(plan, root)) as pool:
            yield from pool.imap(_render_job, jobs, chunksize=8)
    finally:
        cv2.setNumThreads(threads)


def _manifest(plan: Plan) -> dict:
    from paddlectl.ocr import __version__

    return {
        "generator": f"paddlectl-ocr {__version__}",
        "seed": plan.seed,
        "n": plan.n,
        "kinds": list(plan.kinds),
        "val_fraction": plan.val_fraction,
        "val_items": plan.n_val,
        "fonts": [str(f.path) for f in plan.fonts],
        "val_fonts": [str(f.path) for f in plan.val_fonts],
        "charset_size": len(dictionary(plan.charset).splitlines()),
        "corpus_lines": len(plan.settings.corpus),
        "line_slant": plan.settings.line_slant,
        "line_stroke": plan.settings.line_stroke,
    }


def preflight(plan: Plan, out: Path, overwrite: bool, workers: int | None) -> int:
    """Every refusal that needs no rendering, before any is done; the number of workers to use."""
    plan.check()
    check_out(out, overwrite)
    check_space(plan, out)
    return worker_count(workers)


def check_space(plan: Plan, out: Path) -> None:
    """Refuse a set that would not fit on the disk, from the measured mean size of each kind's image."""
    need = plan.n * sum(BYTES_PER_ITEM[kind] for kind in plan.kinds)
    existing = next((p for p in out.expanduser().absolute().parents if p.exists()), Path("/"))
    free = shutil.disk_usage(existing).free
    if need > free:
        raise DataError(
            f"{plan.n} items need about {need / 1e9:.1f} GB and {existing} has {free / 1e9:.1f} GB free; "
            "pass a smaller --n or another --out"
        )


def check_out(out: Path, overwrite: bool) -> None:
    """Refuse a file, or a non-empty folder unless ``overwrite``: before any work is done."""
    out = out.expanduser().absolute()
    if out.exists() and not out.is_dir():
        raise DataError(f"output {str(out)!r} is a file; pass a folder path")
    if out.is_dir() and any(out.iterdir()) and not overwrite:
        raise DataError(f"output folder {str(out)!r} is not empty; pass --overwrite to replace it, or another --out")


@contextlib.contextmanager
def _staging(out: Path) -> Iterator[Path]:
    """A fresh folder beside ``out``; on success it replaces ``out``, on any error it is removed."""
    out = out.expanduser().absolute()
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
        root = Path(tempfile.mkdtemp(prefix=f".{out.name}.", suffix=".partial", dir=out.parent))
    except OSError as exc:
        raise DataError(f"cannot write next to {str(out)!r} ({exc.strerror or exc}); pass a writable --out") from None
    try:
        yield root
        _replace(root, out)
    except OSError as exc:
        raise DataError(f"writing {str(out)!r} failed ({exc}); nothing was left behind") from None
    finally:
        shutil.rmtree(root, ignore_errors=True)


def _replace(root: Path, out: Path) -> None:
    """Swap the finished folder in: the old ``out`` (if any) is renamed aside first and removed last."""
    if not out.exists():
        root.rename(out)
        return
    old = Path(tempfile.mkdtemp(prefix=f".{out.name}.", suffix=".old", dir=out.parent))
    out.rename(old / "set")
    root.rename(out)
    shutil.rmtree(old, ignore_errors=True)
