"""The verifier: run after tracing, parsing and every pass, so a broken rewrite fails where it happens.

It checks that every value is defined once and before each use (in its block, as a block argument,
or earlier in an enclosing block), that sub-blocks of ``cond``/``while`` have the right arguments
and yields, and that every op's output types are exactly what its shape rule gives for its inputs.
"""

from __future__ import annotations

import math

import numpy as np

from ..core import symbolic
from ..core.op import REGISTRY, Spec
from ..errors import PaddlectlError
from .ir import Block, Operation, Program, Value


class VerifyError(PaddlectlError, ValueError):
    """A program breaks an IR invariant; the message names the op and the broken rule."""


def infer_outputs(op_name: str, inputs: list, attrs: dict) -> list[Spec]:
    """The output Specs the registered shape rule gives, dims in canonical form."""
    opdef = REGISTRY[op_name]
    specs = [None if v is None else Spec(tuple(v.shape), v.dtype) for v in inputs]
    out = opdef.infer(*specs, **attrs)
    outs = list(out) if isinstance(out, tuple | list) else [out]
    return [Spec(tuple(symbolic.simplify(d) for d in s.shape), np.dtype(s.dtype)) for s in outs]


def verify(program: Program) -> Program:
    """Raise VerifyError on the first broken invariant; return the program for chaining."""
    defined: set[int] = set()
    names: set[str] = set()
    _verify_block(program, program.block, [], defined, names)
    for op in program.block.ops:
        if op.name == "input" and not isinstance(op.attrs.get("name"), str):
            raise VerifyError(f"input {op.outputs[0]!r} needs a string attr 'name'")
    feeds = program.input_names
    if len(set(feeds)) != len(feeds):
        raise VerifyError(f"input names must be unique, got {feeds}")
    return program


MAX_ELEMENTS = 2**31
"""The most elements a value of a loaded model may declare (per unit of its symbolic dims): 8 GiB
of float32. A hostile file declaring more (a Resize by 1e5) is refused at load, not at its first
run with a MemoryError."""


def check_sizes(program: Program, limit: int = MAX_ELEMENTS) -> Program:
    """Raise VerifyError for the first value whose fixed dims hold more than ``limit`` elements."""
    for op in program.walk():
        for v in op.outputs:
            count = math.prod(d for d in v.shape if isinstance(d, int))
            if count > limit:
                raise VerifyError(
                    f"{_where(op)}: value %{v.name} is {v.type_text}, {count:.3g} elements (per unit of its symbolic "
                    f"dims), more than the {limit:.3g} a loaded model may declare"
                )
    return program


def _where(op: Operation) -> str:
    out = ", ".join(repr(v) for v in op.outputs)
    return f"op {op.name} ({out}){' at ' + op.loc if op.loc else ''}"


class _Where:
    """``_where(op)``, formatted only when an error message is built: verification runs after
    every pass, and spelling out each op's types took a third of a model's load (PP-OCRv4 det)."""

    __slots__ = ("op",)

    def __init__(self, op: Operation) -> None:
        self.op = op

    def __str__(self) -> str:
        return _where(self.op)


def _define(value, defined: set, names: set, scope: set, where) -> None:
    if id(value) in defined or value.name in names:
        raise VerifyError(f"{where}: value %{value.name} is defined more than once; give each value a fresh name")
    defined.add(id(value))
    names.add(value.name)
    scope.add(id(value))


def _verify_block(program: Program, block: Block, outer: list[set], defined: set, names: set) -> None:
    scope: set[int] = set()
    scopes = [*outer, scope]
    for a in block.args:
        _define(a, defined, names, scope, "block argument")
    for op in block.ops:
        if op.parent is not block:
            raise VerifyError(f"{_where(op)}: its parent link does not point at the block holding it")
        for i, v in enumerate(op.inputs):
            if v is None:
                continue
            if not any(id(v) in s for s in scopes):
                raise VerifyError(f"{_where(op)}: input {i} %{v.name} is used before it is defined (or out of scope)")
        for b in op.blocks:
            _verify_block(program, b, scopes, defined, names)
        _check_op(program, op)
        for v in op.outputs:
            _define(v, defined, names, scope, _Where(op))
    for i, v in enumerate(block.yields):
        if not isinstance(v, Value):
            raise VerifyError(f"block yield {i} is {type(v).__name__}, not a value defined in the program")
        if not any(id(v) in s for s in scopes):
            raise VerifyError(f"block yield {i} %{v.name} is not defined in the block or an enclosing one")


