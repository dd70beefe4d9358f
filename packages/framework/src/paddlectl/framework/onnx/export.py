"""Program -> ONNX (opset 17, or the newer one an op needs): ``program_to_onnx`` and ``export_onnx``
(what ``jit.save(format="onnx")`` and ``paddlectl export --format onnx`` call).

Every op of the program is mapped onto standard ONNX nodes by the emitter in its record
(``REGISTRY[name].onnx_export``, written in ``emitters.py``); weights
become initializers, symbolic dims become ``dim_param`` strings (``'N'``, ``'32*H'``), and the
model metadata (``metadata_props``) carries the program's free-form metadata. Ops with no ONNX
form here (control flow, training-only ops...) are all named in one ConversionError before
anything is written. The result is checked with ``onnx.checker`` and written atomically.
"""

from __future__ import annotations

import os

import numpy as np

from ..core.op import REGISTRY
from ..errors import ConversionError
from ..static.ir import Program
from ..utils.fileio import atomic_write
from .dependency import onnx
from .fft_emitters import PAIR_OPS, as_pairs

helper, numpy_helper = onnx.helper, onnx.numpy_helper

OPSET = 17
"""The opset written unless an op needs a newer one (``Emitter.require``): runtimes deployed today
all read 17."""


class _NewerOpset(Exception):
    """Internal: an emitter needs ``opset``; the program is emitted again at it."""

    def __init__(self, opset: int) -> None:
        self.opset = opset


class Emitter:
    """What an emitter writes through: collects nodes and initializers; ``name(value)`` is a value's
    ONNX tensor name, ``opset`` the default-domain opset being written."""

    def __init__(self, program: Program, opset: int = OPSET) -> None:
        self.program = program
        self.opset = opset
        self.nodes: list = []
        self.initializers: list = []
        self._count = 0

    def require(self, opset: int) -> None:
        """The op being emitted exists from ``opset`` on (BitwiseAnd 18, CumProd 26): the whole model
        is then written at that opset."""
        if opset > self.opset:
            raise _NewerOpset(opset)

    def reduce(self, op_type: str, x: str, axes, outputs: list | None = None, keepdims: bool = False) -> list[str]:
        """A ``Reduce*`` node over ``axes`` (None: all), which take them as an attribute before opset
        18 (ReduceSum: 13) and as an input from it."""
        as_input = self.opset >= (13 if op_type == "ReduceSum" else 18)
        if axes is None:
            return self.node(op_type, [x], outputs, keepdims=int(keepdims))
        axes = [int(a) for a in axes]
        if as_input:
            return self.node(
                op_type, [x, self.const(np.array(axes, np.int64), "axes")], outputs, keepdims=int(keepdims)
            )
        return self.node(op_type, [x], outputs, axes=axes, keepdims=int(keepdims))

    @staticmethod
    def name(value) -> str:
        return "" if value is None else value.name

    def fresh(self, hint: str) -> str:
        self._count += 1
        return f"{hint}__{self._count}"

    def const(self, array, hint: str = "const") -> str:
        name = self.fresh(hint)
        self.initializers.append(numpy_helper.from_array(np.asarray(array), name))
        return name

    @staticmethod
    def tensor(array) -> onnx.TensorProto:
        """``array`` as an ONNX tensor, for a tensor-valued attribute."""
        return numpy_helper.from_array(np.asarray(array))

    @staticmethod
    def dtype_code(dtype) -> int:
        """The ONNX element type of a NumPy dtype."""
        return helper.np_dtype_to_tensor_dtype(np.dtype(dtype))

    def as_type(self, name: str, value, *dtypes) -> str:
        """``name`` (the tensor of IR value ``value``) cast to ``dtypes[0]`` unless its dtype is one of
        ``dtypes`` (the types an ONNX op takes there)."""
        if np.dtype(value.dtype) in [np.dtype(d) for d in dtypes]:
            return name
        return self.node("Cast", [name], to=self.dtype_code(dtypes[0]))[0]

    def node(self, op_type: str, inputs: list, outputs: list | None = None, **attrs) -> list[str]:
        outputs = outputs or [self.fresh(op_type.lower())]
        self.nodes.append(helper.make_node(op_type, list(inputs), list(outputs), name=self.fresh(op_type), **attrs))
        return outputs


def _emitter(name: str):
    """The op's ONNX emitter, or None (an op with no record, such as control flow, has none)."""
    record = REGISTRY.get(name)
    return None if record is None else record.onnx_export


def _value_info(name: str, value):
    dims = [d if isinstance(d, int) else str(d) for d in value.shape]
    return helper.make_tensor_value_info(name, helper.np_dtype_to_tensor_dtype(value.dtype), dims)


