"""The optional ``onnx`` package (the ``onnx`` extra): loading our own model format never needs
protobuf, so only ONNX import and export ask for it, through this module, which names the fix."""

try:
    import onnx
except ImportError as exc:  # pragma: no cover - exercised only without the extra
    raise ImportError("ONNX import/export needs the 'onnx' package: pip install 'paddlectl-framework[onnx]'") from exc

__all__ = ["onnx"]
