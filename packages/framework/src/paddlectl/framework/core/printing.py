"""How a Tensor prints: ``paddle.set_printoptions`` sets these, ``Tensor.__repr__`` reads them.

Kept here rather than in NumPy's global print options, so a script that sets Paddle's options
does not change how its own NumPy arrays print."""

from __future__ import annotations

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


def array_options() -> dict:
    """The keyword arguments of ``np.array2string`` for the current options."""
    options = {
        "precision": OPTIONS["precision"],
        "threshold": OPTIONS["threshold"],
        "edgeitems": OPTIONS["edgeitems"],
        "max_line_width": OPTIONS["linewidth"],
    }
    if OPTIONS["sci_mode"]:
        digits = OPTIONS["precision"]
        options["formatter"] = {"float_kind": lambda v: f"{v:.{digits}e}"}
    return options
