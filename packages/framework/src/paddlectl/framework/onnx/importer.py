"""Read an ONNX model (with the ``onnx`` package) into a paddlectl Program and saved-model metadata.

Nothing from the file is executed: the protobuf is parsed by ``onnx``, every node is mapped by
``converters.RULES``, and unsupported ops/attributes are all reported before any conversion.
Symbolic input dims stay symbolic: an ONNX ``dim_param`` that is a valid name is kept, others
(``p2o.DynamicDimension.0``, ``?``, unnamed or -1 dims) get ``N``/``C``/``H``/``W``-style names by
axis (a ``dim_value`` of 0 is a fixed, empty dim: reductions over it are their identities) (the mapping is kept in the metadata under ``source.symbols``). Initializers become weights,
``metadata_props`` become ``meta["metadata"]``.
"""

from __future__ import annotations

import os
import re

import numpy as np

from ..errors import ConversionError, OnnxImportError, PaddlectlError
from ..jit.saved_model import SavedModel, write_model_dir
from ..static.verifier import check_sizes, verify
from .builder import Builder, clean_name
from .converters import RULES, attrs_of, check_graph
from .dependency import onnx
from .functions import expand_functions
from .validate import tensor_array, validate_model

_SYMBOL = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_AXIS_NAMES = {4: "NCHW", 3: "NTC", 2: "NC"}
MULTIPLES = (1, 2, 4, 8, 16, 32, 64)
"""Symbolic sizes tried in turn: a detector whose upsampled features are added to skip connections
only lines up for sizes divisible by its total stride, so its H/W are declared ``32*H``/``32*W``."""


def _input_shapes(graph, initializer_names: set, multiple: int) -> tuple[list, dict]:
    """(name, shape, dtype) per real input, symbols named, and the original dim -> symbol map;
    with ``multiple`` > 1 every symbolic dim after the batch axis is declared ``multiple*S``."""
    symbols: dict[str, str] = {}
    used: set[str] = set()
    out = []
    for inp in graph.input:
        if inp.name in initializer_names:
            continue
        t = inp.type.tensor_type
        dims = list(t.shape.dim)
        letters = _AXIS_NAMES.get(len(dims), "")
        shape = []
        for axis, d in enumerate(dims):
            if d.HasField("dim_value") and d.dim_value >= 0:
                shape.append(int(d.dim_value))
                continue
            key = d.dim_param if d.HasField("dim_param") and d.dim_param not in ("?", "") else None
            scaled = (lambda s: f"{multiple}*{s}") if multiple > 1 and axis > 0 else (lambda s: s)  # noqa: E731
            if key is not None and key in symbols:
                shape.append(scaled(symbols[key]))
                continue
            candidates = []
            if key is not None and _SYMBOL.match(key):
                candidates.append(key)
            if axis < len(letters):
                candidates.append(letters[axis])
            candidates.append(f"{clean_name(inp.name)}_d{axis}".replace(".", "_"))
            name = next(c for c in candidates if c not in used)
            used.add(name)
            if key is not None:
                symbols[key] = name
            symbols.setdefault(f"{inp.name}[{axis}]", name)
            shape.append(scaled(name))
        out.append((inp.name, tuple(shape), np.dtype(onnx.helper.tensor_dtype_to_np_dtype(t.elem_type))))
    return out, symbols


def load_onnx_model(path):
    path = os.fspath(path)
    if not os.path.isfile(path):
        raise OnnxImportError(f"onnx import: {path} does not exist; give the path of a .onnx file")
    try:
        return onnx.load(path)
    except Exception as exc:  # noqa: BLE001 - protobuf raises several types for a broken file
        raise OnnxImportError(f"onnx import: {path} is not a readable ONNX model ({exc})") from None


def _build(graph, opsets: list, weights: dict, inputs: list):
    b = Builder()
    for name, array in weights.items():
        b.set(name, array)
    for name, shape, dtype in inputs:
        b.set(name, b.source("input", {"name": name}, shape, dtype, clean_name(name)))
    for node, opset in zip(graph.node, opsets, strict=True):
        b.node = node
        try:
            outs = RULES[node.op_type].convert(b, node, attrs_of(node), opset)
        except PaddlectlError:
            raise
        except Exception as exc:  # noqa: BLE001 - a node the checks let through but its rule cannot take
            raise ConversionError(f"{b.where()}: cannot convert this node ({type(exc).__name__}: {exc})") from None
        for name, item in zip(node.output, outs, strict=False):
            if name:
                b.set(name, item)
    b.node = None
    program = b.program
    program.block.yields = [b.value(o.name) for o in graph.output]
    return check_sizes(verify(program))


def onnx_to_program(model) -> tuple:
    """(Program, meta) for an ``onnx.ModelProto``, validated first (``validate.validate_model``);
    OnnxImportError lists every unsupported node."""
    opset = validate_model(model)
    graph, opsets = expand_functions(model, opset, RULES)
    problems = check_graph(graph, opsets)
    if problems:
        raise OnnxImportError(
            f"onnx import: {len(problems)} unsupported node(s) (opset {opset}); nothing was converted:\n  "
            + "\n  ".join(problems)
            + "\nsupported op types: "
            + ", ".join(sorted(RULES))
        )
    initializer_names = {t.name for t in graph.initializer}
    weights = {t.name: tensor_array(t, f"initializer {t.name!r}") for t in graph.initializer}
    first_error = None
    for multiple in MULTIPLES:
        inputs, symbols = _input_shapes(graph, initializer_names, multiple)
        try:
            program = _build(graph, opsets, weights, inputs)
            break
        except ConversionError as exc:
            first_error = first_error or exc
            if not any(isinstance(d, str) for _, shape, _ in inputs for d in shape[1:]):
                raise
    else:
        raise first_error
    meta = {
        "inputs": [{"name": n, "shape": list(s), "dtype": d.name} for n, s, d in inputs],
        "outputs": [
            {"name": o.name, "shape": list(v.shape), "dtype": v.dtype.name}
            for o, v in zip(graph.output, program.outputs, strict=True)
        ],
        "output_structure": "tensor" if len(graph.output) == 1 else "list",
        "preprocess": None,
        "postprocess": None,
        "verification": None,
        "metadata": {p.key: p.value for p in model.metadata_props},
        "source": {
            "format": "onnx",
            "opset": opset,
            "ir_version": int(model.ir_version),
            "producer": f"{model.producer_name} {model.producer_version}".strip(),
            "symbols": symbols,
        },
    }
    return program, meta


def import_onnx(path, output_dir=None) -> SavedModel:
    """Import the ONNX file ``path``; with ``output_dir``, also write it there as a saved model
    directory. Returns the SavedModel either way."""
    model = load_onnx_model(path)
    try:
        program, meta = onnx_to_program(model)
    except PaddlectlError as exc:  # a verifier or shape-rule error is an import failure too, named so
        raise OnnxImportError(f"{os.fspath(path)}: {exc}") from None
    meta["source"]["file"] = os.path.basename(os.fspath(path))
    if output_dir is not None:
        write_model_dir(output_dir, program, meta)
        output_dir = os.fspath(output_dir)
    return SavedModel(output_dir if output_dir is not None else os.fspath(path), program, meta)
