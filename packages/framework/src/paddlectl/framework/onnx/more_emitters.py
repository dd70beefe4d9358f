"""Export rules for ops the importer maps onto and ``emitters.py`` did not cover: trigonometric and
test functions, comparisons and logic, the exponential-linear activations, arg-reductions, flips,
triangles, ``einsum``/``det``/``prod``, gathers and splits, cumulative sums and products; each one
ONNX opset-17 node or a short composition (CumProd: opset 26). With them an imported model exports back (``round_trip.py`` checks each op type).
"""

from __future__ import annotations

import numpy as np

from ..errors import ConversionError
from .emitters import _same, emits

for _ours, _theirs in (
    ("sin", "Sin"), ("cos", "Cos"), ("tan", "Tan"), ("asin", "Asin"), ("acos", "Acos"), ("atan", "Atan"),
    ("sinh", "Sinh"), ("cosh", "Cosh"), ("round", "Round"), ("isnan", "IsNaN"), ("equal", "Equal"),
    ("greater_than", "Greater"), ("less_than", "Less"), ("greater_equal", "GreaterOrEqual"),
    ("less_equal", "LessOrEqual"), ("where", "Where"), ("det", "Det"), ("gather_nd", "GatherND"),
):  # fmt: skip
    emits(_ours)(_same(_theirs))


@emits("not_equal")
def _not_equal(e, op, ins, out):
    """ONNX has no NotEqual: Not(Equal)."""
    e.node("Not", e.node("Equal", ins), out)


@emits("logical_not", "logical_and", "logical_or", "logical_xor")
def _logical(e, op, ins, out):
    """Paddle's logical ops take any dtype (nonzero is true); ONNX's take bool."""
    args = [n if v.dtype == np.bool_ else e.node("Cast", [n], to=e.dtype_code(np.bool_))[0]
            for n, v in zip(ins, op.inputs, strict=True)]  # fmt: skip
    e.node({"logical_not": "Not", "logical_and": "And", "logical_or": "Or", "logical_xor": "Xor"}[op.name], args, out)


def _axes(e, axes) -> str:
    return e.const(np.asarray(axes, np.int64).reshape(-1), "axes")


@emits("isinf", "isposinf", "isneginf")
def _isinf(e, op, ins, out):
    if op.inputs[0].dtype == np.float16:
        e.require(20)  # float16 inputs
    e.node("IsInf", ins, out, detect_positive=int(op.name != "isneginf"), detect_negative=int(op.name != "isposinf"))


@emits("rsqrt")
def _rsqrt(e, op, ins, out):
    e.node("Reciprocal", e.node("Sqrt", ins), out)


@emits("elu", "celu")
def _elu(e, op, ins, out, alpha=1.0):
    e.node("Elu" if op.name == "elu" else "Celu", ins, out, alpha=float(alpha))


@emits("selu")
def _selu(e, op, ins, out, scale=1.0507009873554805, alpha=1.6732632423543772):
    e.node("Selu", ins, out, alpha=float(alpha), gamma=float(scale))


@emits("softplus")
def _softplus(e, op, ins, out, beta=1.0, threshold=20.0):
    """ONNX's Softplus is ``log(1 + e^x)`` throughout; ours returns ``x`` past the threshold, which
    differs from it by less than float32's resolution there (e^-20)."""
    if beta != 1.0 or threshold < 20.0:
        raise ConversionError(f"softplus: beta={beta}, threshold={threshold} has no ONNX form (only beta=1)")
    e.node("Softplus", ins, out)


@emits("mish")
def _mish(e, op, ins, out):
    """``x * tanh(softplus(x))`` (ONNX's Mish is opset 18; the export writes 17)."""
    e.node("Mul", [ins[0], e.node("Tanh", e.node("Softplus", ins))[0]], out)


@emits("thresholded_relu")
def _thresholded_relu(e, op, ins, out, threshold=1.0, value=0.0):
    if value != 0.0:
        raise ConversionError(f"thresholded_relu: value={value} has no ONNX form (only 0)")
    e.node("ThresholdedRelu", ins, out, alpha=float(threshold))


