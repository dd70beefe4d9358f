"""ONNX op -> paddlectl ops, one converter per ONNX op type, with the attributes and opsets it takes.

Each ``Rule`` names the attributes it understands and the opset range it was written for;
``check`` (run over the whole graph before anything is built) reports every node whose op type,
opset, attribute name or attribute value is outside that, all at once. Converters map onto the
existing ops of ``core.op.REGISTRY`` with Paddle's attr conventions (NCHW, padding as
``(top, bottom, left, right)``).
"""

from __future__ import annotations

import numpy as np

from ..errors import ConversionError
from .builder import is_symbolic, reshape_target
from .dependency import onnx
from .import_rules import FAMILY_RULES
from .import_rules.base import INT_BIG, LEGACY_BROADCAST, Rule, attrs_of, binary, dtype_of, operands, unary
from .import_rules.base import axis_of as _axis
from .import_rules.base import rank as _rank
from .import_rules.control_flow import rules as control_flow_rules
from .import_rules.conv3d import lift_conv_3d
from .import_rules.dilated_pool import dilated_max_pool
from .import_rules.pool3d import lift_3d
from .import_rules.resize import resize_by_matrices
from .validate import DTYPES, tensor_array, type_name

__all__ = ["RULES", "attrs_of", "check_graph"]


_ALL = ["slice", None, None, None]


def _pads2d(node_attrs: dict) -> list | str:
    auto = node_attrs.get("auto_pad", "NOTSET")
    if auto == "VALID":
        return [0, 0, 0, 0]
    if auto == "SAME_UPPER":
        return "SAME"
    p = list(node_attrs.get("pads", [0, 0, 0, 0]))
    return [p[0], p[2], p[1], p[3]]  # ONNX (h_begin, w_begin, h_end, w_end) -> (top, bottom, left, right)


def _check_2d(a, opset, ranks=(1, 2)):
    problems = []
    if "kernel_shape" in a and len(a["kernel_shape"]) not in ranks:
        sizes = " and ".join(f"{r}-D" for r in ranks)
        layouts = "/".join({1: "NCL", 2: "NCHW", 3: "NCDHW"}[r] for r in ranks)
        problems.append(f"kernel_shape {a['kernel_shape']}: only {sizes} windows ({layouts} inputs) are supported")
    if a.get("auto_pad", "NOTSET") not in ("NOTSET", "VALID", "SAME_UPPER"):
        problems.append(f"auto_pad={a['auto_pad']!r}: only NOTSET, VALID and SAME_UPPER are supported")
    return problems


# ----- elementwise -------------------------------------------------------------------------------------


def _div(b, node, a, opset):
    if dtype_of(b, node.input[0]).kind in "iu":  # ONNX integer division truncates toward zero
        return b.op("int_divide", operands(b, node, a, opset), rounding_mode="trunc")
    return b.op("divide", operands(b, node, a, opset))


def _pow(b, node, a, opset):
    base, exp = node.input
    if dtype_of(b, base) != dtype_of(b, exp):  # the result has the base's type
        (exp,) = b.op("cast", [exp], dtype=dtype_of(b, base).name)
    exponent = b.known(node.input[1])
    if exponent is not None and exponent.size == 1 and float(exponent.reshape(-1)[0]) == 2.0:
        return b.op("square", [base])
    return b.op("elementwise_pow", [base, exp])


def _hardsigmoid(b, node, a, opset):
    return b.op("hardsigmoid", [node.input[0]], slope=float(a.get("alpha", 0.2)), offset=float(a.get("beta", 0.5)))


def _cast(b, node, a, opset):
    dtype = np.dtype(onnx.helper.tensor_dtype_to_np_dtype(a["to"]))
    item = b.get(node.input[0])
    if is_symbolic(item):
        return [item]  # shape arithmetic: the entries stay ints / symbols
    return b.op("cast", [node.input[0]], dtype=dtype.name)


# ----- convolution, normalisation, pooling, resizing --------------------------------------------------


