"""``paddlectl predict --model OUT --input PATH... [--json FILE]``: run an exported model on files with
the pre/post-processing stored inside it; a rich table on the terminal, every prediction in JSON.

Exit code 2 for a missing or foreign model directory, an unknown task or an unreadable input;
the JSON file is written only when every input was predicted.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer
from rich.table import Table

from paddlectl.framework.errors import DataError

from .plugins import load_task

IMAGE_SUFFIXES = (".png", ".jpg", ".jpeg", ".bmp", ".ppm", ".pgm", ".tif", ".tiff", ".webp", ".npy")


def expand_inputs(paths: list[str]) -> list[Path]:
    """Files as given; a directory contributes its image and .npy files, sorted."""
    found: list[Path] = []
    for raw in paths:
        path = Path(raw)
        if path.is_dir():
            files = sorted(p for p in path.rglob("*") if p.is_file() and p.suffix.lower() in IMAGE_SUFFIXES)
            if not files:
                raise DataError(f"input directory {raw!r} holds no image or .npy files")
            found.extend(files)
        elif path.is_file():
            found.append(path)
        else:
            raise DataError(f"input {raw!r} does not exist; pass image files, .npy files or directories of them")
    return found


def predict_command(
    model: Annotated[str, typer.Option("--model", "-m", help="Directory written by `paddlectl export`.")],
    inputs: Annotated[list[str], typer.Option("--input", "-i", help="Image/.npy file or directory; repeatable.")],
    json_out: Annotated[str, typer.Option("--json", help="Where to write the predictions.")] = "predictions.json",
    batch_size: Annotated[int, typer.Option("--batch-size", min=1, help="Inputs per model run.")] = 32,
) -> None:
    """Predict with an exported model; it brings its own pre/post-processing, so no config is needed."""
    from paddlectl.framework.hapi.export import served_task_name
    from paddlectl.framework.inference import Config
    from paddlectl.framework.inference.predictor import Predictor
    from paddlectl.framework.jit.saved_model import read_model_dir
    from paddlectl.framework.utils.fileio import atomic_write

    from .app import console, usage_errors

    with usage_errors():
        saved = read_model_dir(model)
        task = load_task(served_task_name(saved))
        task = task() if isinstance(task, type) else task
        pre, post = saved.meta["preprocess"], saved.meta["postprocess"]
        files = expand_inputs(inputs)
        predictor = Predictor(Config(model), saved)
        predictions = []
        for start in range(0, len(files), batch_size):
            chunk = files[start : start + batch_size]
            outputs = predictor.run(task.preprocess(pre, chunk))
            predictions += [{"input": str(f), **p} for f, p in zip(chunk, task.postprocess(post, outputs), strict=True)]
    table = Table(title=f"{task.name} predictions ({len(predictions)})")
    for column in ("input", "label", "score", "top-k"):
        table.add_column(column)
    for p in predictions:
        top = ", ".join(f"{t['label']} {t['score']:.3f}" for t in p.get("topk", []))
        table.add_row(p["input"], str(p.get("label", "")), f"{p.get('score', float('nan')):.4f}", top)
    console.print(table)
    with atomic_write(json_out, "w", encoding="utf-8") as handle:
        json.dump({"model": str(model), "task": task.name, "predictions": predictions}, handle, indent=1)
    console.print(f"predictions: {json_out}", highlight=False)
