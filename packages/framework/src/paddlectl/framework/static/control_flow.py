"""``static.cond`` and ``static.while_loop``: data-dependent control flow that traces into
sub-blocks, and simply runs in eager mode (so the same model code serves both)."""

from __future__ import annotations

from ..core.state import STATE
from ..core.tensor import Tensor
from ..errors import ConversionError


def _flag(value) -> bool:
    if not isinstance(value, Tensor) or value._data.size != 1:
        raise ConversionError("the predicate of cond/while_loop must be a bool tensor with one element")
    return bool(value._data.reshape(-1)[0])


def cond(pred, true_fn=None, false_fn=None, name=None, return_names=None):
    """``true_fn()`` if ``pred`` else ``false_fn()``; traced, both branches become sub-blocks."""
    if STATE.tracer is not None:
        return STATE.tracer.cond(pred, true_fn, false_fn)
    chosen = true_fn if _flag(pred) else false_fn
    return None if chosen is None else chosen()


def while_loop(cond, body, loop_vars, is_test=False, name=None):
    """``while cond(*vars): vars = body(*vars)``; returns the final loop vars as a list."""
    if not isinstance(loop_vars, list | tuple) or not loop_vars:
        raise ConversionError("while_loop: loop_vars must be a non-empty list of Tensors")
    if STATE.tracer is not None:
        return STATE.tracer.while_loop(cond, body, list(loop_vars))
    values = list(loop_vars)
    while _flag(cond(*values)):
        out = body(*values)
        values = [out] if isinstance(out, Tensor) else list(out)
        if len(values) != len(loop_vars):
            raise ConversionError(f"while_loop: body returned {len(values)} values for {len(loop_vars)} loop vars")
    return values
