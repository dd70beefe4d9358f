"""The IR's text form (DESIGN.md §4), one operation a line; ``static.parser`` reads it back.

::

    %x: f32[N,1,28,28] = input "x"
    %conv1.weight: f32[6,1,5,5] = param "conv1.weight"
    %1: f32[N,6,28,28] = conv2d(%x, %conv1.weight, %conv1.bias) {stride=[1,1], padding=[2,2]}  # lenet.py:30
    %2: f32[N,6,28,28] = relu(%1)
    %3: f32[N,10] = cond(%p) {
    ^then:
      ...
      yield %4
    ^else:
      yield %5
    }
    return %2

An absent optional input prints as ``_``; the trailing comment is the user's source line. Attr
values: ints, floats (``inf``/``nan`` spelled out), ``True``/``False``/``None``, JSON strings,
``[...]`` sequences, dtypes as IR names (``f32``), ``{"key": value}`` dicts and arrays as
``array(f32[2], [1.0, 2.0])``.
"""

from __future__ import annotations

import json
import math
from typing import TYPE_CHECKING

import numpy as np

from .dtype_words import dtype_short

if TYPE_CHECKING:  # the IR imports this module for Program.__str__
    from .ir import Block, Operation, Program, Value


def format_attr(value) -> str:
    """One attr value in the text form (the parser's ``parse_attr`` inverts it)."""
    if value is None or isinstance(value, bool):
        return repr(value)
    if isinstance(value, np.bool_):
        return repr(bool(value))
    if isinstance(value, int | np.integer):
        return str(int(value))
    if isinstance(value, float | np.floating):
        v = float(value)
        if math.isnan(v):
            return "nan"
        if math.isinf(v):
            return "inf" if v > 0 else "-inf"
        return repr(v)
    if isinstance(value, str):
        return json.dumps(value)
    if isinstance(value, np.dtype) or (isinstance(value, type) and issubclass(value, np.generic)):
        return dtype_short(value)
    if isinstance(value, np.ndarray):
        flat = ", ".join(format_attr(v) for v in value.reshape(-1).tolist())
        return f"array({dtype_short(value.dtype)}[{','.join(map(str, value.shape))}], [{flat}])"
    if isinstance(value, list | tuple):
        return "[" + ",".join(format_attr(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{json.dumps(str(k))}: {format_attr(v)}" for k, v in value.items()) + "}"
    raise TypeError(
        f"IR printer: attr value {value!r} of type {type(value).__name__} has no text form; "
        "ops must take plain values (numbers, strings, sequences, dtypes, arrays) as attrs"
    )


def _outs(values: list[Value]) -> str:
    return ", ".join(f"%{v.name}: {v.type_text}" for v in values)


def _operand(v) -> str:
    return "_" if v is None else f"%{v.name}"


def _op_lines(op: Operation, indent: str) -> list[str]:
    head = f"{indent}{_outs(op.outputs)} = "
    if op.name in ("input", "param"):
        line = f"{head}{op.name} {json.dumps(op.attrs['name'])}"
    else:
        line = f"{head}{op.name}({', '.join(_operand(v) for v in op.inputs)})"
        if op.attrs:
            line += " {" + ", ".join(f"{k}={format_attr(v)}" for k, v in op.attrs.items()) + "}"
    if op.blocks:
        lines = [line + " {"]
        labels = ("then", "else") if op.name == "cond" else ("cond", "body")
        for label, block in zip(labels, op.blocks, strict=False):
            lines += _block_lines(block, indent, label)
        lines.append(indent + "}")
        if op.loc:
            lines[0] += f"  # {op.loc}"
        return lines
    if op.loc:
        line += f"  # {op.loc}"
    return [line]


def _block_lines(block: Block, indent: str, label: str) -> list[str]:
    args = f"({_outs(block.args)})" if block.args else ""
    lines = [f"{indent}^{label}{args}:"]
    for op in block.ops:
        lines += _op_lines(op, indent + "  ")
    lines.append(f"{indent}  yield {', '.join(_operand(v) for v in block.yields)}".rstrip())
    return lines


def print_program(program: Program) -> str:
    """The whole program as text, ending with ``return`` of its outputs."""
    lines = []
    for op in program.block.ops:
        lines += _op_lines(op, "")
    lines.append(f"return {', '.join(_operand(v) for v in program.block.yields)}".rstrip())
    return "\n".join(lines) + "\n"
