"""``paddle.nn.functional``: every op family's public functions under Paddle's names.

Each family module lists its functional names in ``FUNCTIONAL``; they are re-exported here.
"""

import importlib as _importlib
import pkgutil as _pkgutil

from .. import ops as _ops


def _export() -> None:
    for info in _pkgutil.iter_modules(_ops.__path__):
        module = _importlib.import_module(f"{_ops.__name__}.{info.name}")
        for name in getattr(module, "FUNCTIONAL", ()):
            globals()[name] = getattr(module, name)


_export()
