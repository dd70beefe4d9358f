"""``--models DIR``: a directory holding ``det``, ``rec`` and optionally ``cls``, each a model directory
written by ``paddlectl export`` or an ``.onnx`` file (``det.onnx`` ...), and optionally ``dict.txt``.

Models our export wrote carry their task's pre/post-processing (``preprocess``/``postprocess``:
resize limits, mean/std, DB thresholds, the dictionary), and the chain runs each through its task
(``served``) exactly as ``paddlectl predict`` would: a model is served the way it was trained.
ONNX files without that metadata (PaddleOCR's own exports) run with PaddleOCR's settings, their
dictionary from ``dict.txt`` or their ``character`` metadata.
"""

from __future__ import annotations

from pathlib import Path

from paddlectl.framework.errors import DataError

from ..pipeline import OCRSettings
from .base import ModelSet

DICTIONARY_FILE = "dict.txt"


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


def _exported(model: Path) -> bool:
    """Whether ``model`` is our export (it carries its processing), not a bare ONNX file."""
    if model.is_dir():
        return True
    from paddlectl.framework.onnx.dependency import onnx

    try:
        proto = onnx.load(str(model), load_external_data=False)
    except Exception as exc:  # noqa: BLE001 - onnx raises DecodeError, OSError ... for a broken file
        raise DataError(f"cannot read ONNX model {model}: {exc}") from None
    return any(p.key == "preprocess" for p in proto.metadata_props)


def exported_set(root: Path) -> ModelSet:
    det, rec = _model(root, "det", True), _model(root, "rec", True)
    dictionary = root / DICTIONARY_FILE
    return ModelSet(
        root.name,
        det,
        _model(root, "cls", False),
        rec,
        dictionary if dictionary.is_file() else None,
        OCRSettings(letterbox=False),
        None,
        served=_exported(det),
    )
