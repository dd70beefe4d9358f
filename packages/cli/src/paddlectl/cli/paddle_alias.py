"""An import alias that makes ``import paddle`` (and ``paddle.X.Y``) yield ``paddlectl.framework``
(and ``paddlectl.framework.X.Y``): the same module objects, so a script written for PaddlePaddle
runs unmodified and ``isinstance`` checks agree between the script and paddlectl.

The finder sits at the front of ``sys.meta_path``, so it wins over an installed ``paddle``
distribution; nothing on disk is edited or shadowed.
"""

from __future__ import annotations

import contextlib
import importlib
import importlib.abc
import importlib.machinery
import importlib.util
import sys

ALIAS = "paddle"
TARGET = "paddlectl.framework"


def to_target(name: str) -> str:
    """``paddle.nn.functional`` -> ``paddlectl.framework.nn.functional``."""
    return TARGET + name[len(ALIAS) :]


def to_alias(name: str) -> str:
    """``paddlectl.framework.nn`` -> ``paddle.nn``; any other name is returned unchanged."""
    if is_target(name):
        return ALIAS + name[len(TARGET) :]
    return name


def is_alias(name: str) -> bool:
    return name == ALIAS or name.startswith(ALIAS + ".")


def is_target(name: str) -> bool:
    """A name inside ``paddlectl.framework``, the package ``paddle`` stands for."""
    return name == TARGET or name.startswith(TARGET + ".")


class _AliasLoader(importlib.abc.Loader):
    """Hands over the already-imported paddlectl module instead of executing anything."""

    def __init__(self, module) -> None:
        self._module = module
        self._spec = module.__spec__

    def create_module(self, spec):
        return self._module

    def exec_module(self, module) -> None:
        # importlib has just set module.__spec__ to the alias spec; the module keeps its own, so
        # reload, pickling and worker processes see paddlectl.framework as its true name.
        module.__spec__ = self._spec


class PaddleAliasFinder(importlib.abc.MetaPathFinder):
    """Answers for ``paddle`` and ``paddle.*``; every other name is left to the next finder."""

    def find_spec(self, fullname, path=None, target=None):
        if not is_alias(fullname):
            return None
        real = to_target(fullname)
        if importlib.util.find_spec(real) is None:
            return None  # no such module in paddlectl: the import fails with the `paddle.*` name
        module = importlib.import_module(real)
        return importlib.machinery.ModuleSpec(
            fullname, _AliasLoader(module), is_package=hasattr(module, "__path__"), origin=module.__spec__.origin
        )


@contextlib.contextmanager
def paddle_alias():
    """The finder first on ``sys.meta_path`` for the duration; a real ``paddle`` imported before is
    forgotten, so ``import paddle`` inside yields paddlectl whatever else is installed."""
    _forget_paddle()
    finder = PaddleAliasFinder()
    sys.meta_path.insert(0, finder)
    try:
        yield finder
    finally:
        sys.meta_path.remove(finder)
        _forget_paddle()


def _forget_paddle() -> None:
    for name in [n for n in sys.modules if is_alias(n)]:
        del sys.modules[name]
