"""Paddle's static-graph model files (``paddle.static.save_inference_model`` and the pieces it is
made of), written in this project's saved-model format.

``save_inference_model(path_prefix, feed_vars, fetch_vars, executor)`` prunes the program to the
ops the fetches need from the feeds and writes it, with the parameters' current values, as a
saved-model directory at ``path_prefix`` (``model.json`` + ``model.safetensors``, what
``jit.save`` writes), so ``load_inference_model``, ``jit.load`` and ``paddle.inference`` read it.
Paddle writes ``path_prefix.json``/``.pdmodel`` and ``.pdiparams`` instead: protobuf and pickle,
which this project neither writes nor executes.

The pieces have the same two parts: ``serialize_program`` gives the pruned program's IR text
(UTF-8 bytes), ``serialize_persistables`` the weights it reads (safetensors bytes);
``deserialize_program`` reads the text into a program that waits for its weights, and
``deserialize_persistables`` gives it them (or sets a recording program's parameters by name);
``save_to_file``/``load_from_file`` write and read such bytes (atomically).
"""

from __future__ import annotations

import copy
import os

import numpy as np
import safetensors
import safetensors.numpy

from ..core.tensor import Tensor
from ..errors import CheckpointError, ConfigError, ShapeError
from ..utils.fileio import atomic_write
from .inference_program import InferenceProgram
from .ir import Block
from .ir import Program as IRProgram
from .printer import print_program
from .saved_model import read_model_dir, write_model_dir
from .static_mode import Executor, Program, default_main_program
from .verifier import verify


def _tensors(what: str, items) -> list[Tensor]:
    items = list(items) if isinstance(items, list | tuple) else [items]
    if not items or not all(isinstance(t, Tensor) for t in items):
        raise ConfigError(f"{what} must be a Tensor or a non-empty list of the Tensors the program built")
    return items


def _recorded(program) -> Program:
    program = default_main_program() if program is None else program
    if not isinstance(program, Program):
        raise ConfigError(f"program must be a paddle.static.Program, got {type(program).__name__}")
    return program


def pruned(feed_vars, fetch_vars, program=None) -> IRProgram:
    """The recorded ops that compute ``fetch_vars`` from ``feed_vars``, inputs in ``feed_vars``'
    order, with the weights those ops read at their current values."""
    program = _recorded(program)
    feeds, fetches = _tensors("feed_vars", feed_vars), _tensors("fetch_vars", fetch_vars)
    tracer = program._tracer
    for t in feeds:
        if program._feeds.get(t.name) is not t:
            raise ConfigError(f"feed_vars: {t.name!r} is not a paddle.static.data input of this program")
    for t in fetches:
        if not tracer.is_traced(t) and program._feeds.get(t.name) is not t:
            raise ConfigError(f"fetch_vars: {t.name!r} was not computed by this program; pass what its ops returned")
    graph = program._ir_program(fetches)
    feed_values = [tracer.value_of(t) for t in feeds]
    fed = {id(v) for v in feed_values}
    unfed = {op.attrs["name"] for op in graph.block.ops if op.name == "input" and id(op.outputs[0]) not in fed}
    if unfed:
        raise ConfigError(
            f"fetch_vars depend on the inputs {sorted(unfed)}, which are not in feed_vars; add them to feed_vars"
        )
    inputs = {id(op.outputs[0]): op for op in program._ops() if op.name == "input"}
    ops = [copy.copy(inputs[id(v)]) for v in feed_values]
    ops += [op for op in graph.block.ops if op.name != "input"]
    used = {op.attrs["name"] for op in ops if op.name == "param"}
    weights = {name: array for name, array in graph.weights.items() if name in used}
    return verify(IRProgram(Block(ops=ops, yields=graph.block.yields), weights))


def _spec(name: str, value) -> dict:
    return {"name": name, "shape": list(value.shape), "dtype": value.dtype.name}


def save_inference_model(path_prefix, feed_vars, fetch_vars, executor, **kwargs) -> None:
    """Write the program from ``feed_vars`` to ``fetch_vars`` as a saved-model directory at
    ``path_prefix`` (``program=`` picks another program than the default main one)."""
    _check_executor(executor)
    program = kwargs.pop("program", None)
    for switch in ("clip_extra", "legacy_format"):  # Paddle's protobuf-format switches: one format here
        kwargs.pop(switch, None)
    if kwargs:
        raise ConfigError(f"save_inference_model: unknown options {sorted(kwargs)}")
    if not isinstance(path_prefix, str | os.PathLike) or not os.fspath(path_prefix):
        raise ConfigError(f"save_inference_model: path_prefix must be a path, got {path_prefix!r}")
    graph = pruned(feed_vars, fetch_vars, program)
    fetches = _tensors("fetch_vars", fetch_vars)
    meta = {
        "inputs": [_spec(name, v) for name, v in zip(graph.input_names, graph.inputs, strict=True)],
        "outputs": [_spec(t.name, v) for t, v in zip(fetches, graph.outputs, strict=True)],
        "output_structure": "tensor" if len(fetches) == 1 else "list",
    }
    write_model_dir(path_prefix, graph, meta)


