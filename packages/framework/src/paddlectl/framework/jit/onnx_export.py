"""Program -> ONNX (opset 17): ``program_to_onnx`` and ``export_onnx`` (what ``jit.save(format="onnx")``
and ``paddlectl export --format onnx`` call).

Every op of the program is mapped by one entry of ``EMITTERS`` onto standard ONNX nodes; weights
become initializers, symbolic dims become ``dim_param`` strings (``'N'``, ``'32*H'``), and the
model metadata (``metadata_props``) carries the program's free-form metadata. Ops with no ONNX
form here (control flow, training-only ops...) are all named in one ConversionError before
anything is written. The result is checked with ``onnx.checker`` and written atomically.
"""

from __future__ import annotations

import os

import numpy as np
import onnx
from onnx import helper, numpy_helper

from ..errors import ConversionError
from ..static.ir import Program
from ..utils.fileio import atomic_write

OPSET = 17


class _Emitter:
    """Collects nodes and initializers; ``name(value)`` is a value's ONNX tensor name."""

    def __init__(self, program: Program) -> None:
        self.program = program
        self.nodes: list = []
        self.initializers: list = []
        self._count = 0

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

    def node(self, op_type: str, inputs: list, outputs: list | None = None, **attrs) -> list[str]:
        outputs = outputs or [self.fresh(op_type.lower())]
        self.nodes.append(helper.make_node(op_type, list(inputs), list(outputs), name=self.fresh(op_type), **attrs))
        return outputs


def _same(onnx_op: str):
    def emit(e, op, ins, out, **attrs):
        e.node(onnx_op, ins, out)

    return emit


def _pads(padding) -> dict:
    if isinstance(padding, str):
        return {"auto_pad": "SAME_UPPER" if padding.upper() == "SAME" else "VALID"}
    t, b, l, r = padding  # noqa: E741 - Paddle's (top, bottom, left, right)
    return {"pads": [t, l, b, r]}


def _conv(e, op, ins, out, stride, padding, dilation, groups, data_format, **rest):
    if data_format != "NCHW":
        raise ConversionError("conv2d: only NCHW exports to ONNX")
    kernel = list(op.inputs[1].shape[2:])
    attrs = dict(strides=list(stride), dilations=list(dilation), group=groups, kernel_shape=kernel, **_pads(padding))
    if op.name == "conv2d_transpose":
        if rest.get("output_size") is not None:
            raise ConversionError("conv2d_transpose: output_size has no ONNX form here; give output_padding")
        attrs["output_padding"] = list(rest.get("output_padding") or (0, 0))
    e.node("ConvTranspose" if op.name == "conv2d_transpose" else "Conv", [i for i in ins if i], out, **attrs)


def _batch_norm(e, op, ins, out, epsilon, momentum, channels_last=False, training=False, use_batch_stats=False):
    if channels_last or training or use_batch_stats:
        raise ConversionError("batch_norm: only NCHW inference (running statistics) exports to ONNX")
    x, mean, var, weight, bias = ins
    channels = op.inputs[1].shape
    weight = weight or e.const(np.ones(channels, op.inputs[0].dtype), "bn_scale")
    bias = bias or e.const(np.zeros(channels, op.inputs[0].dtype), "bn_bias")
    e.node("BatchNormalization", [x, weight, bias, mean, var], out[:1], epsilon=float(epsilon),
           momentum=float(momentum))  # fmt: skip


def _layer_norm(e, op, ins, out, begin_axis, epsilon):
    x, weight, bias = ins
    shape = op.inputs[0].shape[begin_axis:]
    if not weight and not all(isinstance(d, int) for d in shape):
        raise ConversionError("layer_norm: without a weight the normalised dims must be fixed to export")
    weight = weight or e.const(np.ones(shape, op.inputs[0].dtype), "ln_scale")
    e.node("LayerNormalization", [x, weight] + ([bias] if bias else []), out[:1], axis=int(begin_axis),
           epsilon=float(epsilon))  # fmt: skip


