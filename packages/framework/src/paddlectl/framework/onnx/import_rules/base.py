"""What every ONNX import rule shares: the ``Rule`` record, attribute decoding, and the helpers that
read an op's optional inputs and attributes-that-became-inputs the same way for every opset."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from ...errors import ConversionError, OnnxImportError
from ..builder import Builder
from ..dependency import onnx

INT_BIG = 2**31 - 1


@dataclass(frozen=True)
class Rule:
    """``convert(b, node, attrs, opset)`` -> outputs; ``attrs`` the attribute names it understands,
    ``since`` the first opset it was written for, ``check(attrs, opset)`` -> problems found before
    anything is built."""

    convert: Callable
    attrs: frozenset = frozenset()
    since: int = 1
    check: Callable | None = None


def one_of(name: str, allowed, default) -> Callable:
    """A ``Rule.check`` refusing a string attribute outside ``allowed``."""

    def check(a: dict, opset: int) -> list[str]:
        value = a.get(name, default)
        return [] if value in allowed else [f"{name}={value!r} is not supported; expected one of {sorted(allowed)}"]

    return check


def attrs_of(node) -> dict:
    out = {}
    for a in node.attribute:
        v = onnx.helper.get_attribute_value(a)
        try:
            out[a.name] = v.decode() if isinstance(v, bytes) else v
        except UnicodeDecodeError:
            raise OnnxImportError(
                f"node {node.name or '<unnamed>'!r} ({node.op_type}): attribute {a.name!r} is not valid UTF-8 text; "
                "the file is corrupted"
            ) from None
    return out


def item(b: Builder, x):
    """A Value or known array from an ONNX name, or ``x`` itself (a rule's intermediate)."""
    return b.get(x) if isinstance(x, str) else x


def rank(b: Builder, x) -> int:
    return len(item(b, x).shape)


def axis_of(axis: int, r: int) -> int:
    return axis + r if axis < 0 else axis


def arg(node, i: int) -> str:
    """The name of input ``i``, '' where it is omitted."""
    return node.input[i] if len(node.input) > i else ""


def known_list(b: Builder, node, i: int, what: str) -> list | None:
    """Input ``i`` as a list of Python numbers (it must be known), or None where it is omitted."""
    name = arg(node, i)
    return None if not name else b.require_known(name, what).reshape(-1).tolist()


def attr_or_input(b: Builder, node, a: dict, name: str, index: int, first_input_opset: int, opset: int):
    """An attribute that became input ``index`` at ``first_input_opset`` (axes, split, k...), as a
    list, or None where absent."""
    if opset < first_input_opset:
        value = a.get(name)
        return None if value is None else list(value) if isinstance(value, list | tuple) else [value]
    return known_list(b, node, index, f"{node.op_type} {name}")


def unary(op_name: str, **fixed) -> Rule:
    return Rule(lambda b, node, a, opset: b.op(op_name, [node.input[0]], **fixed))


LEGACY_BROADCAST = frozenset({"broadcast", "axis"})
"""Opset 6's binary ops broadcast B only when ``broadcast=1``, its dims aligned at ``axis``."""


def operands(b: Builder, node, a: dict, opset: int) -> list:
    """A binary op's inputs; before opset 7, B with ``broadcast=1`` and ``axis`` gets unit dims
    after its own so it lines up with A at ``axis`` (without ``axis`` the alignment is NumPy's)."""
    names = list(node.input)
    if opset >= 7 or not a.get("broadcast", 0) or "axis" not in a:
        return names
    ra, rb = rank(b, names[0]), rank(b, names[1])
    trailing = ra - axis_of(int(a["axis"]), ra) - rb
    if trailing <= 0:
        return names
    (aligned,) = b.op("getitem", [names[1]], spec=[["slice", None, None, None]] * rb + [["none"]] * trailing)
    return [names[0], aligned]


def binary(op_name: str) -> Rule:
    return Rule(lambda b, node, a, opset: b.op(op_name, operands(b, node, a, opset)), LEGACY_BROADCAST)


def dtype_of(b: Builder, x) -> np.dtype:
    return np.dtype(item(b, x).dtype)


def static_shape(b: Builder, x, what: str) -> tuple:
    """The fixed shape of ``x``; a symbolic dim is refused with the fix."""
    shape = tuple(item(b, x).shape)
    if not all(isinstance(d, int) for d in shape):
        raise ConversionError(f"{b.where()}: {what} needs fixed sizes, got {list(shape)}; specialize the input sizes")
    return shape


def keep_dtype(b: Builder, out, like: str):
    """``out`` cast to ``like``'s dtype where an op widened it (NumPy sums ints as int64; ONNX does not)."""
    if np.dtype(out.dtype) == dtype_of(b, like):
        return out
    (cast,) = b.op("cast", [out], dtype=dtype_of(b, like).name)
    return cast
