"""Paddle's namespaces that hold names defined elsewhere: ``paddle.tensor``, ``paddle.base``,
``paddle.framework``.

A ``Namespace`` is a module whose attributes are looked up in its own few entries and then in
each of its ``sources`` (module dicts, e.g. the framework's top level), so nothing is copied and
a name a source gains later is found too. Paddle's sub-namespaces of it (``paddle.tensor.math``,
``paddle.tensor.creation``, ...) are the namespace itself, since every name they hold is also at
its top. ``call`` makes it callable as well: Paddle's ``paddle.tensor`` is both the module and the
``tensor(data, ...)`` function.
"""

from __future__ import annotations

import types

from .errors import ConfigError


class Namespace(types.ModuleType):
    def __init__(self, name: str, sources: list[dict], submodules=(), call=None, **entries) -> None:
        super().__init__(name, f"Paddle's ``{name}``: names defined elsewhere in paddlectl.framework.")
        self.__dict__.update(entries)
        self._sources, self._submodules, self._call = sources, frozenset(submodules), call

    def __getattr__(self, attr: str):
        if attr in self._submodules:
            return self
        for source in self._sources:
            if attr in source and not attr.startswith("_"):
                return source[attr]
        raise AttributeError(f"module {self.__name__!r} has no attribute {attr!r}")

    def __dir__(self):
        names = {n for source in self._sources for n in source if not n.startswith("_")}
        return sorted(names | set(self.__dict__) | self._submodules)

    def __call__(self, *args, **kwargs):
        if self._call is None:
            raise ConfigError(f"{self.__name__} is a namespace, not a function")
        return self._call(*args, **kwargs)
