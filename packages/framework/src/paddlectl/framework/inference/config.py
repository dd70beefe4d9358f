"""``paddle.inference.Config``: where the model is and how to run it.

Pass switches are recorded by name (``delete_pass``) and read by the pass manager through
``disabled_passes``; ``ir_optim`` says whether passes run at all. ``enable_memory_optim`` makes
the executor drop each intermediate array after its last use; the optimised program is kept on
disk for the next load (``inference.optim_cache``; ``set_optim_cache_dir``, ``switch_optim_cache``). The CPU thread count bounds the
Numba kernels' thread pool and the BLAS threads (NumPy's matmul) while a predictor runs
(``inference.threads``).
"""

from __future__ import annotations

import os
from pathlib import Path

from .optim_cache import default_dir


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
        self._optim_cache_dir: str | None = None  # None: optim_cache.default_dir()
        self._optim_cache = True

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

    def set_optim_cache_dir(self, path) -> None:
        """Where optimised programs are kept (``inference.optim_cache``); the default is ``programs``
        inside the kernel cache."""
        if not isinstance(path, str | os.PathLike) or not os.fspath(path):
            raise ValueError(f"set_optim_cache_dir: give a folder path, got {path!r}")
        self._optim_cache_dir = os.fspath(path)

    def switch_optim_cache(self, x: bool = True) -> None:
        """Off: every predictor runs the import and the passes itself, and keeps nothing on disk."""
        self._optim_cache = bool(x)

    def optim_cache_dir(self) -> Path | None:
        """The optimisation cache's folder, or None when it is switched off."""
        if not self._optim_cache:
            return None
        return Path(self._optim_cache_dir) if self._optim_cache_dir else default_dir()

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
            f"cpu threads: {self._threads or 'by model size'}\nmemory_optim: {self._memory_optim}\n"
            f"optim cache: {self.optim_cache_dir() or 'off'}"
        )
