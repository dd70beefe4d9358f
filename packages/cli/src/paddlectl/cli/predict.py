"""``paddlectl predict --model OUT --input PATH... [--json FILE] [--threshold S]``: run an exported model
(a directory or an ``.onnx`` file written by ``paddlectl export``) on files with the pre/post-processing
stored inside it; a rich table on the terminal, every prediction in JSON. A task with a ``visualize``
hook (detectors, segmenters) also writes its pictures beside the JSON; ``--threshold`` is for tasks
that keep results by score (``takes_threshold``: detectors).

Exit code 2 for a missing or foreign model, an unknown task or an unreadable input; the JSON file
is written only when every input was predicted.
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Annotated

import typer
from rich.table import Table
from typer.core import TyperCommand

from .output import console, escape, usage_errors
from .plugins import load_task

INPUT_FLAGS = ("--input", "-i")
PROCESSING_KEYS = ("preprocess", "postprocess")
IMAGE_SUFFIXES = (".png", ".jpg", ".jpeg", ".bmp", ".ppm", ".pgm", ".tif", ".tiff", ".webp", ".npy")
AUDIO_SUFFIXES = (".wav", ".flac", ".ogg")
INPUT_SUFFIXES = IMAGE_SUFFIXES + AUDIO_SUFFIXES
"""What a directory given to --input contributes (files named one by one may be anything a task reads)."""


def spread_inputs(args: list[str]) -> list[str]:
    """``--input a b c`` as ``--input a --input b --input c``: every path after one --input/-i, up to
    the next option, is an input (click options take a fixed number of values)."""
    spread: list[str] = []
    state = None  # "value": the next token is --input's own value; "paths": later bare tokens are inputs
    for position, arg in enumerate(args):
        if arg == "--":
            return spread + args[position:]
        if state == "value":
            spread.append(arg)
            state = "paths"
        elif arg in INPUT_FLAGS:
            spread.append(arg)
            state = "value"
        elif arg.startswith(("--input=", "-i")):
            spread.append(arg)
            state = "paths"
        elif arg.startswith("-"):
            spread.append(arg)
            state = None
        else:
            spread += [INPUT_FLAGS[0], arg] if state == "paths" else [arg]
    return spread


class SpreadInputsCommand(TyperCommand):
    """The predict command, reading several paths after one ``--input`` (see spread_inputs)."""

    def parse_args(self, ctx, args: list[str]) -> list[str]:
        return super().parse_args(ctx, spread_inputs(args))


def open_model(model: str):
    """The SavedModel ``model`` names: an export directory, or an ``.onnx`` file whose metadata_props
    carry the processing (``paddlectl export --format onnx`` writes them there)."""
    from paddlectl.framework.errors import CheckpointError
    from paddlectl.framework.jit.saved_model import onnx_metadata_entries, read_model_dir

    path = Path(model)
    if not (path.is_file() and path.suffix.lower() == ".onnx"):
        return read_model_dir(model)
    try:
        from paddlectl.framework.onnx.importer import import_onnx
    except ImportError as exc:
        raise CheckpointError(f"{model}: {exc}") from None
    saved = import_onnx(model)
    stored = onnx_metadata_entries(saved.meta.get("metadata") or {})
    for key in PROCESSING_KEYS:
        if key not in stored:
            raise CheckpointError(
                f"{model} carries no valid {key!r} in its ONNX metadata_props, so predict cannot tell how to "
                "prepare inputs; export it with `paddlectl export --format onnx`, or run it with "
                "`paddlectl eval run --model FILE -c CONFIG`"
            )
    return dataclasses.replace(saved, meta={**saved.meta, **stored})


def expand_inputs(paths: list[str]) -> list[Path]:
    """Files as given; a directory contributes its image, audio and .npy files, sorted."""
    from paddlectl.framework.errors import DataError

    found: list[Path] = []
    for raw in paths:
        path = Path(raw)
        if path.is_dir():
            files = sorted(p for p in path.rglob("*") if p.is_file() and p.suffix.lower() in INPUT_SUFFIXES)
            if not files:
                raise DataError(f"input directory {raw!r} holds no image, audio or .npy files")
            found.extend(files)
        elif path.is_file():
            found.append(path)
        else:
            raise DataError(f"input {raw!r} does not exist; pass image files, .npy files or directories of them")
    return found


def unique_stems(files: list[Path]) -> dict[Path, str]:
    """Each input's file stem, numbered where two inputs share one, so their pictures do not collide."""
    from paddlectl.framework.utils.fileio import unique_stem

    used: set[str] = set()
    return {f: unique_stem(f.stem, used) for f in files}


