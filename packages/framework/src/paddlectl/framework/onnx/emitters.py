"""Each op's ONNX export rule, stored in its record (``REGISTRY[name].onnx_export``) by ``emits``.

An emitter ``emit(e, op, ins, outs, **attrs)`` writes the ONNX nodes of one program op: ``e`` is the
exporter's ``Emitter`` (``node``, ``const``, ``tensor``, ``dtype_code``), ``op`` the IR operation (its
values carry shapes and dtypes), ``ins``/``outs`` the ONNX tensor names. An op it cannot express
raises ConversionError naming why. This module needs no ``onnx`` package, so the records are complete
as soon as the framework is imported (the op conformance sweep reads them); ``export.py`` does the
writing.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from .. import ops  # noqa: F401 - declares the ops whose records this module fills
from ..core.dtype import real_of
from ..core.op import REGISTRY
from ..errors import ConversionError


def emits(*names: str):
    """Decorator storing an emitter in the records of the ops ``names``, as core/lowering.py's
    ``lowering`` stores lowerings: the exporter finds it there, so no table keyed by op name exists."""

    def register(emit: Callable) -> Callable:
        for name in names:
            REGISTRY[name].onnx_export = emit
        return emit

    return register


def _same(onnx_op: str):
    def emit(e, op, ins, out, **attrs):
        e.node(onnx_op, ins, out)

    return emit


for _ours, _theirs in (
    ("add", "Add"), ("subtract", "Sub"), ("multiply", "Mul"), ("divide", "Div"), ("elementwise_pow", "Pow"),
    ("maximum", "Max"), ("minimum", "Min"), ("relu", "Relu"), ("sigmoid", "Sigmoid"), ("tanh", "Tanh"),
    ("exp", "Exp"), ("log", "Log"), ("sqrt", "Sqrt"), ("abs", "Abs"), ("neg", "Neg"), ("erf", "Erf"),
    ("floor", "Floor"), ("ceil", "Ceil"), ("reciprocal", "Reciprocal"), ("sign", "Sign"), ("hardswish", "HardSwish"),
):  # fmt: skip
    emits(_ours)(_same(_theirs))


def _pads(padding) -> dict:
    if isinstance(padding, str):
        return {"auto_pad": "SAME_UPPER" if padding.upper() == "SAME" else "VALID"}
    t, b, l, r = padding  # noqa: E741 - Paddle's (top, bottom, left, right)
    return {"pads": [t, l, b, r]}


def _conv_attrs(op, stride, dilation, groups, data_format) -> dict:
    if data_format != "NCHW":
        raise ConversionError(f"{op.name}: only NCHW exports to ONNX")
    kernel = list(op.inputs[1].shape[2:])
    return dict(strides=list(stride), dilations=list(dilation), group=groups, kernel_shape=kernel)


@emits("conv2d")
def _conv(e, op, ins, out, stride, padding, dilation, groups, data_format):
    attrs = _conv_attrs(op, stride, dilation, groups, data_format)
    e.node("Conv", [i for i in ins if i], out, **attrs, **_pads(padding))


@emits("conv2d_transpose")
def _conv_transpose(e, op, ins, out, stride, padding, dilation, groups, data_format, output_padding=(0, 0),
                    output_size=None):  # fmt: skip
    """ONNX takes an output padding only below the stride (Paddle: below the stride or the dilation),
    so it comes off the end pads instead; what it adds past the full transposed output (zeros, plus
    the bias) is padded on after."""
    attrs = _conv_attrs(op, stride, dilation, groups, data_format)
    if output_size is not None:
        raise ConversionError("conv2d_transpose: output_size has no ONNX form here; give output_padding")
    if isinstance(padding, str):
        e.node("ConvTranspose", [i for i in ins if i], out, **attrs, **_pads(padding),
               output_padding=list(output_padding))  # fmt: skip
        return
    top, bottom, left, right = padding
    ends = (bottom - output_padding[0], right - output_padding[1])
    extra = [max(0, -end) for end in ends]
    attrs["pads"] = [top, left, *(max(0, end) for end in ends)]
    x, w, bias = (*ins, "")[:3]
    if not any(extra):
        e.node("ConvTranspose", [x, w] + ([bias] if bias else []), out, **attrs)
        return
    y = e.node("ConvTranspose", [x, w], **attrs)
    padded = e.node(
        "Pad", [y[0], e.const(np.array([0, 0, 0, 0, 0, 0, *extra], np.int64), "pads")], None if bias else out
    )
    if bias:
        channels = e.node("Reshape", [bias, e.const(np.array([-1, 1, 1], np.int64), "shape")])
        e.node("Add", [padded[0], channels[0]], out)


@emits("batch_norm")
def _batch_norm(e, op, ins, out, epsilon=1e-5, momentum=0.9, channels_last=False, training=False,
                use_batch_stats=False):  # fmt: skip
    if channels_last or training or use_batch_stats:
        raise ConversionError("batch_norm: only NCHW inference (running statistics) exports to ONNX")
    x, mean, var, weight, bias = ins
    channels = op.inputs[1].shape
    weight = weight or e.const(np.ones(channels, op.inputs[0].dtype), "bn_scale")
    bias = bias or e.const(np.zeros(channels, op.inputs[0].dtype), "bn_bias")
    e.node("BatchNormalization", [x, weight, bias, mean, var], out[:1], epsilon=float(epsilon),
           momentum=float(momentum))  # fmt: skip


@emits("layer_norm")
def _layer_norm(e, op, ins, out, begin_axis=-1, epsilon=1e-5):
    x, weight, bias = ins
    shape = op.inputs[0].shape[begin_axis:]
    if not weight and not all(isinstance(d, int) for d in shape):
        raise ConversionError("layer_norm: without a weight the normalised dims must be fixed to export")
    weight = weight or e.const(np.ones(shape, op.inputs[0].dtype), "ln_scale")
    e.node("LayerNormalization", [x, weight] + ([bias] if bias else []), out[:1], axis=int(begin_axis),
           epsilon=float(epsilon))  # fmt: skip


@emits("max_pool2d", "avg_pool2d")
def _pool(e, op, ins, out, kernel_size, stride, padding, ceil_mode, exclusive, divisor_override, output_size,
          data_format):  # fmt: skip
    if data_format != "NCHW" or divisor_override:
        raise ConversionError(f"{op.name}: NHWC or divisor_override has no ONNX form")
    if len(out) > 1 and e.program.uses(op.outputs[1]):
        raise ConversionError("max_pool2d: the argmax mask output has no ONNX form here")
    is_max = op.name == "max_pool2d"
    if output_size is not None:
        if tuple(output_size) == (1, 1):
            e.node("GlobalMaxPool" if is_max else "GlobalAveragePool", ins, out[:1])
            return
        # adaptive bins that tile a fixed input exactly are one plain pooling window each
        size = op.inputs[0].shape[2:]
        if not all(isinstance(d, int) and d % o == 0 for d, o in zip(size, output_size, strict=True)):
            raise ConversionError(
                f"{op.name}: adaptive pooling of {list(size)} to {list(output_size)} exports only when each input "
                "dim is fixed and a multiple of its output size (or to 1x1); fix the input size in the InputSpec"
            )
        window = [d // o for d, o in zip(size, output_size, strict=True)]
        e.node("MaxPool" if is_max else "AveragePool", ins, out[:1], kernel_shape=window, strides=window)
        return
    attrs = dict(kernel_shape=list(kernel_size), strides=list(stride), ceil_mode=int(ceil_mode), **_pads(padding))
    if not is_max:
        attrs["count_include_pad"] = int(not exclusive)
    e.node("MaxPool" if is_max else "AveragePool", ins, out[:1], **attrs)


@emits("matmul")
def _matmul(e, op, ins, out, transpose_x=False, transpose_y=False):
    args = []
    for name, value, flip in zip(ins, op.inputs, (transpose_x, transpose_y), strict=True):
        rank = len(value.shape)
        if flip and rank >= 2:
            perm = list(range(rank - 2)) + [rank - 1, rank - 2]
            name = e.node("Transpose", [name], perm=perm)[0]
        args.append(name)
    e.node("MatMul", args, out)


@emits("reshape")
def _reshape(e, op, ins, out, shape):
    e.node("Reshape", [ins[0], e.const(np.array(shape, np.int64), "shape")], out)


def _reduce(onnx_op: str):
    def emit(e, op, ins, out, axis=None, keepdim=False, **rest):
        if rest.get("dtype") is not None:
            raise ConversionError(f"{op.name}: dtype= has no ONNX form here")
        axes = None if axis is None else [int(a) for a in (axis if isinstance(axis, tuple | list) else (axis,))]
        if onnx_op in ("ReduceMax", "ReduceMin") and op.inputs[0].dtype == np.bool_:
            e.require(20)  # bool inputs
        e.reduce(onnx_op, ins[0], axes or None, out, keepdim)

    return emit


for _ours, _theirs in (("mean", "ReduceMean"), ("sum", "ReduceSum"), ("max", "ReduceMax"), ("min", "ReduceMin")):
    emits(_ours)(_reduce(_theirs))


@emits("clip")
def _clip(e, op, ins, out, min=None, max=None):  # noqa: A002 - the op's attr names
    dtype = op.inputs[0].dtype
    bounds = [e.const(np.array(v, dtype), "clip") if v is not None else "" for v in (min, max)]
    e.node("Clip", [ins[0], *bounds], out)


@emits("relu6")
def _relu6(e, op, ins, out, **attrs):
    _clip(e, op, ins, out, 0.0, 6.0)


@emits("scale")
def _scale(e, op, ins, out, scale=1.0, bias=0.0, bias_after_scale=True):
    dtype = op.inputs[0].dtype
    s, b = e.const(np.array(scale, dtype), "scale"), e.const(np.array(bias, dtype), "bias")
    if bias_after_scale:
        e.node("Add", [e.node("Mul", [ins[0], s])[0], b], out)
    else:
        e.node("Mul", [e.node("Add", [ins[0], b])[0], s], out)


@emits("gelu")
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


@emits("silu")
def _silu(e, op, ins, out, **attrs):
    e.node("Mul", [ins[0], e.node("Sigmoid", ins)[0]], out)


@emits("hardsigmoid")
def _hardsigmoid(e, op, ins, out, slope=0.1666667, offset=0.5):
    e.node("HardSigmoid", ins, out, alpha=float(slope), beta=float(offset))


@emits("leaky_relu")
def _leaky_relu(e, op, ins, out, negative_slope=0.01):
    e.node("LeakyRelu", ins, out, alpha=float(negative_slope))


@emits("square")
def _square(e, op, ins, out):
    e.node("Mul", [ins[0], ins[0]], out)


def _softmax(onnx_op: str):
    def emit(e, op, ins, out, axis=-1):
        e.node(onnx_op, ins, out, axis=int(axis))

    return emit


for _ours, _theirs in (("softmax", "Softmax"), ("log_softmax", "LogSoftmax")):
    emits(_ours)(_softmax(_theirs))


@emits("transpose")
def _transpose(e, op, ins, out, perm):
    e.node("Transpose", ins, out, perm=[int(p) for p in perm])


@emits("squeeze", "unsqueeze")
def _squeeze(e, op, ins, out, axes):
    """Both ops store sorted non-negative axes (squeeze: of the input, unsqueeze: of the output), as
    ONNX's axes input reads them; no axes is a no-op (ONNX's Squeeze would drop every unit dim)."""
    if not axes:
        e.node("Identity", ins, out)
        return
    e.node("Squeeze" if op.name == "squeeze" else "Unsqueeze", [ins[0], e.const(np.array(axes, np.int64), "axes")], out)


@emits("concat")
def _concat(e, op, ins, out, axis):
    e.node("Concat", ins, out, axis=int(axis))


@emits("cast")
def _cast(e, op, ins, out, dtype):
    if np.dtype(dtype).kind == "c" or np.dtype(op.inputs[0].dtype).kind == "c":
        _complex_cast(e, op, ins, out, dtype)
        return
    e.node("Cast", ins, out, to=e.dtype_code(dtype))


def _complex_cast(e, op, ins, out, dtype) -> None:
    """``cast`` where a complex type is involved, on (real, imag) pairs: a real input gains a zero
    imaginary part, a complex one cast to a real type keeps its real part."""
    source, target = np.dtype(op.inputs[0].dtype), np.dtype(dtype)
    x = ins[0]
    if source.kind != "c":
        (x,) = e.node("Unsqueeze", [x, e.const(np.array([-1], np.int64), "axes")])
        rank = len(op.inputs[0].shape) + 1
        pads = np.zeros(2 * rank, np.int64)
        pads[-1] = 1
        (x,) = e.node("Pad", [x, e.const(pads, "pads")])
    elif target.kind != "c":
        (x,) = e.node("Gather", [x, e.const(np.array(0, np.int64), "real")], axis=-1)
    e.node("Cast", [x], out, to=e.dtype_code(real_of(target) if target.kind == "c" else target))


@emits("full_like")
def _full_like(e, op, ins, out, value, dtype):
    fill = e.tensor(np.array([value], np.dtype(dtype)))
    e.node("ConstantOfShape", e.node("Shape", ins), out, value=fill)


@emits("detach")
def _detach(e, op, ins, out):
    """A gradient stop: nothing at inference. (The dropout op has no ONNX form: it is recorded only
    in training, where it draws a mask; inference-mode dropout records no op.)"""
    e.node("Identity", ins, out)


@emits("getitem")
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


@emits("interpolate")
def _interpolate(e, op, ins, out, size, scale, mode, align_corners, align_mode, data_format):
    if data_format != "NCHW" or mode not in ("nearest", "bilinear"):
        raise ConversionError(f"interpolate: mode {mode!r} / {data_format} has no ONNX form here")
    if mode == "nearest":
        attrs = dict(mode="nearest", coordinate_transformation_mode="asymmetric", nearest_mode="floor")
    else:
        ctm = "align_corners" if align_corners else ("asymmetric" if align_mode == 1 else "half_pixel")
        attrs = dict(mode="linear", coordinate_transformation_mode=ctm)
    if size is None:  # a given size wins; scale is then (0.0, 0.0) or ignored
        scales = e.const(np.array([1.0, 1.0, *scale], np.float32), "scales")
        e.node("Resize", [ins[0], "", scales], out, **attrs)
    else:
        shape = e.node("Shape", [ins[0]], start=0, end=2)[0]
        sizes = e.node("Concat", [shape, e.const(np.array(size, np.int64), "size")], axis=0)[0]
        e.node("Resize", [ins[0], "", "", sizes], out, **attrs)