def _pool(e, op, ins, out, kernel_size, stride, padding, ceil_mode, exclusive, divisor_override, output_size,
          data_format):  # fmt: skip
    if data_format != "NCHW" or divisor_override:
        raise ConversionError(f"{op.name}: NHWC or divisor_override has no ONNX form")
    if len(out) > 1 and e.program.uses(op.outputs[1]):
        raise ConversionError("max_pool2d: the argmax mask output has no ONNX form here")
    is_max = op.name == "max_pool2d"
    if output_size is not None:
        if tuple(output_size) != (1, 1):
            raise ConversionError(f"{op.name}: adaptive pooling to {list(output_size)} has no ONNX form; only 1x1")
        e.node("GlobalMaxPool" if is_max else "GlobalAveragePool", ins, out[:1])
        return
    attrs = dict(kernel_shape=list(kernel_size), strides=list(stride), ceil_mode=int(ceil_mode), **_pads(padding))
    if not is_max:
        attrs["count_include_pad"] = int(not exclusive)
    e.node("MaxPool" if is_max else "AveragePool", ins, out[:1], **attrs)


def _matmul(e, op, ins, out, transpose_x=False, transpose_y=False):
    args = []
    for name, value, flip in zip(ins, op.inputs, (transpose_x, transpose_y), strict=True):
        rank = len(value.shape)
        if flip and rank >= 2:
            perm = list(range(rank - 2)) + [rank - 1, rank - 2]
            name = e.node("Transpose", [name], perm=perm)[0]
        args.append(name)
    e.node("MatMul", args, out)


def _reshape(e, op, ins, out, shape):
    e.node("Reshape", [ins[0], e.const(np.array(shape, np.int64), "shape")], out)


def _reduce(onnx_op: str):
    def emit(e, op, ins, out, axis=None, keepdim=False, **rest):
        if rest.get("dtype") is not None:
            raise ConversionError(f"{op.name}: dtype= has no ONNX form here")
        axes = None if axis is None else [int(a) for a in (axis if isinstance(axis, tuple | list) else (axis,))]
        if onnx_op == "ReduceSum":
            e.node(onnx_op, [ins[0]] + ([e.const(np.array(axes, np.int64), "axes")] if axes else []), out,
                   keepdims=int(keepdim))  # fmt: skip
        else:
            e.node(onnx_op, ins, out, keepdims=int(keepdim), **({"axes": axes} if axes else {}))

    return emit


def _clip(e, op, ins, out, min=None, max=None):  # noqa: A002 - the op's attr names
    dtype = op.inputs[0].dtype
    bounds = [e.const(np.array(v, dtype), "clip") if v is not None else "" for v in (min, max)]
    e.node("Clip", [ins[0], *bounds], out)


def _relu6(e, op, ins, out, **attrs):
    _clip(e, op, ins, out, 0.0, 6.0)


def _scale(e, op, ins, out, scale=1.0, bias=0.0, bias_after_scale=True):
    dtype = op.inputs[0].dtype
    s, b = e.const(np.array(scale, dtype), "scale"), e.const(np.array(bias, dtype), "bias")
    if bias_after_scale:
        e.node("Add", [e.node("Mul", [ins[0], s])[0], b], out)
    else:
        e.node("Mul", [e.node("Add", [ins[0], b])[0], s], out)


def _gelu(e, op, ins, out, approximate=False):
    dtype = op.inputs[0].dtype
    x = ins[0]
    half = e.const(np.array(0.5, dtype), "half")
    one = e.const(np.array(1.0, dtype), "one")
    if approximate:
        c = e.const(np.array(np.sqrt(2 / np.pi), dtype), "c")
        k = e.const(np.array(0.044715, dtype), "k")
        cube = e.node("Mul", [e.node("Mul", [x, x])[0], x])[0]
        inner = e.node("Mul", [c, e.node("Add", [x, e.node("Mul", [k, cube])[0]])[0]])[0]
        gate = e.node("Tanh", [inner])[0]
    else:
        gate = e.node("Erf", [e.node("Div", [x, e.const(np.array(np.sqrt(2.0), dtype), "sqrt2")])[0]])[0]
    e.node("Mul", [e.node("Mul", [x, half])[0], e.node("Add", [gate, one])[0]], out)


def _silu(e, op, ins, out, **attrs):
    e.node("Mul", [ins[0], e.node("Sigmoid", ins)[0]], out)


def _hardsigmoid(e, op, ins, out, slope=0.1666667, offset=0.5):
    e.node("HardSigmoid", ins, out, alpha=float(slope), beta=float(offset))


def _leaky_relu(e, op, ins, out, negative_slope=0.01):
    e.node("LeakyRelu", ins, out, alpha=float(negative_slope))


def _square(e, op, ins, out):
    e.node("Mul", [ins[0], ins[0]], out)