@emits("argmax", "argmin")
def _arg(e, op, ins, out, axis=None, keepdim=False, dtype="int64"):
    x = ins[0]
    if axis is None:
        x, axis = e.node("Reshape", [x, e.const(np.array([-1], np.int64), "shape")])[0], 0
    theirs = "ArgMax" if op.name == "argmax" else "ArgMin"
    if np.dtype(dtype) == np.int64:
        e.node(theirs, [x], out, axis=int(axis), keepdims=int(keepdim))
        return
    index = e.node(theirs, [x], axis=int(axis), keepdims=int(keepdim))
    e.node("Cast", index, out, to=e.dtype_code(dtype))


@emits("fmod")
def _fmod(e, op, ins, out):
    e.node("Mod", ins, out, fmod=1)


@emits("remainder")
def _remainder(e, op, ins, out):
    """The divisor's sign, as Python's ``%``: ONNX's ``Mod`` for integers; floats (which ONNX's
    ``fmod=0`` refuses) as C's fmod moved by ``b`` where its sign differs from ``b``'s, as NumPy's
    remainder (so infinite divisors and zeros match too)."""
    if np.dtype(op.inputs[0].dtype).kind in "iu":
        e.node("Mod", ins, out, fmod=0)
        return
    a, b = ins
    (r,) = e.node("Mod", [a, b], fmod=1)
    zero = e.const(np.array(0, op.inputs[0].dtype), "zero")
    (differs,) = e.node("Xor", [e.node("Less", [r, zero])[0], e.node("Less", [b, zero])[0]])
    (moved,) = e.node("And", [e.node("Not", e.node("Equal", [r, zero]))[0], differs])
    e.node("Where", [moved, e.node("Add", [r, b])[0], r], out)


@emits("flip")
def _flip(e, op, ins, out, axis):
    axes = [int(a) for a in (axis if isinstance(axis, list | tuple) else [axis])]
    n = len(axes)
    ends = e.const(np.full(n, -(2**62), np.int64), "ends")
    e.node("Slice", [ins[0], e.const(np.full(n, -1, np.int64), "starts"), ends, _axes(e, axes),
                     e.const(np.full(n, -1, np.int64), "steps")], out)  # fmt: skip


@emits("tril", "triu")
def _trilu(e, op, ins, out, diagonal=0):
    e.node("Trilu", [ins[0], e.const(np.array(int(diagonal), np.int64), "k")], out, upper=int(op.name == "triu"))


@emits("einsum")
def _einsum(e, op, ins, out, equation):
    e.node("Einsum", ins, out, equation=str(equation))


@emits("prod")
def _prod(e, op, ins, out, axis=None, keepdim=False):
    axes = None if axis is None else [int(a) for a in (axis if isinstance(axis, list | tuple) else [axis])]
    e.reduce("ReduceProd", ins[0], axes, out, keepdim)


@emits("gather")
def _gather(e, op, ins, out, axis):
    e.node("Gather", ins, out, axis=int(axis))


@emits("take_along_axis")
def _take_along_axis(e, op, ins, out, axis):
    x, index = op.inputs[0].shape, op.inputs[1].shape
    axis = int(axis) % len(x)
    if len(x) != len(index) or any(a != b for k, (a, b) in enumerate(zip(x, index, strict=True)) if k != axis):
        raise ConversionError("take_along_axis: broadcasting indices have no ONNX form; expand them first")
    e.node("GatherElements", ins, out, axis=axis)


@emits("split")
def _split(e, op, ins, out, axis, sections):
    e.node("Split", [ins[0], e.const(np.asarray(sections, np.int64), "split")], out, axis=int(axis))


@emits("log10", "log2")
def _log_base(e, op, ins, out):
    base = 10.0 if op.name == "log10" else 2.0
    e.node("Div", [e.node("Log", ins)[0], e.const(np.array(np.log(base), op.inputs[0].dtype), "log_base")], out)


@emits("cumsum", "cumprod")
def _cumulative(e, op, ins, out, axis):
    """Integers sum in int64 here (NumPy's rule), in their own type in ONNX: cast to the output's
    first. ONNX has CumProd from opset 26 on."""
    if op.name == "cumprod":
        e.require(26)
    x = ins[0]
    if op.outputs[0].dtype != op.inputs[0].dtype:
        x = e.node("Cast", [x], to=e.dtype_code(op.outputs[0].dtype))[0]
    theirs = "CumSum" if op.name == "cumsum" else "CumProd"
    e.node(theirs, [x, e.const(np.array(int(axis), np.int64), "axis")], out)


