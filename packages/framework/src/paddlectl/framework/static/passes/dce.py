"""Dead-code elimination: drop ops none of whose results is read, and weights no param refers to.

One backward sweep per block with use counts: removing an op releases its inputs, so a whole
dead chain goes in one sweep. Feeds (``input`` ops) stay: they are the program's interface.
"""

from __future__ import annotations

from ..ir import Block, Program


def _count_uses(program: Program) -> dict[int, int]:
    counts: dict[int, int] = {}
    for block in program.block.blocks():
        for op in block.ops:
            for v in op.inputs:
                if v is not None:
                    counts[id(v)] = counts.get(id(v), 0) + 1
        for v in block.yields:
            counts[id(v)] = counts.get(id(v), 0) + 1
    return counts


def _release(op, counts: dict[int, int]) -> None:
    for v in op.inputs:
        if v is not None:
            counts[id(v)] -= 1
    for sub in op.blocks:
        for inner in sub.walk():
            for v in inner.inputs:
                if v is not None:
                    counts[id(v)] -= 1
        for v in sub.yields:
            counts[id(v)] -= 1


def _sweep(block: Block, counts: dict[int, int]) -> int:
    removed = 0
    for op in reversed(list(block.ops)):
        if op.name != "input" and all(counts.get(id(v), 0) == 0 for v in op.outputs):
            _release(op, counts)
            block.remove(op)
            removed += 1
            continue
        for sub in op.blocks:
            removed += _sweep(sub, counts)
    return removed


def dce(program: Program, ctx) -> int:
    counts = _count_uses(program)
    removed = _sweep(program.block, counts)
    referenced = {op.attrs["name"] for op in program.walk() if op.name == "param"}
    for name in [n for n in program.weights if n not in referenced]:
        del program.weights[name]
    return removed
