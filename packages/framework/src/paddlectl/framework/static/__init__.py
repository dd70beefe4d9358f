"""``paddle.static``: static mode (``Program``, ``program_guard``, ``data``, ``Executor``, ``nn.fc``), the
IR it records into (``ir``: Block/Operation/Value), its text form, tracing and InputSpec, the IR executor,
and data-dependent control flow (``cond``, ``while_loop``) that also runs eagerly."""

from types import SimpleNamespace

from ..ops.hashing import hash as _hash
from .control_flow import cond, while_loop
from .executor import run_program, specialize
from .input_spec import InputSpec
from .ir import Block, Operation, Value
from .layers import fc, sparse_embedding
from .parser import ParseError, parse_program
from .printer import print_program
from .static_mode import (
    Executor,
    Program,
    data,
    default_main_program,
    default_startup_program,
    global_scope,
    program_guard,
)
from .verifier import VerifyError, verify

nn = SimpleNamespace(cond=cond, while_loop=while_loop, fc=fc, sparse_embedding=sparse_embedding, hash=_hash)
"""Paddle's ``paddle.static.nn``: layers that create their parameters in the main program, and control flow."""


__all__ = [
    "Block", "Executor", "InputSpec", "Operation", "ParseError", "Program", "Value", "VerifyError", "cond", "data",
    "default_main_program", "default_startup_program", "global_scope", "nn", "parse_program", "print_program",
    "program_guard", "run_program", "specialize", "verify", "while_loop",
]  # fmt: skip
