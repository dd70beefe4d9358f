"""``paddle.inference.Config``: where the model is and how to run it.

Pass switches are recorded by name (``delete_pass``) and read by the pass manager through
``disabled_passes``; ``ir_optim`` says whether passes run at all. ``enable_memory_optim`` makes
the executor drop each intermediate array after its last use. The CPU thread count bounds the
Numba kernels' thread pool and the BLAS threads (NumPy's matmul) while a predictor runs
(``inference.threads``).
"""

from __future__ import annotations

import os


class Config:
    """Paddle's ``paddle.inference.Config(model_dir)`` for a directory written by ``jit.save``, or
    ``Config("model.onnx")`` for an ONNX file (imported when the predictor is created)."""

    def __init__(self, model_dir=None, params_file=None) -> None:
        if params_file is not None:
            raise ValueError(
                "inference.Config: paddlectl models are one directory (model.json + model.safetensors); "
                "pass Config(model_dir) only"
            )
        self._model_dir = None if model_dir is None else os.fspath(model_dir)
        self._ir_optim = True
        self._deleted_passes: list[str] = []
        self._threads: int | None = None  # unset: the predictor picks by the model (threads.default_threads)
        self._memory_optim = False

    # ----- model ---------------------------------------------------------------------------------
    def set_model(self, model_dir) -> None:
        self._model_dir = os.fspath(model_dir)

    def model_dir(self) -> str | None:
        return self._model_dir

    # ----- passes --------------------------------------------------------------------------------
    def switch_ir_optim(self, x: bool = True) -> None:
        self._ir_optim = bool(x)

    def ir_optim(self) -> bool:
        return self._ir_optim

    def delete_pass(self, name: str) -> None:
        """Switch off the pass ``name`` (recorded; the pass manager skips every recorded name)."""
        if not isinstance(name, str) or not name:
            raise ValueError(f"delete_pass: give a pass name such as 'fuse_elementwise', got {name!r}")
        if name not in self._deleted_passes:
            self._deleted_passes.append(name)

    @property
    def disabled_passes(self) -> tuple[str, ...]:
        return tuple(self._deleted_passes)

    # ----- resources -----------------------------------------------------------------------------
    def set_cpu_math_library_num_threads(self, n: int) -> None:
        if not isinstance(n, int) or n < 1:
            raise ValueError(f"set_cpu_math_library_num_threads: need a positive int, got {n!r}")
        self._threads = n

    def cpu_math_library_num_threads(self) -> int | None:
        """The count set, or None: then each predictor picks by its model (``threads.default_threads``)."""
        return self._threads

    def enable_memory_optim(self, x: bool = True) -> None:
        self._memory_optim = bool(x)

    def memory_optim_enabled(self) -> bool:
        return self._memory_optim

    def disable_gpu(self) -> None:
        """Accepted for Paddle compatibility: paddlectl runs on the CPU."""

    def use_gpu(self) -> bool:
        return False

    def summary(self) -> str:
        return (
            f"model_dir: {self._model_dir}\nir_optim: {self._ir_optim}\ndeleted passes: {self._deleted_passes}\n"
            f"cpu threads: {self._threads or 'by model size'}\nmemory_optim: {self._memory_optim}"
        )
