"""How a Tensor prints: ``paddle.set_printoptions`` sets these, ``Tensor.__repr__`` reads them.

Kept here rather than in NumPy's global print options, so a script that sets Paddle's options
does not change how its own NumPy arrays print."""

from __future__ import annotations

import numpy as np

from ..errors import ConfigError

OPTIONS = {"precision": 8, "threshold": 1000, "edgeitems": 3, "linewidth": 80, "sci_mode": False}


def set_printoptions(precision=None, threshold=None, edgeitems=None, sci_mode=None, linewidth=None):
    """``paddle.set_printoptions``: digits, the element count beyond which a summary prints, the
    entries kept at each edge of a summary, scientific notation, and the line width."""
    given = {"precision": precision, "threshold": threshold, "edgeitems": edgeitems, "linewidth": linewidth}
    for key, value in given.items():
        if value is None:
            continue
        if not isinstance(value, int) or isinstance(value, bool) or value < 0:
            raise ConfigError(f"set_printoptions: {key} must be a non-negative int, got {value!r}")
        OPTIONS[key] = value
    if sci_mode is not None:
        OPTIONS["sci_mode"] = bool(sci_mode)


def array_options(array=None) -> dict:
    """The keyword arguments of ``np.array2string`` for the current options (for ``array``'s dtype)."""
    options = {
        "precision": OPTIONS["precision"],
        "threshold": OPTIONS["threshold"],
        "edgeitems": OPTIONS["edgeitems"],
        "max_line_width": OPTIONS["linewidth"],
    }
    if OPTIONS["sci_mode"]:
        digits = OPTIONS["precision"]
        options["formatter"] = {"float_kind": lambda v: f"{v:.{digits}e}"}
    if array is not None and array.dtype.kind == "c":
        options["formatter"] = {"complex_kind": _complex_item(array)}
    return options


def _complex_item(array):
    """Paddle's complex element, ``(re+imj)`` with both parts at the print precision, padded to the
    widest element (one leading space for the non-negative ones when some element is negative)."""
    kind = "e" if OPTIONS["sci_mode"] else "f"
    digits = OPTIONS["precision"]

    def text(v) -> str:
        sign = "+" if v.imag >= 0 or v.imag != v.imag else ""
        return f"({v.real:.{digits}{kind}}{sign}{v.imag:.{digits}{kind}}j)"

    flat = _summary(array).reshape(-1)
    width = max((len(text(v)) for v in flat), default=0)
    signed = bool(flat.size) and bool((flat < 0).any())

    def item(v) -> str:
        s = text(v)
        if width <= len(s):
            return s
        return " " + s.ljust(width - 1) if signed and not v < 0 else s.ljust(width)

    return item


def _summary(array):
    """The entries a summarised print shows (``edgeitems`` at both ends of each long axis)."""
    if array.size <= OPTIONS["threshold"]:
        return array
    keep = OPTIONS["edgeitems"]
    for axis, n in enumerate(array.shape):
        if n > 2 * keep:
            array = np.concatenate([array.take(range(keep), axis), array.take(range(n - keep, n), axis)], axis)
    return array
