"""Numba cache stamps that cover the helpers a kernel compiles in.

Numba stamps a cached kernel with its own source file only, but a kernel inlines the jitted helpers
and intrinsics it calls from other modules (``pixel_tiles`` compiles in ``conv_tiles._fill`` and
``gemm.copy_run``). After an upgrade that changed only a helper's file, Numba would load the kernel
built with the old helper: the cache files stay in ``__pycache__`` when pip replaces the sources.
``StampedLocator`` (registered ahead of Numba's own locators for this package's modules and for
generated modules that import it) keeps Numba's choice of directory and adds a digest of every
module of this package the kernel's file imports, directly or through them.
"""

from __future__ import annotations

import functools
import hashlib
import re
from pathlib import Path

from numba.core import caching

PACKAGE_DIR = Path(__file__).resolve().parent
PACKAGE = __name__.rpartition(".")[0]


def _module_file(dotted: str) -> Path | None:
    """The file of a module of this package by its dotted name (the package's own ``__init__``)."""
    if dotted == PACKAGE:
        return PACKAGE_DIR / "__init__.py"
    if not dotted.startswith(PACKAGE + "."):
        return None
    path = PACKAGE_DIR.joinpath(*dotted[len(PACKAGE) + 1 :].split(".")).with_suffix(".py")
    return path if path.is_file() else None


@functools.cache
def _source(path: Path) -> bytes:
    """A module's bytes, read once a process."""
    return path.read_bytes()


_FROM = re.compile(r"^\s*from\s+(\.*)([\w.]*)\s+import\s+(\([^)]*\)|[^\n]*)", re.MULTILINE)
_IMPORT = re.compile(r"^\s*import\s+([\w.]+)", re.MULTILINE)


@functools.cache
def _imports(path: Path) -> frozenset[Path]:
    """The modules of this package that ``path`` imports itself (``from . import a``, ``from .a import
    b``, ``from <package>.a import b``, ``import <package>.a``), read with regular expressions: parsing
    every kernel module's imports took ~0.15 s of the first import, ~1 ms this way."""
    source = _source(path).decode("utf-8", "replace")
    in_package = path.parent == PACKAGE_DIR
    names = _IMPORT.findall(source)
    for dot, module, imported in _FROM.findall(source):
        if len(dot) > 1 or (dot and not in_package):  # another package's module
            continue
        base = f"{PACKAGE}.{module}".rstrip(".") if dot else module
        names.append(base)
        names += [f"{base}.{name.split()[0]}" for name in re.findall(r"\w[\w ]*", re.sub(r"#[^\n]*", "", imported))]
    return frozenset(found for found in map(_module_file, names) if found not in (None, path))


@functools.cache
def helpers_digest(path: Path) -> str | None:
    """A digest of the sources of every module of this package ``path`` imports, directly or through
    them (None when it imports none)."""
    seen: set[Path] = set()
    todo = list(_imports(path))
    while todo:
        module = todo.pop()
        if module not in seen:
            seen.add(module)
            todo.extend(_imports(module))
    if not seen:
        return None
    digest = hashlib.sha256()
    for module in sorted(seen):
        digest.update(module.name.encode() + b"\0" + _source(module))
    return digest.hexdigest()


@functools.cache
def _mentions_package(path: Path) -> bool:
    """Whether ``path`` may import this package (a cheap test before reading another library's imports)."""
    return path.parent == PACKAGE_DIR or PACKAGE.encode() in _source(path)


class StampedLocator(caching._CacheLocator):
    """The locator Numba would choose, with ``helpers_digest`` added to its source stamp (Numba takes
    the stamp when a cached kernel is defined, so the digests are made during the first import)."""

    def __init__(self, inner, path: Path) -> None:
        self._inner, self._path = inner, path

    @classmethod
    def from_function(cls, py_func, py_file):
        path = Path(py_file).resolve()
        try:
            if not path.is_file() or not _mentions_package(path):
                return None
        except OSError:  # unreadable: Numba's own locators decide
            return None
        for other in caching.CacheImpl._locator_classes:
            inner = None if other is cls else other.from_function(py_func, py_file)
            if inner is not None:
                return cls(inner, path)
        return None

    def ensure_cache_path(self):
        self._inner.ensure_cache_path()

    def get_cache_path(self):
        return self._inner.get_cache_path()

    def get_source_stamp(self):
        return self._inner.get_source_stamp(), helpers_digest(self._path)

    def get_disambiguator(self):
        return self._inner.get_disambiguator()


def install() -> None:
    """Put ``StampedLocator`` first among Numba's cache locators (once)."""
    if StampedLocator not in caching.CacheImpl._locator_classes:
        caching.CacheImpl._locator_classes.insert(0, StampedLocator)
