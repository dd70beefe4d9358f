"""The static-graph IR: Program / Block / Operation / Value.

A ``Program`` is one ``Block`` of ``Operation``s in execution order plus the weights its parameters
refer to. Every ``Value`` is defined exactly once (SSA) by one operation's output or as a block
argument, and carries a dtype and a shape whose dims are ints or symbolic expressions (``'N'``,
``'(H-1)//2+1'``, see ``core.symbolic``).

Operations are of three sorts, all walked the same way:

* sources: ``input`` (attr ``name``: the feed name), ``param`` (attr ``name``: a key of
  ``Program.weights``; the weight is a named constant, its Value is named after it), and
  ``constant`` (attr ``value``: a small literal array);
* compute: any op in ``core.op.REGISTRY``; ``attrs`` are exactly the keyword arguments of its
  ``forward`` and the shape rule ``infer`` gives its outputs' types;
* control flow, whose ``blocks`` are sub-blocks: ``cond`` (inputs ``[pred]``; blocks ``[then,
  else]``, no arguments, each ending in ``yield``) and ``while`` (inputs: the initial loop values;
  blocks ``[cond, body]``, each taking the loop values as arguments; ``cond`` yields one bool
  scalar, ``body`` yields the next loop values; outputs: the final loop values). A sub-block may
  use any value defined earlier in an enclosing block (lexical capture).

``Block.yields`` is what a block returns: the program's outputs for the main block, the branch or
loop results for sub-blocks.

Walking and rewriting (what passes do)::

    for op in program.walk():            # every op, sub-blocks included, in order
        ...
    block = program.block
    for op in list(block.ops):           # iterate over a copy when rewriting
        if op.name == "relu" and ...:
            program.replace_all_uses(op.outputs[0], op.inputs[0])   # rewire users (and yields)
            block.remove(op)                                      # then drop the op
    new = Operation("scale", [x], [program.new_value(spec.shape, spec.dtype)], {"scale": 2.0, ...})
    block.insert(index, new)             # or block.append(new)
    program.uses(value)                  # -> list of (Operation | Block, input index)

Create values with ``program.new_value`` so names stay unique. Run ``static.verifier.verify``
after every rewrite: it checks definition-before-use, single definition, sub-block structure and
that each op's types agree with its shape rule.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .dtype_words import dtype_short
from .printer import print_program

SOURCE_OPS = ("input", "param", "constant")
CONTROL_OPS = ("cond", "while")


class Value:
    """An SSA value: a unique ``name`` (printed ``%name``), ``shape`` (tuple of int | str) and dtype."""

    __slots__ = ("name", "shape", "dtype", "owner")

    def __init__(self, name: str, shape, dtype) -> None:
        self.name = name
        self.shape = tuple(shape)
        self.dtype = np.dtype(dtype)
        self.owner: Operation | Block | None = None  # the defining op, or the block it is an argument of

    @property
    def type_text(self) -> str:
        return f"{dtype_short(self.dtype)}[{','.join(str(d) for d in self.shape)}]"

    def __repr__(self) -> str:
        return f"%{self.name}: {self.type_text}"


@dataclass(eq=False)
class Operation:
    """One op: ``name`` (a REGISTRY op or a source/control op), ``inputs`` (Values; None for an
    absent optional input), ``outputs``, ``attrs``, sub-``blocks`` and the user's source location."""

    name: str
    inputs: list
    outputs: list
    attrs: dict = field(default_factory=dict)
    blocks: list = field(default_factory=list)
    loc: str | None = None
    parent: Block | None = field(default=None, repr=False)

    def __post_init__(self) -> None:
        self.inputs = list(self.inputs)
        self.outputs = list(self.outputs)
        for v in self.outputs:
            v.owner = self
        for b in self.blocks:
            b.owner = self

    @property
    def type(self) -> str:
        """Paddle's name for an op's kind (``op.type``): the op's name here."""
        return self.name


class Block:
    """Ops in execution order; ``args`` (loop-carried values of a ``while``) and ``yields``."""

    def __init__(self, args=(), ops=(), yields=()) -> None:
        self.args: list[Value] = list(args)
        for a in self.args:
            a.owner = self
        self.ops: list[Operation] = []
        self.yields: list[Value] = list(yields)
        self.owner: Operation | None = None
        for op in ops:
            self.append(op)

    def append(self, op: Operation) -> Operation:
        op.parent = self
        self.ops.append(op)
        return op

    def insert(self, index: int, op: Operation) -> Operation:
        op.parent = self
        self.ops.insert(index, op)
        return op

    def remove(self, op: Operation) -> None:
        self.ops.remove(op)
        op.parent = None

    def walk(self):
        """Every op of this block and its sub-blocks, depth first, in execution order."""
        for op in self.ops:
            yield op
            for b in op.blocks:
                yield from b.walk()

    def blocks(self):
        yield self
        for op in self.ops:
            for b in op.blocks:
                yield from b.blocks()


