"""ONNX import: ``import_onnx(path, output_dir=None)`` reads an ``.onnx`` file into a SavedModel
(optionally writing our own model directory); ``inference.Config(path.onnx)`` uses it too.

``onnx`` is an optional dependency (the ``onnx`` extra): loading our own model format never needs
protobuf, so only the import/export paths ask for it.
"""

try:
    import onnx  # noqa: F401
except ImportError as exc:  # pragma: no cover - exercised only without the extra
    raise ImportError("ONNX import/export needs the 'onnx' package: pip install 'paddlectl-framework[onnx]'") from exc

from .importer import import_onnx, onnx_to_program  # noqa: E402

__all__ = ["import_onnx", "onnx_to_program"]