def _softmax(onnx_op: str):
    def emit(e, op, ins, out, axis=-1):
        e.node(onnx_op, ins, out, axis=int(axis))

    return emit


def _transpose(e, op, ins, out, perm):
    e.node("Transpose", ins, out, perm=[int(p) for p in perm])


def _concat(e, op, ins, out, axis):
    e.node("Concat", ins, out, axis=int(axis))


def _cast(e, op, ins, out, dtype):
    e.node("Cast", ins, out, to=helper.np_dtype_to_tensor_dtype(np.dtype(dtype)))


def _full_like(e, op, ins, out, value, dtype):
    fill = numpy_helper.from_array(np.array([value], np.dtype(dtype)))
    e.node("ConstantOfShape", e.node("Shape", ins), out, value=fill)


def _identity(e, op, ins, out, **attrs):
    """Ops that change nothing at inference: dropout (its inference mode), detach (a gradient stop)."""
    e.node("Identity", ins[:1], out)


def _getitem(e, op, ins, out, spec):
    """Basic indexing (slices with steps, ints, None) as Slice + Squeeze + Unsqueeze."""
    starts, ends, axes, steps, squeeze, unsqueeze = [], [], [], [], [], []
    axis = out_axis = 0
    for item in spec:
        kind = item[0]
        if kind == "slice":
            start, stop, step = item[1:]
            if (start, stop, step) != (None, None, None):
                step = 1 if step is None else step
                starts.append(start if start is not None else (0 if step > 0 else -1))
                ends.append(stop if stop is not None else (2**62 if step > 0 else -(2**62)))
                axes.append(axis)
                steps.append(step)
            axis += 1
            out_axis += 1
        elif kind == "int":
            i = item[1]
            starts.append(i)
            ends.append(i + 1 if i != -1 else 2**62)
            axes.append(axis)
            steps.append(1)
            squeeze.append(axis)
            axis += 1
        elif kind == "none":
            unsqueeze.append(out_axis)
            out_axis += 1
        else:
            raise ConversionError(f"getitem: index kind {kind!r} (tensor or ellipsis indexing) has no ONNX form here")
    x = ins[0]
    if axes:
        consts = [e.const(np.array(v, np.int64), n) for v, n in ((starts, "starts"), (ends, "ends"), (axes, "axes"),
                                                                  (steps, "steps"))]  # fmt: skip
        x = e.node("Slice", [x, *consts])[0]
    if squeeze:
        x = e.node("Squeeze", [x, e.const(np.array(squeeze, np.int64), "axes")])[0]
    if unsqueeze:
        x = e.node("Unsqueeze", [x, e.const(np.array(unsqueeze, np.int64), "axes")])[0]
    e.node("Identity", [x], out)


def _interpolate(e, op, ins, out, size, scale, mode, align_corners, align_mode, data_format):
    if data_format != "NCHW" or mode not in ("nearest", "bilinear"):
        raise ConversionError(f"interpolate: mode {mode!r} / {data_format} has no ONNX form here")
    if mode == "nearest":
        attrs = dict(mode="nearest", coordinate_transformation_mode="asymmetric", nearest_mode="floor")
    else:
        ctm = "align_corners" if align_corners else ("asymmetric" if align_mode == 1 else "half_pixel")
        attrs = dict(mode="linear", coordinate_transformation_mode=ctm)
    if scale is not None:
        scales = e.const(np.array([1.0, 1.0, *scale], np.float32), "scales")
        e.node("Resize", [ins[0], "", scales], out, **attrs)
    else:
        shape = e.node("Shape", [ins[0]], start=0, end=2)[0]
        sizes = e.node("Concat", [shape, e.const(np.array(size, np.int64), "size")], axis=0)[0]
        e.node("Resize", [ins[0], "", "", sizes], out, **attrs)


