"""Segment image files with an exported ``seg.semantic`` model and write what a person and a program
each want: the label map, a palette PNG and an overlay, all at the input image's own size (the
model runs at its export size; the label map is scaled back with nearest neighbours)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from paddlectl.framework.errors import CheckpointError, DataError
from paddlectl.framework.hapi.export import served_task_name
from paddlectl.framework.inference import Config
from paddlectl.framework.inference.predictor import Predictor
from paddlectl.framework.jit.saved_model import read_model_dir
from paddlectl.framework.vision.image_io import read_image

from .task import SemanticSegTask


def predict_files(model: str, inputs: Sequence[Path], out: Path, weight: float = 0.6) -> list[dict]:
    """One record per image: ``input_path``, the three PNG paths and the classes found (PaddleX's
    ``classes`` with each one's share of the pixels)."""
    saved = read_model_dir(model)
    name = served_task_name(saved)
    if name != SemanticSegTask.name:
        raise CheckpointError(f"{model} is a {name!r} model; `paddlectl seg predict` runs seg.semantic models")
    if not inputs:
        raise DataError("no input images; pass -i IMAGE (repeat for several)")
    images = {}
    for path in inputs:
        if not Path(path).is_file():
            raise DataError(f"input {str(path)!r} does not exist; pass image files")
        images[path] = read_image(path, "RGB")
    task = SemanticSegTask()
    pre, post = saved.meta["preprocess"], saved.meta["postprocess"]
    predictor = Predictor(Config(model), saved)
    records = []
    for path, image in images.items():
        (result,) = task.postprocess(post, predictor.run(task.preprocess(pre, [image])))
        files = task.visualize(post, image, result, out, Path(path).stem, weight)
        records.append({"input_path": str(path), **files, "classes": result["classes"]})
    return records
