"""Constant folding: an op whose inputs are all constants or foldable weights is run once, at
load time, and becomes a weight itself.

In a predictor every weight is frozen, so every param is foldable (``PassContext.foldable`` can
narrow that). The folded result keeps the op's exact dtype and shape. An op whose result would
be much larger than its inputs (``expand`` of a scalar to a big tensor) is left alone: folding it
would trade a cheap op for memory.
"""

from __future__ import annotations

import numpy as np

from ...core.op import REGISTRY, Context
from ..ir import Program
from .base import add_param, deterministic, known_array

_GROWTH_LIMIT = 4  # folded bytes may be at most this many times the inputs' bytes (or 64 KiB)


def constant_fold(program: Program, ctx) -> int:
    block = program.block
    folded = 0
    for op in list(block.ops):
        if op.name in ("input", "param", "constant", "cond", "while") or not deterministic(op):
            continue
        if op.name not in REGISTRY:
            continue
        arrays = [None if v is None else known_array(v, program, ctx) for v in op.inputs]
        if any(a is None for a, v in zip(arrays, op.inputs, strict=True) if v is not None):
            continue
        if not all(isinstance(d, int) for v in op.outputs for d in v.shape):
            continue  # only an input-free op can have symbolic dims here; it depends on the feed
        in_bytes = sum(a.nbytes for a in arrays if a is not None)
        out_bytes = sum(int(np.prod(v.shape)) * v.dtype.itemsize for v in op.outputs)
        if out_bytes > max(_GROWTH_LIMIT * in_bytes, 1 << 16):
            continue
        out = REGISTRY[op.name].forward(Context((False,) * len(arrays), op.attrs), *arrays, **op.attrs)
        outs = out if isinstance(out, tuple) else (out,)
        index = block.ops.index(op)
        for value, result in zip(op.outputs, outs, strict=True):
            result = np.array(result, dtype=value.dtype, copy=True).reshape(value.shape)
            new = add_param(program, block, index, f"folded.{op.name}", result)
            program.replace_all_uses(value, new.outputs[0])
            index += 1
        block.remove(op)
        folded += 1
    return folded
