"""Reading PaddlePaddle's own ``paddle.save`` pickles without running code from the file.

A restricted unpickler admits only the globals needed to rebuild ndarrays, numpy scalars and
plain containers; any other global (``os.system``, ``builtins.eval``, ...) is refused before it
is called. The loaded tree is then converted the way PaddlePaddle's ``paddle.load`` does it.
"""

from __future__ import annotations

import _compat_pickle
import pickle

import numpy as np

from ..core.tensor import Tensor
from ..errors import CheckpointError

PICKLE_PREFIX = b"\x80"  # PROTO opcode: every pickle of protocol >= 2 starts with it

_NUMPY_CORE = ("numpy.core.multiarray", "numpy._core.multiarray")
_ALLOWED = {
    *((mod, "_reconstruct") for mod in _NUMPY_CORE),
    *((mod, "scalar") for mod in _NUMPY_CORE),
    ("numpy", "ndarray"),
    ("numpy", "dtype"),
    ("collections", "OrderedDict"),
    ("_codecs", "encode"),  # how protocol-2 pickles spell bytes
    *(
        ("builtins", name)
        for name in ("dict", "list", "tuple", "set", "frozenset", "int", "float", "complex", "bool", "str", "bytes")
    ),
}
_NAME_TABLE = "StructuredToParameterName@@"
_BIG_PARAM_TABLE = "UnpackBigParamInfor@@"  # Paddle's spelling  # typos: disable-line


class RestrictedUnpickler(pickle.Unpickler):
    """An Unpickler whose ``find_class`` knows only array and container constructors."""

    def __init__(self, file, name: str) -> None:
        super().__init__(file)
        self._name = name

    def find_class(self, module: str, name: str):
        # protocol-2 pickles spell Python 2 names (__builtin__.tuple): check, and load, the Python 3 one
        module, name = _compat_pickle.NAME_MAPPING.get((module, name), (module, name))
        module = _compat_pickle.IMPORT_MAPPING.get(module, module)
        if (module, name) not in _ALLOWED:
            raise CheckpointError(
                f"paddle.load: {self._name} asks to load the global {module}.{name}, which is refused: "
                "only arrays and plain containers may be loaded from a pickle; do not load files you do not trust"
            )
        return super().find_class(module, name)


def load_restricted(file, name: str, return_numpy: bool):
    """Unpickle a PaddlePaddle file through the restricted unpickler and convert it as Paddle does."""
    try:
        obj = RestrictedUnpickler(file, name).load()
    except CheckpointError:
        raise
    except Exception as exc:  # noqa: BLE001 - a broken pickle raises many kinds; all mean a bad file
        raise CheckpointError(
            f"paddle.load: {name} is a damaged or truncated pickle ({type(exc).__name__}: {exc})"
        ) from None
    return _as_paddle_loads(obj, return_numpy)


def _as_paddle_loads(obj, return_numpy: bool):
    """PaddlePaddle's ``load`` post-processing: join split params, arrays -> Tensors, drop the name table."""
    if isinstance(obj, dict):
        _join_big_params(obj)
        if _NAME_TABLE in obj:
            table = obj.pop(_NAME_TABLE)
            for key in table:
                if isinstance(obj.get(key), np.ndarray):
                    obj[key] = obj[key] if return_numpy else _tensor(obj[key], table[key])
            return obj
    if _contains(obj, _is_named_array):
        return _convert(obj, _is_named_array, lambda t: t[1] if return_numpy else _tensor(t[1], t[0]))
    return _convert(obj, _is_array, lambda a: a if return_numpy else _tensor(a, None))


def _join_big_params(obj: dict) -> None:
    info = obj.pop(_BIG_PARAM_TABLE, None)
    for key, value in (info or {}).items():
        obj[key] = np.concatenate([obj[part] for part in value["slices"]]).reshape(value["OriginShape"])
        for part in value["slices"]:
            obj.pop(part)


def _tensor(array: np.ndarray, name) -> Tensor:
    tensor = Tensor._wrap(array)
    if name is not None:
        tensor.name = name
    return tensor


def _is_named_array(obj) -> bool:
    # Paddle >= 2.1 pickles a Tensor as the tuple (name, ndarray)
    return type(obj) is tuple and len(obj) == 2 and isinstance(obj[0], str) and isinstance(obj[1], np.ndarray)


def _is_array(obj) -> bool:
    return isinstance(obj, np.ndarray)


def _children(obj):
    if isinstance(obj, dict):
        return obj.values()
    if isinstance(obj, list | tuple | set):
        return obj
    return ()


def _contains(obj, predicate) -> bool:
    return predicate(obj) or any(_contains(child, predicate) for child in _children(obj))


def _convert(obj, predicate, convert):
    if predicate(obj):
        return convert(obj)
    if isinstance(obj, dict):
        for key in list(obj):
            obj[key] = _convert(obj[key], predicate, convert)
        return obj
    if isinstance(obj, list | tuple | set):
        return type(obj)(_convert(child, predicate, convert) for child in obj)
    return obj