def load_inference_model(path_prefix, executor, **kwargs) -> list:
    """``[program, feed_target_names, fetch_targets]`` of a model ``save_inference_model`` (or
    ``jit.save``) wrote at ``path_prefix``."""
    _check_executor(executor)
    if kwargs:
        raise ConfigError(f"load_inference_model: unknown options {sorted(kwargs)}")
    program = InferenceProgram(read_model_dir(path_prefix).program)
    return [program, program.feed_target_names, program.fetch_targets]


def normalize_program(program, feed_vars, fetch_vars, **kwargs) -> InferenceProgram:
    """``program`` pruned to the ops from ``feed_vars`` to ``fetch_vars``, ready to run or save."""
    return InferenceProgram(pruned(feed_vars, fetch_vars, _recorded(program)))


def serialize_program(feed_vars, fetch_vars, **kwargs) -> bytes:
    """The pruned program's IR text, UTF-8 (its weights are ``serialize_persistables``')."""
    return print_program(pruned(feed_vars, fetch_vars, kwargs.get("program"))).encode("utf-8")


def serialize_persistables(feed_vars, fetch_vars, executor, **kwargs) -> bytes:
    """The weights the pruned program reads, as a safetensors blob."""
    _check_executor(executor)
    weights = pruned(feed_vars, fetch_vars, kwargs.get("program")).weights
    return safetensors.numpy.save({k: np.ascontiguousarray(v) for k, v in weights.items()})


def deserialize_program(data: bytes) -> InferenceProgram:
    """A program read from ``serialize_program``'s bytes; it runs once ``deserialize_persistables``
    has given it its weights."""
    if not isinstance(data, bytes | bytearray):
        raise ConfigError(
            f"deserialize_program: data must be the bytes serialize_program gave, got {type(data).__name__}"
        )
    try:
        text = bytes(data).decode("utf-8")
    except UnicodeDecodeError:
        raise CheckpointError("deserialize_program: the data is not a program serialize_program wrote") from None
    return InferenceProgram(text=text)


def deserialize_persistables(program, data: bytes, executor) -> None:
    """Give ``program`` the weights in ``data`` (``serialize_persistables``' bytes): a program from
    ``deserialize_program`` is parsed over them; a recording Program's parameters take the values
    of the same names."""
    _check_executor(executor)
    try:
        weights = safetensors.numpy.load(bytes(data))
    except (safetensors.SafetensorError, ValueError, TypeError) as exc:
        raise CheckpointError(f"deserialize_persistables: the data is not a safetensors blob ({exc})") from None
    if isinstance(program, InferenceProgram):
        program.attach_weights(weights)
        return
    for name, tensor in _recorded(program)._tracer.params.values():
        if name in weights:
            _assign(tensor, weights[name], name)


def _assign(tensor: Tensor, array: np.ndarray, name: str) -> None:
    if tuple(tensor.shape) != array.shape:
        raise ShapeError(f"{name!r} has shape {tensor.shape} in the program, {list(array.shape)} in the data")
    tensor.set_value(array.astype(tensor.dtype))


def save_to_file(path, content: bytes) -> None:
    """Write ``content`` to ``path`` (atomically: a reader never sees half of it)."""
    if not isinstance(content, bytes | bytearray):
        raise ConfigError(f"save_to_file: content must be bytes, got {type(content).__name__}")
    with atomic_write(os.fspath(path), "wb") as f:
        f.write(content)


def load_from_file(path) -> bytes:
    """The bytes ``save_to_file`` wrote at ``path``."""
    path = os.fspath(path)
    if not os.path.isfile(path):
        raise CheckpointError(f"load_from_file: {path} does not exist")
    with open(path, "rb") as f:
        return f.read()


def _check_executor(executor) -> None:
    if not isinstance(executor, Executor):
        raise ConfigError(f"executor must be a paddle.static.Executor, got {type(executor).__name__}")


__all__ = [
    "deserialize_persistables", "deserialize_program", "load_from_file", "load_inference_model",
    "normalize_program", "save_inference_model", "save_to_file", "serialize_persistables", "serialize_program",
]  # fmt: skip
