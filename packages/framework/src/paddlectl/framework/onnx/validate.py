"""Validation before conversion: a hostile or broken ONNX file is refused here, as OnnxImportError.

Order: the IR version and the default-domain opset against the range the converters were written
for (``onnx.checker`` accepts opset 99), then ``onnx.checker.check_model(full_check=True)`` (node
arity, attribute types, single assignment, topological order, strict shape inference), then every
tensor the importer turns into an array (initializers, ``Constant`` values) and every graph input's
element type, so ``onnx.numpy_helper`` never sees data that does not match its dims and dtype.
"""

from __future__ import annotations

import math

import numpy as np

from ..errors import OnnxImportError
from .dependency import onnx

TensorProto = onnx.TensorProto

IR_VERSIONS = (3, onnx.IR_VERSION)
"""IR 3 introduced ``opset_import``; newer than the installed onnx package cannot be checked."""
OPSETS = (6, 28)
"""Default-domain opsets the converters were written against: opset 6 dropped the legacy
``consumed_inputs`` attributes (opset 6's ``broadcast``/``axis`` of binary ops are honoured by
``import_rules.base.operands``). Opsets 22 to 28 (onnx 1.23) changed the ops the importer maps only by new element
types and new attributes (Cast's ``round_mode``, Range's ``stash_type``...), which the converters'
attribute check refuses by name; the inputs and outputs of every mapped op are those of opset 21."""
DTYPES = {
    TensorProto.FLOAT: np.float32, TensorProto.DOUBLE: np.float64, TensorProto.FLOAT16: np.float16,
    TensorProto.INT8: np.int8, TensorProto.INT16: np.int16, TensorProto.INT32: np.int32, TensorProto.INT64: np.int64,
    TensorProto.UINT8: np.uint8, TensorProto.UINT16: np.uint16, TensorProto.UINT32: np.uint32,
    TensorProto.UINT64: np.uint64, TensorProto.BOOL: np.bool_,
}  # fmt: skip
"""Element types with a NumPy dtype of their own: tensors of any other type are refused by name."""
_FIELDS = {
    np.float32: "float_data", np.float64: "double_data", np.int64: "int64_data", np.uint32: "uint64_data",
    np.uint64: "uint64_data",
}  # fmt: skip


def opset_of(model) -> int:
    """The default-domain opset, checked against ``OPSETS``."""
    versions = [int(e.version) for e in model.opset_import if e.domain in ("", "ai.onnx")]
    if not versions:
        raise OnnxImportError("onnx import: the model imports no default-domain opset; it is not a standard ONNX model")
    low, high = OPSETS
    if not low <= versions[0] <= high:
        raise OnnxImportError(
            f"onnx import: opset_import declares default-domain opset {versions[0]}; supported opsets are "
            f"{low}..{high}: re-export the model with an opset in that range"
        )
    return versions[0]


def validate_model(model) -> int:
    """Refuse anything the importer must not convert; returns the default-domain opset."""
    low, high = IR_VERSIONS
    if not low <= model.ir_version <= high:
        raise OnnxImportError(
            f"onnx import: ir_version is {model.ir_version}; supported IR versions are {low}..{high} "
            f"(onnx {onnx.__version__}): re-export the model or upgrade onnx"
        )
    opset = opset_of(model)
    try:
        onnx.checker.check_model(model, full_check=True)
    except (onnx.checker.ValidationError, onnx.shape_inference.InferenceError) as exc:
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise OnnxImportError(f"onnx import: the model fails onnx.checker: {first}") from None
    except UnicodeDecodeError as exc:
        raise OnnxImportError(
            f"onnx import: a name or string attribute is not valid UTF-8 ({exc.reason} at byte {exc.start}); "
            "the file is corrupted"
        ) from None
    for tensor in model.graph.initializer:
        check_tensor(tensor, f"initializer {tensor.name!r}")
    for inp in model.graph.input:
        elem = inp.type.tensor_type.elem_type
        if not inp.type.HasField("tensor_type") or elem not in DTYPES:
            raise OnnxImportError(
                f"onnx import: graph input {inp.name!r} has element type {type_name(elem)}; expected a tensor of "
                f"one of {sorted(type_name(t) for t in DTYPES)}"
            )
    return opset


def tensor_array(tensor, what: str) -> np.ndarray:
    """A checked TensorProto as a writable array (checked first: numpy_helper trusts dims and dtype)."""
    check_tensor(tensor, what)
    return onnx.numpy_helper.to_array(tensor).copy()


def check_tensor(tensor, what: str) -> None:
    """``tensor``'s dtype is supported and its stored data holds exactly prod(dims) elements."""
    if tensor.HasField("segment"):
        raise OnnxImportError(f"onnx import: {what} is a segment of a tensor; segmented tensors are not supported")
    if tensor.data_type not in DTYPES:
        raise OnnxImportError(
            f"onnx import: {what} has element type {type_name(tensor.data_type)}; expected one of "
            f"{sorted(type_name(t) for t in DTYPES)}"
        )
    if any(d < 0 for d in tensor.dims):
        raise OnnxImportError(f"onnx import: {what} has negative dims {list(tensor.dims)}; dims are sizes >= 0")
    count = math.prod(tensor.dims)
    dtype = np.dtype(DTYPES[tensor.data_type])
    if tensor.HasField("raw_data"):
        found, want = len(tensor.raw_data), count * dtype.itemsize
        unit = "bytes of raw_data"
    else:
        found, want = len(getattr(tensor, _FIELDS.get(DTYPES[tensor.data_type], "int32_data"))), count
        unit = "stored elements"
    if found != want:
        raise OnnxImportError(
            f"onnx import: {what} ({dtype.name}, dims {list(tensor.dims)}) holds {found} {unit}, expected {want}; "
            "the file is truncated or corrupted"
        )


def type_name(elem: int) -> str:
    try:
        return TensorProto.DataType.Name(elem)
    except ValueError:
        return f"<unknown element type {elem}>"
