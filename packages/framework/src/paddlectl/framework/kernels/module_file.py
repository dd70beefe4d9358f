"""A generated kernel module imported from its file: by the process that wrote it (``kernel_cache``)
and by the background compiler (``compile_worker``), under the same module name, so Numba files
both compilations under one cache entry."""

from __future__ import annotations

import importlib.util
import sys
import types
from pathlib import Path


def load_module(path, expected: str | None = None) -> types.ModuleType:
    """Import the module at ``path``; ``expected``: the text it must hold (else OSError: another
    process is rewriting it)."""
    path = Path(path)
    name = f"paddlectl_kernels.{path.stem}"
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    if expected is not None and path.read_text(encoding="utf-8") != expected:
        raise OSError(f"kernel cache: {path} changed while loading; another process is writing it, retry")
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module