_LIFTED = {"kernel_shape": 1, "strides": 1, "dilations": 1, "output_padding": 0, "output_shape": 1}


def _lift_1d(convert, lifted_inputs: int = 1):
    """A 1-D conv/pool over (N, C, L) as the 2-D one over (N, C, 1, L): the first
    ``lifted_inputs`` inputs (data, and a conv's weight) and the window attrs get a unit H axis,
    the outputs lose it again."""

    def wrapped(b, node, a, opset):
        if _rank(b, node.input[0]) != 3:
            return convert(b, node, a, opset)
        names = list(node.input)
        for i in range(lifted_inputs):
            (lifted,) = b.op("getitem", [names[i]], spec=[_ALL, _ALL, ["none"], _ALL])
            names[i] = f"{names[i]}::2d"
            b.set(names[i], lifted)
        a2 = {k: [_LIFTED[k]] + list(v) if k in _LIFTED else v for k, v in a.items()}
        if "pads" in a:
            a2["pads"] = [0, a["pads"][0], 0, a["pads"][1]]
        node2 = onnx.helper.make_node(node.op_type, names, list(node.output), name=node.name, **a2)
        outs = convert(b, node2, a2, opset)
        return [b.op("getitem", [o], spec=[_ALL, _ALL, ["int", 0], _ALL])[0] for o in outs]

    return wrapped


def _conv(b, node, a, opset, op_name="conv2d", **extra):
    inputs = list(node.input) + [""] * (3 - len(node.input))
    if dtype_of(b, inputs[0]) == np.float16:  # the conv kernels run in float32/64: widen, convolve, narrow
        wide = [b.op("cast", [n], dtype="float32")[0] if n else "" for n in inputs[:3]]
        (out,) = _conv_op(b, wide, a, op_name, **extra)
        return b.op("cast", [out], dtype="float16")
    return _conv_op(b, inputs[:3], a, op_name, **extra)


def _conv_op(b, inputs, a, op_name, **extra):
    return b.op(
        op_name,
        inputs,
        stride=list(a.get("strides", [1, 1])),
        padding=_pads2d(a),
        dilation=list(a.get("dilations", [1, 1])),
        groups=int(a.get("group", 1)),
        data_format="NCHW",
        **extra,
    )


def _centred64(b, x: str, zp: str, per_channel: bool):
    """``x - zero_point`` in float64 (exact for 8-bit data); a weight's 1-D zero point is per output channel."""
    (x64,) = b.op("cast", [x], dtype="float64")
    if not zp:
        return x64
    (z,) = b.op("cast", [zp], dtype="float64")
    if per_channel and _rank(b, zp) == 1:
        (z,) = b.op("reshape", [z], shape=(-1, 1, 1, 1))
    return b.op("subtract", [x64, z])[0]


def _conv_integer(b, node, a, opset):
    """ConvInteger: the integer convolution, computed exactly in float64 and returned as int32."""
    x, w, zx, zw = (list(node.input) + ["", ""])[:4]
    (out,) = _conv_op(b, [_centred64(b, x, zx, False), _centred64(b, w, zw, True), None], a, "conv2d")
    return b.op("cast", [out], dtype="int32")


