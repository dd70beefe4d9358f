"""Common-subexpression elimination: an op equal to an earlier one (same op, same inputs, same
attrs) is dropped and its readers use the earlier result.

One forward sweep; a sub-block sees the table of the blocks around it (it may reuse an outer
result) but its own entries do not leak out. Sources are merged too: two ``param`` ops of one
weight, two equal ``constant``s. Feeds and nondeterministic ops are never merged.
"""

from __future__ import annotations

from ..ir import Block, Program, _freeze
from .base import deterministic


def _key(op, subst: dict) -> tuple | None:
    if op.name in ("input", "cond", "while") or not deterministic(op):
        return None
    inputs = tuple(None if v is None else id(subst.get(id(v), v)) for v in op.inputs)
    return op.name, inputs, _freeze(op.attrs), tuple((v.shape, v.dtype.str) for v in op.outputs)


def _sweep(block: Block, table: dict, subst: dict) -> int:
    merged = 0
    for op in list(block.ops):
        op.inputs = [None if v is None else subst.get(id(v), v) for v in op.inputs]
        for sub in op.blocks:
            merged += _sweep(sub, dict(table), subst)
        key = _key(op, subst)
        if key is None:
            continue
        earlier = table.get(key)
        if earlier is None:
            table[key] = op
            continue
        for old, new in zip(op.outputs, earlier.outputs, strict=True):
            subst[id(old)] = new
        block.remove(op)
        merged += 1
    block.yields = [subst.get(id(v), v) for v in block.yields]
    return merged


def cse(program: Program, ctx) -> int:
    return _sweep(program.block, {}, {})
