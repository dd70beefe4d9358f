"""Atomic file writes: a reader sees the old file or the new one, never half of one."""

from __future__ import annotations

import contextlib
import os
import tempfile
from pathlib import Path


def umask() -> int:
    """The process's umask (read by setting and restoring it: there is no getter)."""
    mask = os.umask(0)
    os.umask(mask)
    return mask


@contextlib.contextmanager
def atomic_write(path: str | os.PathLike, mode: str = "wb", encoding: str | None = None, private: bool = False):
    """Open a temporary file beside ``path``; rename it over ``path`` only if the block succeeds.
    The file gets the permissions a plain ``open`` would give (the temporary one is 0600), or stays
    0600 with ``private`` (keys, credentials)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, mode, encoding=encoding) as handle:
            yield handle
            handle.flush()
            os.fsync(handle.fileno())
            if not private:
                os.fchmod(handle.fileno(), 0o666 & ~umask())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def unique_stem(stem: str, used: set[str]) -> str:
    """``stem``, or ``stem_2``, ``stem_3`` ... when an earlier output of the same run took it (two inputs
    named alike in different folders must not overwrite each other's pictures); records the one returned."""
    name, n = stem, 1
    while name in used:
        n += 1
        name = f"{stem}_{n}"
    used.add(name)
    return name