def predict_command(
    model: Annotated[str, typer.Option("--model", "-m", help="Directory or .onnx file written by `paddlectl export`.")],
    inputs: Annotated[
        list[str],
        typer.Option("--input", "-i", help="Image/.npy files or directories: several after one -i, or -i repeated."),
    ],
    json_out: Annotated[str, typer.Option("--json", help="Where to write the predictions.")] = "predictions.json",
    batch_size: Annotated[int, typer.Option("--batch-size", min=1, help="Inputs per model run.")] = 32,
    threshold: Annotated[
        float | None,
        typer.Option("--threshold", min=0.0, max=1.0, help="Score a detection needs (default: the model's own)."),
    ] = None,
) -> None:
    """Predict with an exported model (a directory or .onnx file); it brings its own pre/post-processing.

    No config is needed: the model carries its task and processing.
    """
    from paddlectl.framework.errors import ConfigError
    from paddlectl.framework.hapi.export import served_task_name
    from paddlectl.framework.inference import Config
    from paddlectl.framework.inference.predictor import Predictor
    from paddlectl.framework.utils.fileio import atomic_write

    with usage_errors():
        saved = open_model(model)
        task = load_task(served_task_name(saved))
        task = task() if isinstance(task, type) else task
        pre, post = saved.meta["preprocess"], saved.meta["postprocess"]
        if threshold is not None:
            if not getattr(task, "takes_threshold", False):
                raise ConfigError(f"--threshold is for detectors; a {task.name} model keeps no results by score")
            post = {**post, "threshold": threshold}
        files = expand_inputs(inputs)
        # a task whose files hold many inputs each (rec.ctr's CSV/JSON-lines rows) names them itself
        named = task.expand_inputs(files) if hasattr(task, "expand_inputs") else [(str(f), f) for f in files]
        predictor = Predictor(Config(model), saved)
        predictions = []
        for start in range(0, len(named), batch_size):
            names, raws = zip(*named[start : start + batch_size], strict=True)
            outputs = predictor.run(task.preprocess(pre, list(raws)))
            predictions += [{"input": n, **p} for n, p in zip(names, task.postprocess(post, outputs), strict=True)]
        if hasattr(task, "visualize"):
            stems = unique_stems(files)
            for f, p in zip(files, predictions, strict=True):
                p.update(task.visualize(post, f, p, Path(json_out).parent, stems[f]))
    table = Table(title=escape(f"{task.name} predictions ({len(predictions)})"))
    for column in ("input", "label", "score", "top-k"):
        table.add_column(column)
    for p in predictions:
        boxes = sorted(p.get("boxes", []), key=lambda b: -b["score"])[:3]  # a detector's best three
        top = ", ".join(f"{t['label']} {t['score']:.3f}" for t in p.get("topk", boxes))
        label = p.get("label", f"{len(p['boxes'])} boxes" if "boxes" in p else "")
        table.add_row(escape(p["input"]), escape(str(label)), f"{p.get('score', float('nan')):.4f}", escape(top))
    console.print(table)
    with atomic_write(json_out, "w", encoding="utf-8") as handle:
        json.dump({"model": str(model), "task": task.name, "predictions": predictions}, handle, indent=1)
    console.print(f"predictions: {json_out}", highlight=False, markup=False)
