"""Trained weights -> a saved inference model that carries its own pre/post-processing and config.

The model directory is ``jit.save``'s (``model.json`` + ``model.safetensors``) plus ``config.yml``
(the resolved experiment config). The task's ``preprocess_config``/``postprocess_config`` go into
``model.json`` so ``predict`` and the eval harness need nothing but the directory. Verification
runs real evaluation samples through the eager model, the traced program (inside ``jit.save``)
and the optimising Predictor, and refuses the export when they disagree.
"""

from __future__ import annotations

import itertools
import json
import os
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..config import save_config
from ..core.autograd import no_grad
from ..core.tensor import Tensor
from ..errors import CheckpointError, DataError
from ..inference import Config
from ..inference.predictor import Predictor
from ..jit import save as jit_save
from ..jit.api import compare_outputs
from ..jit.saved_model import MODEL_JSON, ONNX_METADATA_ENTRIES, SavedModel, read_model_dir
from . import checkpoint_dir
from .lineage import build_lineage, recorded_lineage
from .task import Task

CONFIG_FILE = "config.yml"
VERIFY_SAMPLES = 8


class VerificationError(CheckpointError):
    """The exported model's outputs differ from the trained model's beyond tolerance."""


@dataclass
class ExportResult:
    path: Path  # the model directory, or the ONNX file
    verification: list[dict] | None  # per output: max_abs_diff, max_rel_diff, passed (traced and served)
    saved: SavedModel  # the native model (for ONNX: the one the file was converted from)


def load_trained(task: Task, config: dict, weights) -> object:
    """The task's model with the weights of a checkpoint directory or ``.pdparams`` file, in eval mode."""
    state_file = Path(weights) / checkpoint_dir.STATE_FILE
    if state_file.is_file():
        written_by = json.loads(state_file.read_text(encoding="utf-8")).get("task")
        if written_by not in (None, task.name):
            raise CheckpointError(
                f"weights {str(weights)!r} were trained for task {written_by!r}, the config exports {task.name!r}; "
                "pass the config the weights were trained with"
            )
    model = task.build_model(config)
    state = checkpoint_dir.model_weights(weights)
    try:
        missing, _ = model.set_state_dict(state)
    except (ValueError, TypeError) as exc:
        raise CheckpointError(f"weights {str(weights)!r} do not fit the model in Architecture: {exc}") from None
    if missing:
        raise CheckpointError(
            f"weights {str(weights)!r} lack {len(missing)} of the model's weights (e.g. {missing[0]}); "
            "they were trained for another architecture"
        )
    model.eval()
    return model


def _verify_batch(task: Task, config: dict, pre: dict) -> np.ndarray:
    raws = [raw for raw, _ in itertools.islice(task.eval_samples(config), VERIFY_SAMPLES)]
    if not raws:
        raise DataError("the evaluation set is empty, so the export cannot be verified; check Eval.dataset")
    return task.preprocess(pre, raws)


def _served_check(path: Path, saved: SavedModel, batch: list[np.ndarray], expected: list[np.ndarray]) -> list[dict]:
    outputs = Predictor(Config(str(path)), saved).run(batch)
    report = compare_outputs(expected, outputs, [f"served:{n}" for n in saved.output_names], 1e-4, 1e-4)
    return report


FORMATS = ("native", "onnx")


def _onnx_exporter():
    """``onnx.export.export_onnx``, or a DataError naming the extra that provides it."""
    try:
        from ..onnx.export import export_onnx
    except ImportError:
        raise DataError("--format onnx needs the onnx package; pip install 'paddlectl-framework[onnx]'") from None
    return export_onnx


def export_model_dir(model_dir, path) -> str:
    """A saved model directory (``jit.save``) as an ONNX file, with its input/output names and its
    pre/post-processing configs and metadata as ``metadata_props`` (``paddlectl export --format onnx``)."""
    export_onnx = _onnx_exporter()
    saved = read_model_dir(model_dir)
    meta = saved.meta
    metadata = {k: json.dumps(meta[k]) for k in ONNX_METADATA_ENTRIES if meta.get(k) is not None}
    metadata.update(meta.get("metadata") or {})
    return export_onnx(saved.program, path, saved.input_names, saved.output_names, metadata)


def export(task: Task, config: dict, weights, out, verify: bool = False, format: str = "native") -> ExportResult:  # noqa: A002
    """Export the trained ``weights`` to ``out``, written whole or not at all: a model directory
    (``format="native"``) or an ONNX file (``"onnx"``, ``.onnx`` appended; the processing configs
    go into its ``metadata_props``). Verification checks the program the ONNX file is made from."""
    if format not in FORMATS:
        raise DataError(f"export format {format!r} is unknown; choose native or onnx")
    out = Path(out)
    if format == "onnx":
        _onnx_exporter()  # refuse before any work when the onnx extra is missing
        out = out if out.suffix.lower() == ".onnx" else out.with_name(out.name + ".onnx")
        if out.is_dir():
            raise DataError(f"{str(out)!r} is a directory; give the ONNX file's path")
    elif out.exists() and not (out / MODEL_JSON).is_file() and (not out.is_dir() or any(out.iterdir())):
        raise DataError(f"{str(out)!r} exists and is not an exported model; choose a new output path or remove it")
    task.check_config(config)
    model = load_trained(task, config, weights)
    pre, post = task.preprocess_config(config), task.postprocess_config(config)
    batch = _verify_batch(task, config, pre) if verify else None
    out.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(dir=out.parent, prefix=f".{out.name}.export."))
    try:
        target = staging / "model"
        report = jit_save(
            model,
            str(target),
            input_spec=task.input_spec(config),
            verify_inputs=batch,
            preprocess=pre,
            postprocess=post,
            lineage=recorded_lineage(weights) or build_lineage(config),
        )
        save_config(config, target / CONFIG_FILE)
        os.chmod(target / CONFIG_FILE, 0o644)
        if format == "native" and hasattr(task, "export_extras"):
            task.export_extras(config, model, target)  # files served beside the program (an item index)
        saved = read_model_dir(target)
        if verify:
            with no_grad():
                eager = model(*[Tensor._wrap(b) for b in batch])
            expected = [o.numpy() for o in (eager if isinstance(eager, list | tuple) else [eager])]
            report = [*(report or []), *_served_check(target, saved, batch, expected)]
            failed = [r for r in report if not r["passed"]]
            if failed:
                worst = max(failed, key=lambda r: r["max_abs_diff"])
                raise VerificationError(
                    f"export verification failed: {worst['output']} differs by {worst['max_abs_diff']:.3g} "
                    "from the trained model; nothing was written (report this model's config as a bug)"
                )
        if format == "onnx":
            export_model_dir(target, out)
        else:
            checkpoint_dir.replace_dir(target, out)
            saved = read_model_dir(out)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return ExportResult(out, report, saved)


def served_task_name(saved: SavedModel) -> str:
    """The task an exported model was made for (recorded by ``export`` in its processing configs)."""
    pre = saved.meta.get("preprocess") or {}
    name = pre.get("task") if isinstance(pre, dict) else None
    if not name:
        raise CheckpointError(
            f"{saved.path} carries no task pre/post-processing (it was saved by jit.save directly); "
            "export it with `paddlectl export -c CONFIG --weights DIR -o OUT`"
        )
    return name
