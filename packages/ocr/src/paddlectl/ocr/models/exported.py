"""``--models DIR``: a directory holding ``det``, ``rec`` and optionally ``cls``, each a model directory
written by ``paddlectl export`` or an ``.onnx`` file (``det.onnx`` ...), and optionally ``dict.txt``.

The pre/post-processing comes from what the export stored beside each model (``preprocess`` /
``postprocess``, PaddleOCR's key names: ``limit_side_len``, ``mean``, ``std``, ``thresh``,
``box_thresh``, ``unclip_ratio``, ``max_candidates``, ``use_dilation``; ``image_shape`` and
``character_dict`` for the recogniser), so the chain serves a model the way it was trained;
what a model does not store keeps PaddleOCR's defaults.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

from paddlectl.framework.errors import DataError

from ..pipeline import OCRSettings
from . import ModelSet

DICTIONARY_FILE = "dict.txt"
DB_KEYS = ("thresh", "box_thresh", "unclip_ratio", "max_candidates", "use_dilation")


def _model(root: Path, role: str, required: bool) -> Path | None:
    for candidate in (root / role, root / f"{role}.onnx"):
        if candidate.exists():
            return candidate
    if required:
        raise DataError(
            f"--models {root}: no {role!r} model; the directory needs {role}/ (a `paddlectl export` output) "
            f"or {role}.onnx"
        )
    return None


def processing(model: Path) -> tuple[dict, dict]:
    """The (preprocess, postprocess) dicts an export stored with ``model`` ({} where none)."""
    if model.is_dir():
        from paddlectl.framework.jit.saved_model import read_model_dir

        meta = read_model_dir(model).meta
    else:
        from paddlectl.framework.jit.saved_model import onnx_metadata_entries
        from paddlectl.framework.onnx.dependency import onnx

        try:
            proto = onnx.load(str(model), load_external_data=False)
        except Exception as exc:  # noqa: BLE001 - onnx raises DecodeError, OSError ... for a broken file
            raise DataError(f"cannot read ONNX model {model}: {exc}") from None
        meta = onnx_metadata_entries({p.key: p.value for p in proto.metadata_props})
    return dict(meta.get("preprocess") or {}), dict(meta.get("postprocess") or {})


def _settings(det_pre: dict, det_post: dict, rec_pre: dict) -> OCRSettings:
    base = OCRSettings(letterbox=False)
    db = dataclasses.replace(base.db, **{k: type(getattr(base.db, k))(det_post[k]) for k in DB_KEYS if k in det_post})
    changes: dict = {"db": db}
    if "limit_side_len" in det_pre:
        changes["limit_side_len"] = int(det_pre["limit_side_len"])
    for key in ("mean", "std"):
        if key in det_pre:
            changes[f"det_{key}"] = tuple(float(v) for v in det_pre[key])
    if "image_shape" in rec_pre:
        changes["rec_shape"] = tuple(int(v) for v in rec_pre["image_shape"][-2:])
    return dataclasses.replace(base, **changes)


def exported_set(root: Path) -> ModelSet:
    det, rec = _model(root, "det", True), _model(root, "rec", True)
    det_pre, det_post = processing(det)
    rec_pre, rec_post = processing(rec)
    dictionary = root / DICTIONARY_FILE
    characters = rec_post.get("character_dict")
    if characters is not None:
        dictionary = tuple(characters)
    elif not dictionary.is_file():
        dictionary = None  # the recogniser's own 'character' metadata
    settings = _settings(det_pre, det_post, rec_pre)
    return ModelSet(root.name, det, _model(root, "cls", False), rec, dictionary, settings, None)