class Program:
    """A traced function: the main ``block`` and the ``weights`` (name -> ndarray) of its params."""

    def __init__(self, block: Block | None = None, weights: dict[str, np.ndarray] | None = None) -> None:
        self.block = block if block is not None else Block()
        self.weights: dict[str, np.ndarray] = dict(weights or {})
        self._counter = itertools.count()
        self._names: set[str] = {v.name for v in self.values()}

    # ----- building ----------------------------------------------------------------------------
    def new_value(self, shape, dtype, name: str | None = None) -> Value:
        """A fresh Value with a name no other value of the program has."""
        if name is None or name in self._names:
            base = name
            while True:
                n = next(self._counter)
                name = f"{base}_{n}" if base else str(n)
                if name not in self._names:
                    break
        self._names.add(name)
        return Value(name, shape, dtype)

    # ----- reading -----------------------------------------------------------------------------
    @property
    def inputs(self) -> list[Value]:
        return [op.outputs[0] for op in self.block.ops if op.name == "input"]

    @property
    def input_names(self) -> list[str]:
        return [op.attrs["name"] for op in self.block.ops if op.name == "input"]

    @property
    def outputs(self) -> list[Value]:
        return self.block.yields

    def walk(self):
        """Every operation, sub-blocks included, in execution order."""
        return self.block.walk()

    def values(self):
        for b in self.block.blocks():
            yield from b.args
            for op in b.ops:
                yield from op.outputs

    def uses(self, value: Value) -> list[tuple[Any, int]]:
        """Every (op, input index) reading ``value``, and (block, yield index) returning it."""
        found = []
        for b in self.block.blocks():
            for op in b.ops:
                found += [(op, i) for i, v in enumerate(op.inputs) if v is value]
            found += [(b, i) for i, v in enumerate(b.yields) if v is value]
        return found

    def replace_all_uses(self, old: Value, new: Value) -> None:
        """Point every reader (and yield) of ``old`` at ``new``."""
        for user, i in self.uses(old):
            if isinstance(user, Block):
                user.yields[i] = new
            else:
                user.inputs[i] = new

    # ----- equality ----------------------------------------------------------------------------
    def structure(self):
        """A comparable description: ops, attrs, types and wiring, independent of value names."""
        ids: dict[int, int] = {}

        def vid(v):
            if v is None:
                return None
            if id(v) not in ids:
                ids[id(v)] = len(ids)
            return ids[id(v)]

        def block(b: Block):
            args = tuple((vid(a), a.shape, a.dtype.str) for a in b.args)
            ops = tuple(
                (
                    op.name,
                    tuple(vid(v) for v in op.inputs),
                    tuple((vid(v), v.shape, v.dtype.str) for v in op.outputs),
                    _freeze(op.attrs),
                    tuple(block(sb) for sb in op.blocks),
                )
                for op in b.ops
            )
            return args, ops, tuple(vid(v) for v in b.yields)

        return block(self.block)

    def __eq__(self, other) -> bool:
        if not isinstance(other, Program):
            return NotImplemented
        return self.structure() == other.structure()

    __hash__ = None

    def __str__(self) -> str:
        return print_program(self)


def _freeze(value):
    if isinstance(value, dict):
        return tuple(sorted((k, _freeze(v)) for k, v in value.items()))
    if isinstance(value, list | tuple):
        return tuple(_freeze(v) for v in value)
    if isinstance(value, np.ndarray):
        return ("ndarray", value.dtype.str, value.shape, value.tobytes())
    if isinstance(value, np.dtype):
        return ("dtype", value.str)
    if isinstance(value, float) and value != value:
        return ("nan",)
    return value


def last_uses(block: Block) -> dict[int, int]:
    """For each value read in ``block`` (or its sub-blocks), the index of the last op reading it."""
    last: dict[int, int] = {}
    for i, op in enumerate(block.ops):
        for v in op.inputs:
            if v is not None:
                last[id(v)] = i
        for sub in op.blocks:
            for inner in sub.walk():
                for v in inner.inputs:
                    if v is not None:
                        last[id(v)] = i
            for v in sub.yields:
                last[id(v)] = i
    for v in block.yields:
        last[id(v)] = len(block.ops)
    return last