def _qlinear_conv(b, node, a, opset):
    """QLinearConv: the integer convolution plus the int32 bias, requantised to y's type as onnx's
    reference does (times x_scale * w_scale / y_scale, plus y_zero_point, clipped, rounded half to even)."""
    x, sx, zx, w, sw, zw, sy, zy, bias = (list(node.input) + [""] * 9)[:9]
    (acc,) = _conv_op(b, [_centred64(b, x, zx, False), _centred64(b, w, zw, True), None], a, "conv2d")
    if bias:
        (bias64,) = b.op("cast", [bias], dtype="float64")
        (bias64,) = b.op("reshape", [bias64], shape=(1, -1, 1, 1))
        (acc,) = b.op("add", [acc, bias64])
    (ratio,) = b.op("multiply", [sx, sw])
    (ratio,) = b.op("divide", [ratio, sy])
    (ratio,) = b.op("cast", [ratio], dtype="float64")
    if _rank(b, sw) == 1:
        (ratio,) = b.op("reshape", [ratio], shape=(1, -1, 1, 1))
    (y,) = b.op("multiply", [acc, ratio])
    target = dtype_of(b, zy) if zy else dtype_of(b, x)
    if zy:
        (y,) = b.op("add", [y, b.op("cast", [zy], dtype="float64")[0]])
    info = np.iinfo(target)
    (y,) = b.op("maximum", [y, np.asarray(info.min, np.float64)])
    (y,) = b.op("minimum", [y, np.asarray(info.max, np.float64)])
    (y,) = b.op("round", [y])
    return b.op("cast", [y], dtype=target.name)


def _conv_transpose(b, node, a, opset):
    output_padding = list(a.get("output_padding", [0, 0]))
    if a.get("auto_pad", "NOTSET") in ("SAME_UPPER", "SAME_LOWER") or "output_shape" in a:
        pads, output_padding = _transpose_pads(b, node, a, output_padding)
        a = {**a, "auto_pad": "NOTSET", "pads": pads}
    return _conv(b, node, a, opset, "conv2d_transpose", output_padding=output_padding, output_size=None)


