"""``paddle.static``: the IR (Program/Block/Operation/Value), its text form, tracing and InputSpec, the executor,
and data-dependent control flow (``cond``, ``while_loop``) that also runs eagerly."""

from types import SimpleNamespace

from .control_flow import cond, while_loop
from .executor import Executor, run_program, specialize
from .input_spec import InputSpec
from .ir import Block, Operation, Program, Value
from .parser import ParseError, parse_program
from .printer import print_program
from .verifier import VerifyError, verify

nn = SimpleNamespace(cond=cond, while_loop=while_loop)
"""Paddle spells them ``paddle.static.nn.cond`` / ``paddle.static.nn.while_loop`` too."""


__all__ = [
    "Block", "Executor", "InputSpec", "Operation", "ParseError", "Program", "Value", "VerifyError", "cond", "nn",
    "parse_program", "print_program", "run_program", "specialize", "verify", "while_loop",
]  # fmt: skip
