"""Padding layers for 1-D, 2-D and 3-D inputs (Paddle's Pad1D/2D/3D and the Zero/Constant/
Reflection/Replication/Circular families, with the ``...Nd`` spellings Paddle also exports)."""

from __future__ import annotations

from ...ops.shape import pad
from .base import Layer

_FORMATS = {1: "NCL", 2: "NCHW", 3: "NCDHW"}


class _Pad(Layer):
    """Pad the last ``rank`` spatial dims by ``padding`` ([left, right, top, bottom, front, back];
    an int pads every side)."""

    rank = 2
    fixed_mode = None

    def __init__(self, padding, mode="constant", value=0.0, data_format=None, name=None) -> None:
        super().__init__()
        n = 2 * self.rank
        self._pad = [int(padding)] * n if isinstance(padding, int) else [int(p) for p in padding]
        if len(self._pad) != n:
            raise ValueError(f"{type(self).__name__}: padding must be an int or {n} numbers, got {padding!r}")
        self._mode = self.fixed_mode or mode
        self._value = value
        self._data_format = data_format or _FORMATS[self.rank]

    def forward(self, x):
        return pad(x, self._pad, mode=self._mode, value=self._value, data_format=self._data_format)

    def extra_repr(self) -> str:
        return f"padding={self._pad}, mode={self._mode}, value={self._value}, data_format={self._data_format}"


def _fixed(name: str, rank: int, mode: str, takes_value: bool = False) -> type:
    def __init__(self, padding, *args, data_format=None, name=None, **kwargs):
        value = 0.0
        if takes_value:
            value = kwargs.pop("value", args[0] if args else None)
            if value is None:
                raise TypeError(f"{name}() missing the required argument 'value'")
            args = args[1:]
        if args:
            data_format = args[0]
        _Pad.__init__(self, padding, mode, value, data_format)

    return type(name, (_Pad,), {"rank": rank, "fixed_mode": mode, "__init__": __init__})


__all__ = []
for _rank in (1, 2, 3):
    _cls = type(f"Pad{_rank}D", (_Pad,), {"rank": _rank})
    globals()[_cls.__name__] = _cls
    __all__.append(_cls.__name__)
    for _family, _mode, _value in (
        ("Zero", "constant", False), ("Constant", "constant", True), ("Reflection", "reflect", False),
        ("Replication", "replicate", False), ("Circular", "circular", False),
    ):  # fmt: skip
        _cls = _fixed(f"{_family}Pad{_rank}D", _rank, _mode, _value)
        globals()[_cls.__name__] = _cls
        globals()[f"{_family}Pad{_rank}d"] = _cls
        __all__ += [_cls.__name__, f"{_family}Pad{_rank}d"]
