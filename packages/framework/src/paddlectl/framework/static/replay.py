"""A Program's ops replayed eagerly, each called through its record as the traced code called it,
so the tape records them and gradients reach the inputs and the weights: how a loaded model is
fine-tuned (``jit.load``'s ``TranslatedLayer`` in training). The executor stays the way to run a
program for its values; this is the way to differentiate one.
"""

from __future__ import annotations

from ..core.op import REGISTRY
from ..core.tensor import Tensor
from ..errors import ConversionError
from ..ops._util import constant
from .ir import CONTROL_OPS, Program


def replay(program: Program, inputs: list[Tensor], weights: dict[str, Tensor]) -> list[Tensor]:
    """The program's outputs computed from ``inputs`` (in ``program.inputs`` order) and ``weights``
    (by the names its ``param`` ops read), op by op through dispatch."""
    values: dict[int, Tensor] = {}
    feeds = iter(inputs)
    for op in program.block.ops:
        if op.name == "input":
            results = (next(feeds),)
        elif op.name == "param":
            results = (weights[op.attrs["name"]],)
        elif op.name == "constant":
            results = (constant(op.attrs["value"]),)
        elif op.name in CONTROL_OPS:
            raise ConversionError(
                f"a program with a {op.name!r} op cannot be replayed for gradients ({op.loc or 'no location'}); "
                "fine-tune the model from its Python code, or run it without gradients"
            )
        else:
            args = [None if v is None else values[id(v)] for v in op.inputs]
            out = REGISTRY[op.name](*args, **op.attrs)
            results = out if isinstance(out, tuple) else (out,)
        values.update((id(v), t) for v, t in zip(op.outputs, results, strict=True))
    return [values[id(v)] for v in program.block.yields]