def _same_type(a, b) -> bool:
    return tuple(a.shape) == tuple(b.shape) and np.dtype(a.dtype) == np.dtype(b.dtype)


def _check_op(program: Program, op: Operation) -> None:
    where = _Where(op)
    if op.name in ("input", "param", "constant"):
        if op.inputs or len(op.outputs) != 1 or op.blocks:
            raise VerifyError(f"{where}: a {op.name} op has no inputs, no blocks and one output")
        out = op.outputs[0]
        if op.name == "param":
            name = op.attrs.get("name")
            if name not in program.weights:
                raise VerifyError(f"{where}: parameter {name!r} has no weight in the program")
            w = program.weights[name]
            if tuple(w.shape) != out.shape or w.dtype != out.dtype:
                raise VerifyError(
                    f"{where}: weight {name!r} is {w.dtype}{list(w.shape)}, the value says {out.type_text}"
                )
        if op.name == "constant":
            value = op.attrs.get("value")
            if not isinstance(value, np.ndarray) or value.shape != out.shape or value.dtype != out.dtype:
                raise VerifyError(f"{where}: constant needs an ndarray attr 'value' of type {out.type_text}")
        return
    if op.name == "cond":
        _check_cond(op, where)
        return
    if op.name == "while":
        _check_while(op, where)
        return
    if op.blocks:
        raise VerifyError(f"{where}: only cond and while ops hold sub-blocks")
    if op.name not in REGISTRY:
        raise VerifyError(f"{where}: unknown op {op.name!r}; it is neither a registered op nor an IR op")
    try:
        specs = infer_outputs(op.name, op.inputs, op.attrs)
    except (ValueError, TypeError, KeyError, IndexError) as exc:  # a rule rejecting its inputs
        raise VerifyError(f"{where}: its shape rule rejects its inputs: {exc}") from None
    if len(specs) != len(op.outputs):
        raise VerifyError(f"{where}: the shape rule gives {len(specs)} outputs, the op has {len(op.outputs)}")
    for v, s in zip(op.outputs, specs, strict=True):
        if not _same_type(v, s):
            want = f"{s.dtype}{list(s.shape)}"
            raise VerifyError(f"{where}: output %{v.name} is {v.type_text}, its shape rule gives {want}")


def _check_cond(op: Operation, where: _Where) -> None:
    if len(op.inputs) != 1 or len(op.blocks) != 2:
        raise VerifyError(f"{where}: cond takes one predicate input and two blocks (then, else)")
    pred = op.inputs[0]
    if pred.dtype != np.bool_ or any(d != 1 for d in pred.shape):
        raise VerifyError(f"{where}: the predicate must be a bool scalar, got {pred.type_text}")
    for b in op.blocks:
        if b.args:
            raise VerifyError(f"{where}: cond branches take no arguments")
        if len(b.yields) != len(op.outputs) or not all(map(_same_type, b.yields, op.outputs)):
            raise VerifyError(f"{where}: each branch must yield values of the op's output types")


def _check_while(op: Operation, where: _Where) -> None:
    if len(op.blocks) != 2:
        raise VerifyError(f"{where}: while takes two blocks (cond, body)")
    cond, body = op.blocks
    carried = op.inputs
    if len(op.outputs) != len(carried) or not all(map(_same_type, op.outputs, carried)):
        raise VerifyError(f"{where}: outputs must match the loop values' types")
    for b in (cond, body):
        if len(b.args) != len(carried) or not all(map(_same_type, b.args, carried)):
            raise VerifyError(f"{where}: each block takes the loop values as arguments")
    if len(cond.yields) != 1 or cond.yields[0].dtype != np.bool_ or any(d != 1 for d in cond.yields[0].shape):
        raise VerifyError(f"{where}: the cond block must yield one bool scalar")
    if len(body.yields) != len(carried) or not all(map(_same_type, body.yields, carried)):
        raise VerifyError(f"{where}: the body must yield the next loop values, same types as the loop values")