def program_to_onnx(program: Program, input_names=None, output_names=None, metadata=None) -> onnx.ModelProto:
    """The ONNX model of ``program`` (checked with ``onnx.checker``) at opset 17 or the newest opset
    one of its ops needs; ConversionError names every op that has no ONNX form."""
    missing = sorted({op.name for op in program.walk() if op.name not in ("input", "param", "constant")
                      and _emitter(op.name) is None})  # fmt: skip
    if missing:
        where = {
            name: [op.loc or op.outputs[0].name for op in program.walk() if op.name == name][:3] for name in missing
        }
        raise ConversionError(
            f"export to ONNX: op(s) {missing} have no ONNX form ({where}); keep them out of the exported "
            f"function or export the paddlectl format instead (jit.save(..., format='paddlectl'))"
        )
    opset = OPSET
    while True:
        try:
            e, inputs, outputs = _emit(program, opset, input_names, output_names)
            break
        except _NewerOpset as newer:
            opset = newer.opset
    graph = helper.make_graph(e.nodes, "paddlectl", inputs, outputs, initializer=e.initializers)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)], producer_name="paddlectl")
    model.ir_version = max(8, helper.find_min_ir_version_for([helper.make_opsetid("", opset)]))
    for key, value in (metadata or {}).items():
        model.metadata_props.add(key=str(key), value=str(value))
    try:
        onnx.checker.check_model(model, full_check=True)
    except (onnx.checker.ValidationError, onnx.shape_inference.InferenceError) as exc:
        first = str(exc).strip().splitlines()[0]
        raise ConversionError(
            f"export to ONNX: the written model fails onnx.checker ({first}); an op above has no ONNX opset-{opset} "
            "form for these dtypes: cast to float32 before it, or export the paddlectl format"
        ) from None
    return model


def _emit(program: Program, opset: int, input_names, output_names) -> tuple:
    """(Emitter holding every node and initializer, graph inputs, graph outputs) at ``opset``."""
    e = Emitter(program, opset)
    inputs = []
    feeds = dict(zip(program.input_names, input_names or program.input_names, strict=True))
    renamed = {}
    for op in program.block.ops:
        v = op.outputs[0] if op.outputs else None
        if op.name == "input" and np.dtype(v.dtype).kind == "c":
            raise ConversionError(
                f"export to ONNX: input {op.attrs['name']!r} is complex; ONNX's ops take complex values as a real "
                "tensor with a trailing (real, imag) axis: feed paddle.as_real(x) and as_complex it inside"
            )
        if op.name == "input":
            renamed[v.name] = feeds[op.attrs["name"]]
            v_name = renamed[v.name]
            inputs.append(_value_info(v_name, v))
            if v_name != v.name:
                e.node("Identity", [v_name], [v.name])
        elif op.name in ("param", "constant"):
            array = program.weights[op.attrs["name"]] if op.name == "param" else op.attrs["value"]
            e.initializers.append(numpy_helper.from_array(as_pairs(np.asarray(array)), v.name))
        else:
            on_complex = any(np.dtype(x.dtype).kind == "c" for x in [*op.inputs, *op.outputs] if x is not None)
            if on_complex and op.name not in PAIR_OPS:
                raise ConversionError(
                    f"export to ONNX: {op.name} on complex values has no ONNX form here (complex values are (real, "
                    f"imag) pairs there, which only {sorted(PAIR_OPS)} handle) (at {op.loc or op.outputs[0].name})"
                )
            ins = [e.name(i) for i in op.inputs]
            outs = [o.name for o in op.outputs]
            try:
                _emitter(op.name)(e, op, ins, outs, **op.attrs)
            except ConversionError as exc:
                raise ConversionError(f"export to ONNX: {exc} (at {op.loc or op.outputs[0].name})") from None
    names = list(output_names or [f"output_{i}" for i in range(len(program.outputs))])
    outputs = []
    for name, v in zip(names, program.outputs, strict=True):
        if np.dtype(v.dtype).kind == "c":
            raise ConversionError(f"export to ONNX: output {name!r} is complex, which ONNX's ops do not return; "
                                  "return paddle.as_real(y), its (real, imag) pairs")  # fmt: skip
        e.node("Identity", [v.name], [name])
        outputs.append(_value_info(name, v))
    return e, inputs, outputs


def export_onnx(program: Program, path, input_names=None, output_names=None, metadata=None) -> str:
    """Write ``program`` as an ONNX file at ``path`` (``.onnx`` appended when missing), atomically;
    returns the path written."""
    path = os.fspath(path)
    if not path.lower().endswith(".onnx"):
        path += ".onnx"
    model = program_to_onnx(program, input_names, output_names, metadata)
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    with atomic_write(path, "wb") as f:
        f.write(model.SerializeToString())
    return path


__all__ = ["OPSET", "Emitter", "export_onnx", "program_to_onnx"]