def _transpose_pads(b, node, a, output_padding) -> tuple[list, list]:
    """ONNX's explicit pads (and output_padding) for a ConvTranspose sized by ``auto_pad=SAME_*``
    (output = input * stride) or by ``output_shape``: the total padding is split with the odd one
    at the end (SAME_UPPER) or the start (otherwise, as onnx's reference does); an output larger
    than the unpadded one grows at the end, as ``output_padding`` does."""
    x = b.get(node.input[0]).shape[2:]
    kernel = a.get("kernel_shape") or b.get(node.input[1]).shape[2:]
    strides, dilations = a.get("strides", [1, 1]), a.get("dilations", [1, 1])
    if not all(isinstance(d, int) for d in x):
        raise ConversionError(f"{b.where()}: auto_pad/output_shape needs fixed spatial input sizes, got {list(x)}")
    out = list(a["output_shape"])[-2:] if "output_shape" in a else [n * s for n, s in zip(x, strides, strict=True)]
    total = [s * (n - 1) + p + (k - 1) * d + 1 - o
             for n, s, p, k, d, o in zip(x, strides, output_padding, kernel, dilations, out, strict=True)]  # fmt: skip
    output_padding = [p - min(t, 0) for p, t in zip(output_padding, total, strict=True)]
    total = [max(t, 0) for t in total]
    upper = a.get("auto_pad") == "SAME_UPPER"
    begin = [t // 2 if upper else t - t // 2 for t in total]
    return begin + [t - s for t, s in zip(total, begin, strict=True)], output_padding


def _check_conv_transpose(a, opset):
    return _check_2d({k: v for k, v in a.items() if k != "auto_pad"}, opset) + (
        [f"auto_pad={a['auto_pad']!r}: only NOTSET, VALID, SAME_UPPER and SAME_LOWER are supported"]
        if a.get("auto_pad", "NOTSET") not in ("NOTSET", "VALID", "SAME_UPPER", "SAME_LOWER")
        else []
    )


def _batch_norm(b, node, a, opset):
    x, scale, bias, mean, var = node.input[:5]
    return b.op(
        "batch_norm",
        [x, mean, var, scale, bias],
        n_outputs=1,
        use_batch_stats=False,
        momentum=float(a.get("momentum", 0.9)),
        epsilon=float(a.get("epsilon", 1e-5)),
        channels_last=False,
        training=False,
    )


def _check_batch_norm(a, opset):
    problems = []
    if a.get("training_mode", 0):
        problems.append("training_mode=1: only inference (running statistics) is supported")
    if a.get("spatial", 1) != 1:
        problems.append("spatial=0 is not supported")
    if a.get("is_test", 1) == 0:  # opset 6: is_test=0 is training mode
        problems.append("is_test=0: only inference (running statistics) is supported")
    return problems


def _pool_attrs(a, **extra):
    kernel = list(a["kernel_shape"])
    return dict(
        kernel_size=kernel,
        stride=list(a.get("strides", [1, 1])),
        padding=_pads2d(a),
        ceil_mode=bool(a.get("ceil_mode", 0)),
        divisor_override=None,
        output_size=None,
        data_format="NCHW",
        **extra,
    )


def _lp_pool(b, node, a, opset):
    """(sum of |x|^p over each window)^(1/p): the window mean counting padding, times the window size."""
    x, p = node.input[0], float(a.get("p", 2))
    dt = dtype_of(b, x)
    (powered,) = b.op("elementwise_pow", [b.op("abs", [x])[0], np.asarray(p, dt)])
    (mean,) = b.op("avg_pool2d", [powered], **_pool_attrs(a, exclusive=False))
    (total,) = b.op("multiply", [mean, np.asarray(np.prod(a["kernel_shape"]), dt)])
    return b.op("elementwise_pow", [total, np.asarray(1.0 / p, dt)])


def _check_up_to_3d(a, opset):
    return _check_2d(a, opset, ranks=(1, 2, 3))


def _check_lp_pool(a, opset):
    dilated = any(d != 1 for d in a.get("dilations", [1, 1]))
    return _check_up_to_3d(a, opset) + (
        [f"dilations={a['dilations']}: dilated Lp pooling is not supported"] if dilated else []
    )


def _max_pool(b, node, a, opset):
    """Integer inputs pool in float64 (exact for every int8-32/uint8-32 value) and are cast back;
    dilated windows through ``import_rules.dilated_pool``."""
    x = node.input[0]
    integer = dtype_of(b, x).kind in "iu"
    source = b.op("cast", [x], dtype="float64")[0] if integer else x
    if any(d != 1 for d in a.get("dilations", [1, 1])):
        (out,) = dilated_max_pool(b, source, a)
    else:
        (out,) = b.op("max_pool2d", [source], n_outputs=1, **_pool_attrs(a, exclusive=True))
    return b.op("cast", [out], dtype=dtype_of(b, x).name) if integer else [out]


def _check_max_pool(a, opset):
    problems = _check_up_to_3d(a, opset)
    if a.get("storage_order", 0) != 0:
        problems.append("storage_order=1 is not supported")
    return problems


def _avg_pool(b, node, a, opset):
    return b.op("avg_pool2d", [node.input[0]], **_pool_attrs(a, exclusive=not a.get("count_include_pad", 0)))


_RESIZE_MODES = {
    ("nearest", "asymmetric"): ("nearest", False, 0),
    ("linear", "half_pixel"): ("bilinear", False, 0),
    ("linear", "pytorch_half_pixel"): ("bilinear", False, 0),
    ("linear", "align_corners"): ("bilinear", True, 0),
    ("linear", "asymmetric"): ("bilinear", False, 1),
}


def _resize(b, node, a, opset):
    """The interpolate kernel for the modes it has over NCHW's H and W; every other mode, axis
    set or rank through ``import_rules.resize`` (one weight matrix per axis)."""
    names = list(node.input) + [""] * 4
    scales_name, sizes_name = (names[1], "") if opset < 11 else (names[2], names[3])
    scales = b.require_known(scales_name, "the Resize scales") if scales_name else None
    scales = scales if scales is not None and scales.size else None
    sizes = None if scales is not None else b.require_known(sizes_name, "the Resize sizes")
    key = (a.get("mode", "nearest"), a.get("coordinate_transformation_mode", "half_pixel"))
    shape = b.get(node.input[0]).shape
    lead = (scales[:2].tolist() == [1.0, 1.0]) if scales is not None else (sizes[:2].tolist() == list(shape[:2]))
    fast = (key in _RESIZE_MODES and len(shape) == 4 and lead and "axes" not in a and not a.get("antialias", 0)
            and not a.get("exclude_outside", 0) and (key[0] != "nearest" or a.get("nearest_mode") == "floor")
            and _kernel_sizes_agree(shape, scales, sizes))  # fmt: skip
    if not fast:
        return resize_by_matrices(b, node, a, node.input[0], scales, sizes, a.get("axes"))
    mode, align_corners, align_mode = _RESIZE_MODES[key]
    scale = None if scales is None else [float(s) for s in scales[2:]]
    size = None if sizes is None else [int(s) for s in sizes.tolist()[2:]]
    return b.op("interpolate", [node.input[0]], size=size, scale=scale, mode=mode, align_corners=align_corners,
                align_mode=align_mode, data_format="NCHW")  # fmt: skip


def _kernel_sizes_agree(shape, scales, sizes) -> bool:
    """Paddle's interpolate and ONNX's Resize agree where every output size is above 1 and a scale
    makes a whole output size (ONNX keeps the fractional one in its coordinate maps); a symbolic
    size takes a whole upsampling scale."""
    if scales is not None:
        return all(
            float(n * s).is_integer() and n * s > 1 if isinstance(n, int) else float(s).is_integer() and s >= 1
            for n, s in zip(shape[2:], scales[2:].tolist(), strict=True)
        )
    return all(not isinstance(d, int) or d > 1 for d in sizes.tolist()[2:])


def _check_resize(a, opset):
    problems = []
    if a.get("coordinate_transformation_mode") == "tf_crop_and_resize":
        problems.append("coordinate_transformation_mode='tf_crop_and_resize' is not supported")
    if a.get("keep_aspect_ratio_policy", "stretch") != "stretch":
        problems.append(f"keep_aspect_ratio_policy={a['keep_aspect_ratio_policy']!r}: only 'stretch' is supported")
    return problems


# ----- shapes and layout -----------------------------------------------------------------------------


def _shape(b, node, a, opset):
    item = b.get(node.input[0])
    dims = list(item.shape)
    dims = dims[a.get("start", 0) : a["end"] if "end" in a else None]  # opset 15: a slice of the shape
    if all(isinstance(d, int) for d in dims):
        return [np.array(dims, dtype=np.int64)]
    return [np.array(dims, dtype=object)]


def _reshape(b, node, a, opset):
    target = b.require_known(node.input[1], "the Reshape target")
    if a.get("allowzero", 0) and any(not isinstance(d, str) and d == 0 for d in target.tolist()):
        raise ConversionError(f"{b.where()}: allowzero=1 with a 0 in the target {target.tolist()} (an empty "
                              "dimension) is not supported")  # fmt: skip
    x = b.get(node.input[0])
    if isinstance(x, np.ndarray) and not is_symbolic(target) and not is_symbolic(x):
        return [x.reshape([x.shape[i] if d == 0 else d for i, d in enumerate(target.tolist())])]
    return b.op("reshape", [node.input[0]], shape=reshape_target(tuple(x.shape), target, b.where()))


def _transpose(b, node, a, opset):
    perm = a.get("perm") or list(range(_rank(b, node.input[0])))[::-1]
    return b.op("transpose", [node.input[0]], perm=list(perm))


def _concat(b, node, a, opset):
    items = [b.get(n) for n in node.input]
    if any(is_symbolic(i) for i in items) and all(isinstance(i, np.ndarray) for i in items):
        return [np.concatenate([i.astype(object) for i in items], axis=a["axis"])]
    axis = _axis(a["axis"], len(items[0].shape))
    return b.op("concat", list(node.input), axis=axis)


def _index_spec(rank: int, per_axis: dict) -> list:
    return [per_axis.get(i, ["slice", None, None, None]) for i in range(rank)]


def _slice(b, node, a, opset):
    if opset < 10:
        starts, ends, axes, steps = a["starts"], a["ends"], a.get("axes"), None
    else:
        names = list(node.input) + [""] * 5
        starts = b.require_known(names[1], "Slice starts").tolist()
        ends = b.require_known(names[2], "Slice ends").tolist()
        axes = b.require_known(names[3], "Slice axes").tolist() if names[3] else None
        steps = b.require_known(names[4], "Slice steps").tolist() if names[4] else None
    x = b.get(node.input[0])
    rank = len(x.shape)
    axes = list(range(len(starts))) if axes is None else [_axis(int(ax), rank) for ax in axes]
    steps = [1] * len(starts) if steps is None else steps
    per_axis = {}
    for ax, s, e, st in zip(axes, starts, ends, steps, strict=True):
        stop = None if (st > 0 and e >= INT_BIG) or (st < 0 and e <= -INT_BIG) else int(e)
        per_axis[ax] = ["slice", int(s), stop, None if st == 1 else int(st)]
    if isinstance(x, np.ndarray):
        key = tuple(slice(p[1], p[2], p[3]) for p in _index_spec(rank, per_axis))
        return [x[key]]
    return b.op("getitem", [node.input[0]], spec=_index_spec(rank, per_axis))


def _squeeze_axes(b, node, a, opset):
    if opset < 13:
        return a.get("axes")
    return b.require_known(node.input[1], "Squeeze axes").tolist() if len(node.input) > 1 and node.input[1] else None


def _squeeze(b, node, a, opset):
    x = b.get(node.input[0])
    rank = len(x.shape)
    axes = _squeeze_axes(b, node, a, opset)
    axes = [i for i, d in enumerate(x.shape) if d == 1] if axes is None else [_axis(int(i), rank) for i in axes]
    if isinstance(x, np.ndarray):
        return [np.squeeze(x, tuple(axes))]
    return b.op("getitem", [node.input[0]], spec=_index_spec(rank, {i: ["int", 0] for i in axes}))


def _unsqueeze(b, node, a, opset):
    x = b.get(node.input[0])
    axes = _squeeze_axes(b, node, a, opset)
    out_rank = len(x.shape) + len(axes)
    axes = sorted(_axis(int(i), out_rank) for i in axes)
    if isinstance(x, np.ndarray):
        return [np.expand_dims(x, tuple(axes))]
    spec = [["none"] if i in axes else ["slice", None, None, None] for i in range(out_rank)]
    return b.op("getitem", [node.input[0]], spec=spec)


def _reduce_mean(b, node, a, opset):
    rank = _rank(b, node.input[0])
    axes = a.get("axes") if opset < 18 else (b.require_known(node.input[1], "ReduceMean axes").tolist()
                                            if len(node.input) > 1 and node.input[1] else None)  # fmt: skip
    axis = None if not axes else [_axis(int(i), rank) for i in axes]
    return b.op("mean", [node.input[0]], axis=axis, keepdim=bool(a.get("keepdims", 1)))


def _identity(b, node, a, opset):
    return [b.get(node.input[0])]


_CONSTANT_FORMS = {"value_float": np.float32, "value_floats": np.float32, "value_int": np.int64,
                   "value_ints": np.int64}  # fmt: skip


def _constant(b, node, a, opset):
    """Constant's ``value`` tensor, or (opset 12 on) one of its scalar/list forms."""
    if "value" in a:
        return [tensor_array(a["value"], f"{b.where()}: attribute 'value'")]
    for name, dtype in _CONSTANT_FORMS.items():
        if name in a:
            return [np.asarray(a[name], dtype=dtype)]
    raise ConversionError(f"{b.where()}: Constant needs one of 'value', {sorted(_CONSTANT_FORMS)}")


def _matmul(b, node, a, opset):
    return b.op("matmul", list(node.input))


def _gemm(b, node, a, opset):
    (out,) = b.op("matmul", list(node.input[:2]), transpose_x=bool(a.get("transA", 0)),
                  transpose_y=bool(a.get("transB", 0)))  # fmt: skip
    if float(a.get("alpha", 1.0)) != 1.0:
        (out,) = b.op("scale", [out], scale=float(a["alpha"]), bias=0.0, bias_after_scale=True)
    if len(node.input) > 2 and node.input[2]:
        c = node.input[2]
        if float(a.get("beta", 1.0)) != 1.0:
            (c,) = b.op("scale", [c], scale=float(a["beta"]), bias=0.0, bias_after_scale=True)
        (out,) = b.op("add", [out, c])
    return [out]


def _flatten(b, node, a, opset):
    x = b.get(node.input[0])
    axis = _axis(a.get("axis", 1), len(x.shape))
    lead = x.shape[:axis]
    if axis == 1:
        return b.op("reshape", [node.input[0]], shape=(0, -1))
    if all(isinstance(d, int) for d in lead):
        return b.op("reshape", [node.input[0]], shape=(int(np.prod(lead)), -1))
    raise ConversionError(
        f"{b.where()}: Flatten at axis {axis} over symbolic leading dims {list(lead)} is not supported"
    )


_CONV_ATTRS = frozenset({"auto_pad", "dilations", "group", "kernel_shape", "pads", "strides"})
RULES: dict[str, Rule] = {
    "Add": binary("add"),
    "Sub": binary("subtract"),
    "Mul": binary("multiply"),
    "Div": Rule(_div, LEGACY_BROADCAST),
    "Pow": Rule(_pow),
    "Sqrt": unary("sqrt"),
    "Relu": unary("relu"),
    "Sigmoid": unary("sigmoid"),
    "Tanh": unary("tanh"),
    "Exp": unary("exp"),
    "Neg": unary("neg"),
    "HardSigmoid": Rule(_hardsigmoid, frozenset({"alpha", "beta"})),
    "Cast": Rule(_cast, frozenset({"to", "saturate"})),
    "MatMul": Rule(_matmul),
    "Gemm": Rule(_gemm, frozenset({"alpha", "beta", "transA", "transB", "broadcast"})),  # C broadcasts anyway
    "Conv": Rule(
        lift_conv_3d(_lift_1d(_conv, 2)),
        _CONV_ATTRS,
        check=_check_up_to_3d,
    ),  # fmt: skip
    "ConvInteger": Rule(_conv_integer, _CONV_ATTRS, since=10, check=_check_2d),
    "QLinearConv": Rule(_qlinear_conv, _CONV_ATTRS, since=10, check=_check_2d),
    "ConvTranspose": Rule(
        _lift_1d(_conv_transpose, 2),
        frozenset(
            {"auto_pad", "dilations", "group", "kernel_shape", "pads", "strides", "output_padding", "output_shape"}
        ),  # fmt: skip
        check=_check_conv_transpose,
    ),
    "BatchNormalization": Rule(
        _batch_norm, frozenset({"epsilon", "momentum", "spatial", "training_mode", "is_test"}), check=_check_batch_norm
    ),  # fmt: skip
    "MaxPool": Rule(
        lift_3d(_lift_1d(_max_pool)),
        frozenset({"auto_pad", "ceil_mode", "dilations", "kernel_shape", "pads", "storage_order", "strides"}),
        check=_check_max_pool,
    ),  # fmt: skip
    "LpPool": Rule(
        lift_3d(_lift_1d(_lp_pool)),
        frozenset({"auto_pad", "ceil_mode", "dilations", "kernel_shape", "p", "pads", "strides"}),
        check=_check_lp_pool,
    ),
    "AveragePool": Rule(
        lift_3d(_lift_1d(_avg_pool)),
        frozenset({"auto_pad", "ceil_mode", "count_include_pad", "kernel_shape", "pads", "strides"}),
        check=_check_up_to_3d,
    ),  # fmt: skip
    "Resize": Rule(
        _resize,
        frozenset(
            {
                "mode",
                "coordinate_transformation_mode",
                "nearest_mode",
                "cubic_coeff_a",
                "exclude_outside",
                "extrapolation_value",
                "antialias",
                "axes",
                "keep_aspect_ratio_policy",
            }
        ),
        since=10,
        check=_check_resize,
    ),  # fmt: skip
    "Shape": Rule(_shape, frozenset({"start", "end"})),
    "Reshape": Rule(
        _reshape,
        frozenset({"allowzero"}),
        since=5,
    ),
    "Transpose": Rule(_transpose, frozenset({"perm"})),
    "Concat": Rule(_concat, frozenset({"axis"})),
    "Slice": Rule(_slice, frozenset({"starts", "ends", "axes"})),
    "Squeeze": Rule(_squeeze, frozenset({"axes"})),
    "Unsqueeze": Rule(_unsqueeze, frozenset({"axes"})),
    "ReduceMean": Rule(
        _reduce_mean,
        frozenset({"axes", "keepdims", "noop_with_empty_axes"}),
        check=lambda a, o: ["noop_with_empty_axes=1 is not supported"] if a.get("noop_with_empty_axes", 0) else [],
    ),  # fmt: skip
    "Flatten": Rule(_flatten, frozenset({"axis"})),
    "Constant": Rule(_constant, frozenset({"value", *_CONSTANT_FORMS})),
    "Identity": Rule(_identity),
    **FAMILY_RULES,
}
RULES.update(control_flow_rules(RULES))  # If/Scan convert their subgraphs' nodes by this same table


def check_graph(graph, opsets: list[int]) -> list[str]:
    """Every unsupported op, opset, attribute or attribute value in ``graph`` (node ``i`` read at
    ``opsets[i]``), one line each."""
    problems = []
    for i, (node, opset) in enumerate(zip(graph.node, opsets, strict=True)):
        label = f"node {node.name or f'#{i}'!r} ({node.op_type}, opset {opset})"
        if node.domain not in ("", "ai.onnx"):
            problems.append(f"{label}: operator domain {node.domain!r} is not supported")
            continue
        rule = RULES.get(node.op_type)
        if rule is None:
            problems.append(f"{label}: op type {node.op_type} is not supported")
            continue
        if opset < rule.since:
            problems.append(f"{label}: supported from opset {rule.since} on")
        a = attrs_of(node)
        unknown = sorted(set(a) - rule.attrs)
        if unknown:
            problems.append(f"{label}: attribute(s) {unknown} not supported (known: {sorted(rule.attrs)})")
        if rule.check is not None:
            problems += [f"{label}: {p}" for p in rule.check(a, opset)]
    return problems + _type_problems(graph)


_DTYPE_ATTRS = ("to", "dtype", "output_dtype")


def _type_problems(graph) -> list[str]:
    """Every element type without a NumPy dtype of its own (bfloat16, float8, 4-bit, strings) that a
    node would make, and every graph output or intermediate that is not a tensor (sequences,
    optionals, maps): named here, before conversion, instead of failing deep inside it."""
    problems = []
    for i, node in enumerate(graph.node):
        label = f"node {node.name or f'#{i}'!r} ({node.op_type})"
        for attr in node.attribute:
            elem = attr.t.data_type if attr.HasField("t") else attr.i if attr.name in _DTYPE_ATTRS else None
            if elem is not None and elem not in DTYPES:
                problems.append(f"{label}: attribute {attr.name!r} has element type {type_name(elem)}; "
                                f"supported: {sorted(type_name(t) for t in DTYPES)}")  # fmt: skip
    for v in list(graph.output) + list(graph.value_info):
        kind = v.type.WhichOneof("value")
        if kind not in (None, "tensor_type"):
            problems.append(f"value {v.name!r} is a {kind.removesuffix('_type')}; only tensors are supported")
        elif kind and v.type.tensor_type.elem_type not in DTYPES:
            problems.append(f"value {v.name!r} has element type {type_name(v.type.tensor_type.elem_type)}; "
                            f"supported: {sorted(type_name(t) for t in DTYPES)}")  # fmt: skip
    return problems
