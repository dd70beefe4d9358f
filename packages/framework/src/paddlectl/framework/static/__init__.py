"""``paddle.static``: the IR (Program/Block/Operation/Value), its text form, tracing, the executor,
and data-dependent control flow (``cond``, ``while_loop``) that also runs eagerly."""

from types import SimpleNamespace

from .control_flow import cond, while_loop
from .executor import Executor, run_program, specialize
from .ir import Block, Operation, Program, Value
from .parser import ParseError, parse_program
from .printer import print_program
from .verifier import VerifyError, verify

nn = SimpleNamespace(cond=cond, while_loop=while_loop)
"""Paddle spells them ``paddle.static.nn.cond`` / ``paddle.static.nn.while_loop`` too."""


def __getattr__(name):
    if name == "InputSpec":  # paddle.static.InputSpec is the jit one; imported late (jit imports static)
        from ..jit.input_spec import InputSpec

        return InputSpec
    raise AttributeError(f"module 'paddle.static' has no attribute {name!r}")


__all__ = [
    "Block", "Executor", "Operation", "ParseError", "Program", "Value", "VerifyError", "cond", "nn",
    "parse_program", "print_program", "run_program", "specialize", "verify", "while_loop",
]  # fmt: skip
