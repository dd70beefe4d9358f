"""``paddlectl det``: the detection suite's commands (a plugin typer app of paddlectl-cli).

``paddlectl det predict --models layout-cdla IMAGE... [--json OUT] [--vis DIR]`` runs a detector
over images and prints what it found; ``--json`` writes PaddleX's detection records (boxes in the
original image's pixels), written once every image is done. Exit codes: 0 done, 2 bad input (an
image, a model name, a target: paths are checked before the model loads).
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn
from rich.table import Table

from paddlectl.cli.output import USAGE_ERROR, console, err_console, escape, print_error, usage_errors

MODELS = ("layout-cdla",)

app = typer.Typer(
    name="det",
    help="Object and document-layout detection: run a detector over images.",
    no_args_is_help=True,
    add_completion=False,
    rich_markup_mode=None,
)


@app.callback()
def _group() -> None:
    """Keeps ``paddlectl det`` a group of named sub-commands (typer runs a lone command without its name)."""


def _table(records: list[dict]) -> Table:
    table = Table(title="paddlectl det predict")
    for column in ("input", "label", "score", "x1, y1, x2, y2"):
        table.add_column(column)
    for rec in records:
        for box in rec["boxes"]:
            corners = ", ".join(f"{v:.1f}" for v in box["coordinate"])
            table.add_row(escape(rec["input_path"]), escape(box["label"]), f"{box['score']:.3f}", corners)
    return table


def _check_targets(json_out: Path | None, vis_dir: Path | None) -> None:
    from paddlectl.framework.errors import DataError

    if json_out is not None and json_out.is_dir():
        raise DataError(f"--json {str(json_out)!r} is a directory; give a file name such as out.json")
    if vis_dir is not None and vis_dir.exists() and not vis_dir.is_dir():
        raise DataError(f"--vis {str(vis_dir)!r} is a file; give a directory")


@app.command("predict")
def predict_command(
    images: Annotated[list[Path], typer.Argument(help="Image files (PNG, JPEG, BMP...).")],
    models: Annotated[str, typer.Option("--models", help=f"The detector: {', '.join(MODELS)}.")] = MODELS[0],
    json_out: Annotated[
        Path | None, typer.Option("--json", help="Write PaddleX detection records, one per image, here.")
    ] = None,
    vis_dir: Annotated[
        Path | None, typer.Option("--vis", help="Write each image with its boxes, labels and scores drawn here.")
    ] = None,
    threshold: Annotated[
        float, typer.Option("--threshold", min=0.0, max=1.0, help="Keep boxes scoring over this.")
    ] = 0.5,
    iou: Annotated[float, typer.Option("--iou", min=0.0, max=1.0, help="NMS IoU threshold.")] = 0.5,
    threads: Annotated[int | None, typer.Option("--threads", min=1, help="CPU threads (default: all).")] = None,
) -> None:
    """Detect objects or layout regions in images; a table, and JSON records / pictures."""
    if models not in MODELS:
        print_error(f"--models {models!r} is not known; choose one of {', '.join(MODELS)}")
        raise typer.Exit(USAGE_ERROR)
    from paddlectl.framework.utils.fileio import unique_stem
    from paddlectl.framework.vision.image_io import read_image

    from .layout import LayoutDetector
    from .records import record, write_json, write_picture

    with usage_errors():
        _check_targets(json_out, vis_dir)
        for path in images:  # every path before any work, so a typo costs no model load
            if not path.is_file():
                from paddlectl.framework.errors import DataError

                raise DataError(f"image {str(path)!r} {'is a directory' if path.is_dir() else 'does not exist'}")
        detector = LayoutDetector(threshold, iou, threads)
        records, used = [], set()
        columns = (TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeRemainingColumn())
        with Progress(*columns, console=err_console, transient=True, disable=not err_console.is_terminal) as progress:
            task = progress.add_task(models, total=len(images))
            for path in images:
                image = read_image(path, "RGB")
                records.append(record(path, detector(image), detector.labels))
                if vis_dir is not None:
                    write_picture(vis_dir / f"{unique_stem(path.stem, used)}.png", image, records[-1])
                progress.advance(task)
        if json_out is not None:
            write_json(json_out, records)
    console.print(_table(records))
    for flag, path in (("json", json_out), ("vis", vis_dir)):
        if path is not None:
            err_console.print(f"wrote {flag}: {path}", markup=False, highlight=False)


@app.command("synth")
def synth_command(
    out: Annotated[Path, typer.Option("--out", help="Directory for images/ and annotations.json (COCO).")],
    n: Annotated[int, typer.Option("--n", min=1, help="Number of scenes.")] = 100,
    seed: Annotated[int, typer.Option("--seed", help="Scene i depends only on (seed, i).")] = 0,
    size: Annotated[int, typer.Option("--size", min=32, help="Square image side in pixels.")] = 320,
    max_objects: Annotated[int, typer.Option("--max-objects", min=1, max=64, help="Objects per scene, at most.")] = 6,
) -> None:
    """Generate detection scenes (digits, letters, shapes on textured backgrounds) with COCO boxes and masks."""
    from .synth import generate_scenes

    with usage_errors():
        path = generate_scenes(out, n, seed=seed, image_size=(size, size), max_objects=max_objects)
    err_console.print(f"wrote {n} scenes: {path}", markup=False, highlight=False)
