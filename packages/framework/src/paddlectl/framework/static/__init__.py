"""``paddle.static``: static mode (``Program``, ``program_guard``, ``data``, ``Executor``, ``nn.fc``,
``append_backward``, ``CompiledProgram``, ``ExponentialMovingAverage``, ``Scope``), its model files
(``save_inference_model`` and its pieces, ``save``/``load`` of parameters), the IR it records into
(``ir``: Block/Operation/Value), its text form, tracing and InputSpec, the IR executor, and
data-dependent control flow (``cond``, ``while_loop``) that also runs eagerly."""

from types import SimpleNamespace

from ..metric.functional import accuracy
from ..nn.parameter import create_parameter
from ..ops.hashing import hash as _hash
from .backward import append_backward, gradients
from .compiled import BuildStrategy, CompiledProgram
from .control_flow import cond, while_loop
from .ema import ExponentialMovingAverage
from .executor import run_program, specialize
from .inference_io import (
    deserialize_persistables,
    deserialize_program,
    load_from_file,
    load_inference_model,
    normalize_program,
    save_inference_model,
    save_to_file,
    serialize_persistables,
    serialize_program,
)
from .input_spec import InputSpec
from .ir import Block, Operation, Value
from .layers import embedding, fc, sparse_embedding, spectral_norm, static_pylayer
from .parser import ParseError, parse_program
from .places import cpu_places, cuda_places
from .printer import print_program
from .program_state import load, load_program_state, save, set_program_state
from .scope import Scope, global_scope, scope_guard
from .static_mode import (
    Executor,
    Program,
    data,
    default_main_program,
    default_startup_program,
    name_scope,
    program_guard,
)
from .verifier import VerifyError, verify

nn = SimpleNamespace(
    cond=cond,
    while_loop=while_loop,
    embedding=embedding,
    fc=fc,
    sparse_embedding=sparse_embedding,
    spectral_norm=spectral_norm,
    static_pylayer=static_pylayer,
    hash=_hash,
)
"""Paddle's ``paddle.static.nn``: layers that create their parameters in the main program, and control flow."""


__all__ = [
    "Block", "BuildStrategy", "CompiledProgram", "Executor", "ExponentialMovingAverage", "InputSpec", "Operation", "ParseError", "Program",
    "Scope", "Value", "VerifyError", "accuracy", "append_backward", "cond", "cpu_places", "create_parameter", "cuda_places", "data",
    "default_main_program", "default_startup_program", "deserialize_persistables", "deserialize_program",
    "global_scope", "gradients", "load", "load_from_file", "load_inference_model", "load_program_state", "name_scope", "nn",
    "normalize_program", "parse_program", "print_program", "program_guard", "run_program", "save",
    "save_inference_model", "save_to_file", "scope_guard", "serialize_persistables", "serialize_program",
    "set_program_state", "specialize", "verify", "while_loop",
]  # fmt: skip
