"""Runs a Program on arrays: each op's own ``forward``, in program order.

Feeds are checked against the input types first (rank, dtype, static dims, and one size per
symbol across all inputs), so a wrong feed fails with a clear message instead of deep inside an
op. ``specialize`` substitutes concrete sizes for the symbols, giving a program with fixed
shapes (a loaded model re-specialised to one input shape). With ``free_dead=True`` an
intermediate array is dropped right after its last use, which bounds peak memory by the live
set instead of the whole program.
"""

from __future__ import annotations

import numpy as np

from ..core import symbolic
from ..core.op import REGISTRY, Context
from ..errors import DTypeError, ShapeError
from .ir import Block, Operation, Program, Value, last_uses
from .verifier import verify


def bind_inputs(program: Program, feeds: list) -> dict[str, int]:
    """Symbol sizes from the feeds; ShapeError/DTypeError name the input and what was expected."""
    inputs = program.inputs
    names = program.input_names
    if len(feeds) != len(inputs):
        raise ShapeError(f"the program takes {len(inputs)} inputs {names}, got {len(feeds)}")
    bindings: dict[str, int] = {}
    for name, value, array in zip(names, inputs, feeds, strict=True):
        if array.dtype != value.dtype:
            raise DTypeError(
                f"input {name!r}: expected dtype {value.dtype}, got {array.dtype}; convert it with .astype('{value.dtype}')"
            )
        if array.ndim != len(value.shape):
            raise ShapeError(
                f"input {name!r}: expected rank {len(value.shape)} {list(value.shape)}, got {list(array.shape)}"
            )
        for axis, (d, n) in enumerate(zip(value.shape, array.shape, strict=True)):
            if isinstance(d, int):
                if d != n:
                    raise ShapeError(
                        f"input {name!r}: expected shape {list(value.shape)}, got {list(array.shape)} (axis {axis})"
                    )
            elif symbolic.symbols(d) == {d}:
                if bindings.setdefault(d, n) != n:
                    raise ShapeError(
                        f"input {name!r}: dim {d} is {n} here but {bindings[d]} in an earlier input; they must agree"
                    )
            elif (multiple := _multiple_of(d)) is not None:
                symbol, k = multiple
                if n % k:
                    raise ShapeError(
                        f"input {name!r}: axis {axis} must be a multiple of {k} (the model's shape is "
                        f"{list(value.shape)}), got {n}; resize or pad the input to a multiple of {k}"
                    )
                bindings.setdefault(symbol, n // k)
    for name, value, array in zip(names, inputs, feeds, strict=True):
        want = tuple(symbolic.evaluate(d, bindings) for d in value.shape)
        if want != array.shape:
            raise ShapeError(
                f"input {name!r}: expected shape {list(value.shape)} = {list(want)}, got {list(array.shape)}"
            )
    return bindings


def _multiple_of(dim) -> tuple[str, int] | None:
    """``'32*H'`` -> ``('H', 32)``: an input dim declared as a multiple of a symbol (an imported model
    whose shape arithmetic only holds for such sizes), else None."""
    poly = symbolic.to_poly(dim)
    if len(poly) == 1:
        ((monomial, k),) = poly.items()
        if len(monomial) == 1 and k > 0 and symbolic.symbols(monomial[0]) == {monomial[0]}:
            return monomial[0], k
    return None


class Executor:
    """Runs one program; thread-safe (no state changes after construction), weights shared read-only."""

    def __init__(self, program: Program, free_dead: bool = False) -> None:
        self.program = program
        self.free_dead = free_dead
        self._last = {id(b): last_uses(b) for b in program.block.blocks()} if free_dead else {}

    def run(self, feeds: list) -> list[np.ndarray]:
        feeds = [np.asarray(f) for f in feeds]
        bind_inputs(self.program, feeds)
        env: dict[int, np.ndarray] = {}
        by_name = dict(zip(self.program.input_names, feeds, strict=True))
        return self._block(self.program.block, env, by_name)

    def _block(self, block: Block, env: dict, feeds: dict) -> list[np.ndarray]:
        last = self._last.get(id(block))
        for i, op in enumerate(block.ops):
            self._op(op, env, feeds)
            if last is not None:
                for v in op.inputs:
                    if v is not None and last.get(id(v)) == i and v.owner is not None and v.owner.name != "param":
                        env.pop(id(v), None)
        return [env[id(v)] for v in block.yields]

    def _op(self, op: Operation, env: dict, feeds: dict) -> None:
        name = op.name
        if name == "input":
            env[id(op.outputs[0])] = feeds[op.attrs["name"]]
            return
        if name == "param":
            env[id(op.outputs[0])] = self.program.weights[op.attrs["name"]]
            return
        if name == "constant":
            env[id(op.outputs[0])] = op.attrs["value"]
            return
        args = [None if v is None else env[id(v)] for v in op.inputs]
        if name == "cond":
            branch = op.blocks[0] if bool(np.asarray(args[0]).reshape(-1)[0]) else op.blocks[1]
            outs = self._block(branch, dict(env), feeds)
        elif name == "while":
            outs = args
            cond, body = op.blocks
            while True:
                inner = dict(env)
                inner.update((id(a), x) for a, x in zip(cond.args, outs, strict=True))
                if not bool(np.asarray(self._block(cond, inner, feeds)[0]).reshape(-1)[0]):
                    break
                inner = dict(env)
                inner.update((id(a), x) for a, x in zip(body.args, outs, strict=True))
                outs = self._block(body, inner, feeds)
        else:
            ctx = Context((False,) * len(args), op.attrs)
            out = REGISTRY[name].forward(ctx, *args, **op.attrs)
            outs = out if isinstance(out, tuple) else (out,)
        for v, a in zip(op.outputs, outs, strict=True):
            env[id(v)] = a


def run_program(program: Program, feeds: list) -> list[np.ndarray]:
    """One-shot convenience: ``Executor(program).run(feeds)``."""
    return Executor(program).run(feeds)


def specialize(program: Program, bindings: dict[str, int]) -> Program:
    """A copy of ``program`` with every symbol replaced by its size (fixed shapes), verified."""
    from .parser import parse_program
    from .printer import print_program

    copy = parse_program(print_program(program), program.weights)
    for v in copy.values():
        v.shape = tuple(symbolic.simplify(symbolic.evaluate(d, bindings)) for d in v.shape)
    return verify(copy)


def value_types(values: list[Value]) -> list[dict]:
    """JSON-able (shape, dtype) of values, as stored in a model's metadata."""
    return [{"shape": list(v.shape), "dtype": v.dtype.name} for v in values]