EMITTERS = {
    "add": _same("Add"), "subtract": _same("Sub"), "multiply": _same("Mul"), "divide": _same("Div"),
    "elementwise_pow": _same("Pow"), "maximum": _same("Max"), "minimum": _same("Min"),
    "relu": _same("Relu"), "sigmoid": _same("Sigmoid"), "tanh": _same("Tanh"), "exp": _same("Exp"),
    "log": _same("Log"), "sqrt": _same("Sqrt"), "abs": _same("Abs"), "neg": _same("Neg"), "erf": _same("Erf"),
    "floor": _same("Floor"), "ceil": _same("Ceil"), "reciprocal": _same("Reciprocal"), "sign": _same("Sign"),
    "hardswish": _same("HardSwish"), "square": _square, "relu6": _relu6, "gelu": _gelu, "silu": _silu,
    "hardsigmoid": _hardsigmoid, "leaky_relu": _leaky_relu, "clip": _clip, "scale": _scale,
    "softmax": _softmax("Softmax"), "log_softmax": _softmax("LogSoftmax"),
    "conv2d": _conv, "conv2d_transpose": _conv, "batch_norm": _batch_norm, "layer_norm": _layer_norm,
    "max_pool2d": _pool, "avg_pool2d": _pool, "matmul": _matmul, "reshape": _reshape, "transpose": _transpose,
    "concat": _concat, "cast": _cast, "full_like": _full_like, "dropout": _identity, "detach": _identity, "getitem": _getitem,
    "interpolate": _interpolate, "mean": _reduce("ReduceMean"), "sum": _reduce("ReduceSum"),
    "max": _reduce("ReduceMax"), "min": _reduce("ReduceMin"),
}  # fmt: skip


def _value_info(name: str, value):
    dims = [d if isinstance(d, int) else str(d) for d in value.shape]
    return helper.make_tensor_value_info(name, helper.np_dtype_to_tensor_dtype(value.dtype), dims)


def program_to_onnx(program: Program, input_names=None, output_names=None, metadata=None) -> onnx.ModelProto:
    """The ONNX model of ``program`` (checked with ``onnx.checker``); ConversionError names every op
    that has no ONNX form."""
    missing = sorted({op.name for op in program.walk() if op.name not in EMITTERS and op.name not in
                      ("input", "param", "constant")})  # fmt: skip
    if missing:
        where = {
            name: [op.loc or op.outputs[0].name for op in program.walk() if op.name == name][:3] for name in missing
        }
        raise ConversionError(
            f"export to ONNX: op(s) {missing} have no ONNX form ({where}); keep them out of the exported "
            f"function or export the paddlectl format instead (jit.save(..., format='paddlectl'))"
        )
    e = _Emitter(program)
    inputs = []
    feeds = dict(zip(program.input_names, input_names or program.input_names, strict=True))
    renamed = {}
    for op in program.block.ops:
        v = op.outputs[0] if op.outputs else None
        if op.name == "input":
            renamed[v.name] = feeds[op.attrs["name"]]
            v_name = renamed[v.name]
            inputs.append(_value_info(v_name, v))
            if v_name != v.name:
                e.node("Identity", [v_name], [v.name])
        elif op.name == "param":
            e.initializers.append(numpy_helper.from_array(np.asarray(program.weights[op.attrs["name"]]), v.name))
        elif op.name == "constant":
            e.initializers.append(numpy_helper.from_array(np.asarray(op.attrs["value"]), v.name))
        else:
            ins = [e.name(i) for i in op.inputs]
            outs = [o.name for o in op.outputs]
            try:
                EMITTERS[op.name](e, op, ins, outs, **op.attrs)
            except ConversionError as exc:
                raise ConversionError(f"export to ONNX: {exc} (at {op.loc or op.outputs[0].name})") from None
    names = list(output_names or [f"output_{i}" for i in range(len(program.outputs))])
    outputs = []
    for name, v in zip(names, program.outputs, strict=True):
        e.node("Identity", [v.name], [name])
        outputs.append(_value_info(name, v))
    graph = helper.make_graph(e.nodes, "paddlectl", inputs, outputs, initializer=e.initializers)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)], producer_name="paddlectl")
    model.ir_version = 8
    for key, value in (metadata or {}).items():
        model.metadata_props.add(key=str(key), value=str(value))
    onnx.checker.check_model(model, full_check=True)
    return model


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


def export_model_dir(model_dir, path) -> str:
    """A saved model directory (``jit.save``) as an ONNX file, with its input/output names and its
    pre/post-processing configs and metadata as ``metadata_props`` (``paddlectl export --format onnx``)."""
    import json

    from .saved_model import ONNX_METADATA_ENTRIES, read_model_dir

    saved = read_model_dir(model_dir)
    meta = saved.meta
    metadata = {k: json.dumps(meta[k]) for k in ONNX_METADATA_ENTRIES if meta.get(k) is not None}
    metadata.update(meta.get("metadata") or {})
    return export_onnx(saved.program, path, saved.input_names, saved.output_names, metadata)


__all__ = ["EMITTERS", "OPSET", "export_model_dir", "export_onnx", "program_to_onnx"]
