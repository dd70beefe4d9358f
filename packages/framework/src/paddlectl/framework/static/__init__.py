"""``paddle.static``: the IR (Program/Block/Operation/Value), its text form, tracing, the executor,
and data-dependent control flow (``cond``, ``while_loop``) that also runs eagerly."""

from .ir import Block, Operation, Program, Value
from .verifier import VerifyError, verify

__all__ = ["Block", "Operation", "Program", "Value", "VerifyError", "verify"]
