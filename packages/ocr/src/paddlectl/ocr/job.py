"""One ``paddlectl ocr`` run over many sources, with every output written all at once or not at all.

The JSON list and the review file are written atomically (a temporary file renamed into place), and
the ``--vis`` pictures are rendered into a temporary folder and moved into the target only when
every source succeeded: a run stopped by a bad file or Ctrl-C leaves the previous outputs as they were.
"""

from __future__ import annotations

import contextlib
import json
import shutil
import tempfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from paddlectl.framework.errors import DataError
from paddlectl.framework.utils.fileio import atomic_write, unique_stem

from . import vis
from .pipeline import TextSystem
from .records import record, review_entries
from .sources import Source

REVIEW_FILE = "review.jsonl"


@dataclass(frozen=True)
class Outputs:
    json: Path | None = None
    vis: Path | None = None
    review: Path | None = None
    min_score: float = 0.0

    def check(self) -> None:
        """Refuse targets that cannot be written before any work is done."""
        if self.json is not None and self.json.is_dir():
            raise DataError(f"--json {str(self.json)!r} is a directory; give a file name such as out.json")
        for flag, folder in (("--vis", self.vis), ("--review", self.review)):
            if folder is not None and folder.exists() and not folder.is_dir():
                raise DataError(f"{flag} {str(folder)!r} is a file; give a directory")


def vis_name(source: Source, used: set[str]) -> str:
    """``name.png`` for an image, ``name_page3.png`` for a PDF page; ``_2``, ``_3`` ... when two
    inputs share a name."""
    stem = source.path.stem if source.page_index is None else f"{source.path.stem}_page{source.page_index}"
    return f"{unique_stem(stem, used)}.png"


@contextlib.contextmanager
def _staged(target: Path | None) -> Iterator[Path | None]:
    """A temporary folder whose files move into ``target`` (created then) when the block succeeds."""
    if target is None:
        yield None
        return
    stage = Path(tempfile.mkdtemp(prefix="paddlectl-ocr-vis-"))
    try:
        yield stage
        target.mkdir(parents=True, exist_ok=True)
        for file in sorted(stage.iterdir()):
            shutil.move(file, target / file.name)
    finally:
        shutil.rmtree(stage, ignore_errors=True)


def _write_json(path: Path, payload, lines: bool = False) -> None:
    try:
        with atomic_write(path, "w", encoding="utf-8") as out:
            if lines:
                out.writelines(json.dumps(item, ensure_ascii=False) + "\n" for item in payload)
            else:  # one record per line: readable, and a diff shows which image changed
                out.write("[\n" + ",\n".join(json.dumps(item, ensure_ascii=False) for item in payload) + "\n]\n")
    except OSError as exc:
        raise DataError(f"cannot write {str(path)!r}: {exc.strerror or exc}") from None


def run(
    system: TextSystem, sources: list[Source], outputs: Outputs, advance: Callable[[Source], None] | None = None
) -> tuple[list[dict], list[dict]]:
    """(one record per source, the lines for review); ``advance`` is called after each source."""
    outputs.check()
    records, review, used = [], [], set()
    with _staged(outputs.vis) as stage:

        def read(chain: TextSystem, source: Source) -> tuple:
            image = source.load()
            rec = record(source, chain.run(np.ascontiguousarray(image[..., ::-1])))  # PaddleOCR's models take BGR
            return source, rec, image if stage is not None else None

        for source, rec, image in system.map(read, sources):  # several images at a time, in order
            records.append(rec)
            if image is not None:
                (stage / vis_name(source, used)).write_bytes(vis.render(image, rec))
            if outputs.review is not None:
                review += review_entries(rec, outputs.min_score)
            if advance is not None:
                advance(source)
        if outputs.json is not None:
            _write_json(outputs.json, records)
        if outputs.review is not None:
            _write_json(outputs.review / REVIEW_FILE, review, lines=True)
    return records, review
