"""Opening an exported model with the framework's Predictor (``paddlectl.framework.inference``).

Our inference directory (``model.json`` + ``model.safetensors`` from ``paddle.jit.save``) and
``.onnx`` files both go through ``inference.Config``; the harness adds nothing on the hot path.
"""

from __future__ import annotations

from importlib.metadata import version
from pathlib import Path

from .errors import ModelLoadError
from .runner import Runner


def open_predictor(model_path: Path) -> Runner:
    """A Predictor for ``model_path``; ModelLoadError says why it cannot be opened and what to do."""
    try:
        from paddlectl.framework import inference
    except ImportError as exc:
        raise ModelLoadError(
            f"paddlectl-framework {version('paddlectl-framework')} has no inference predictor ({exc}); "
            "install a paddlectl-framework that ships paddlectl.framework.inference"
        ) from None
    model_path = Path(model_path)
    if not model_path.exists():
        raise ModelLoadError(
            f"exported model {str(model_path)!r} not found; pass the directory written by paddle.jit.save or an .onnx file"
        )
    try:
        return inference.create_predictor(inference.Config(str(model_path)))
    except (OSError, ValueError, RuntimeError, KeyError) as exc:
        raise ModelLoadError(
            f"cannot open exported model {str(model_path)!r} ({type(exc).__name__}: {exc}); "
            "re-export it with paddle.jit.save, or pass a valid .onnx file"
        ) from None