@emits("tile")
def _tile(e, op, ins, out, reps):
    reps = [int(r) for r in reps]
    rank = len(op.inputs[0].shape)
    x = ins[0]
    if len(reps) > rank:  # NumPy's tile prepends unit dims to the input
        x = e.node("Unsqueeze", [x, _axes(e, list(range(len(reps) - rank)))])[0]
    reps = [1] * (rank - len(reps)) + reps
    e.node("Tile", [x, e.const(np.array(reps, np.int64), "repeats")], out)


@emits("expand")
def _expand(e, op, ins, out, shape):
    """-1 keeps the input's dim: 1 in ONNX's broadcasting Expand."""
    target = [1 if int(d) == -1 else int(d) for d in shape]
    e.node("Expand", [ins[0], e.const(np.array(target, np.int64), "shape")], out)


_PAD_MODES = {"constant": "constant", "reflect": "reflect", "replicate": "edge", "circular": "wrap"}


@emits("pad")
def _pad(e, op, ins, out, pads, mode, value):
    """Circular padding is ONNX's ``wrap`` mode, opset 19's."""
    if mode not in _PAD_MODES:
        raise ConversionError(f"pad: mode {mode!r} has no ONNX form; one of {sorted(_PAD_MODES)} does")
    if mode == "circular":
        e.require(19)
    pairs = [(int(p[0]), int(p[1])) for p in pads]
    if np.dtype(op.inputs[0].dtype).kind == "c":  # (real, imag) pairs: the pair axis stays
        if mode != "constant" or value != 0:
            raise ConversionError(f"pad: a complex tensor pads on ONNX's (real, imag) pairs with zeros only, got "
                                  f"mode {mode!r}, value {value!r}")  # fmt: skip
        pairs.append((0, 0))
        value = 0.0
    flat = np.array([p[0] for p in pairs] + [p[1] for p in pairs], np.int64)
    args = [ins[0], e.const(flat, "pads")]
    if mode == "constant":
        args.append(e.const(np.array(value, op.inputs[0].dtype).real, "pad_value"))
    e.node("Pad", args, out, mode=_PAD_MODES[mode])


@emits("topk")
def _topk(e, op, ins, out, k, axis, largest):
    e.node("TopK", [ins[0], e.const(np.array([int(k)], np.int64), "k")], out, axis=int(axis), largest=int(largest),
           sorted=1)  # fmt: skip


def _whole_axis_topk(e, ins, outputs, axis, descending):
    """A sort along ``axis`` (non-negative: the ops normalise it) as TopK over all of it: ONNX's TopK
    puts equal entries in index order, as the stable ``sort``/``argsort`` do in both directions; ``k``
    is the axis's size read from the tensor's shape, so a symbolic dim exports too."""
    k = e.node("Shape", [ins[0]], start=int(axis), end=int(axis) + 1)[0]
    e.node("TopK", [ins[0], k], outputs, axis=int(axis), largest=int(bool(descending)), sorted=1)


@emits("sort")
def _sort(e, op, ins, out, axis, descending):
    _whole_axis_topk(e, ins, [out[0], e.fresh("sort_indices")], axis, descending)


@emits("argsort")
def _argsort(e, op, ins, out, axis, descending):
    _whole_axis_topk(e, ins, [e.fresh("argsort_values"), out[0]], axis, descending)


@emits("one_hot")
def _one_hot(e, op, ins, out, num_classes):
    values = e.const(np.array([0, 1], op.outputs[0].dtype), "one_hot_values")
    e.node("OneHot", [ins[0], e.const(np.array(int(num_classes), np.int64), "depth"), values], out, axis=-1)


@emits("embedding")
def _embedding(e, op, ins, out, padding_idx=None, scale_grad_by_freq=False, max_norm=None, norm_type=2.0, sparse=False):
    """``weight[ids]`` as a Gather, the padding row's lookups zeroed (served models look up, never renorm)."""
    if max_norm is not None:
        raise ConversionError("embedding: max_norm renormalises the table as it looks up; ONNX has no such op")
    ids, weight = ins
    if padding_idx is None:
        e.node("Gather", [weight, ids], out, axis=0)
        return
    rows = e.node("Gather", [weight, ids], axis=0)[0]
    pad = e.const(np.asarray(padding_idx, op.inputs[0].dtype), "padding_idx")
    hit = e.node("Unsqueeze", [e.node("Equal", [ids, pad])[0], _axes(e, [-1])])[0]
    zero = e.const(np.zeros((), op.outputs[0].dtype), "zero")
    e.node("Where", [hit, zero, rows], out)
