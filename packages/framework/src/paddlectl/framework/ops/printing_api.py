"""``paddle.set_printoptions`` at the top level (the options live in core/printing.py)."""

from ..core.printing import set_printoptions  # noqa: F401

TOP_LEVEL = ["set_printoptions"]
