"""Opening an exported model with the framework's Predictor (``paddlectl.framework.inference``).

A model directory written by ``paddle.jit.save`` / ``paddlectl export`` (``model.json`` +
``model.safetensors``) or an ``.onnx`` file (imported into the same IR by the predictor) goes
through ``inference.Config`` and ``create_predictor`` exactly as a serving process would open it;
the harness adds nothing on the hot path.
"""

from __future__ import annotations

from pathlib import Path

from paddlectl.framework import inference
from paddlectl.framework.errors import PaddlectlError

from .errors import ModelLoadError
from .runner import Runner


def open_predictor(model_path: Path, threads: int | None = None) -> Runner:
    """A Predictor for ``model_path``; ModelLoadError says why it cannot be opened and what to do."""
    model_path = Path(model_path)
    if not model_path.exists():
        raise ModelLoadError(
            f"exported model {str(model_path)!r} not found; pass the directory written by paddle.jit.save "
            "or paddlectl export, or an .onnx file"
        )
    config = inference.Config(str(model_path))
    if threads is not None:
        config.set_cpu_math_library_num_threads(threads)
    try:
        return inference.create_predictor(config)
    except (PaddlectlError, OSError, ValueError) as exc:
        raise ModelLoadError(
            f"cannot open exported model {str(model_path)!r} ({exc}); re-export it with paddle.jit.save"
        ) from None
