"""Fold inference-mode batch_norm into the conv2d, conv2d_transpose or matmul(+add) before it, or
else make it a per-channel ``x * s + shift`` that ``fuse_elementwise`` merges with its neighbours.

With frozen statistics, ``batch_norm(y) = (y - mean) * s + beta`` where ``s = gamma / sqrt(var +
eps)`` is a per-channel affine map, so it moves into the producer's weights: a conv's output
channel ``c`` scales ``W[c]`` by ``s[c]`` (a transposed conv's weight is [in, out/groups, kh, kw],
so there output channel ``g*out/groups + k`` scales ``W[g-th in-slice, k]``) and the bias becomes
``(b - mean) * s + beta``. A conv whose bias is a separate ``add`` of a per-channel constant (as
exporters write it) folds too: the scale goes into the conv, ``b * s + shift`` into the add. For a
matmul the channel must be the matmul's last axis (a ``[N, C]`` BatchNorm1D input), the weight's
output columns are scaled, and the bias goes into the following ``add`` (or a new one). Statistics
and weights may be params or constants (small ONNX initializers import as constants).

The new weights are computed in float64 and stored in the producer's dtype; the old weights
become unreferenced and dce drops them. A producer whose result is read by anything besides the
batch_norm is left alone (its unnormalised result is needed).
"""

from __future__ import annotations

import numpy as np

from ...ops.conv import conv2d_op, conv2d_transpose_op
from ...ops.elementwise import add as add_op
from ...ops.elementwise import multiply as multiply_op
from ...ops.linalg import matmul_op
from ...ops.norm import batch_norm_op
from ..ir import Operation, Program
from .base import add_param, known_array, producer, sole_reader, users

_CONVS = (conv2d_op.name, conv2d_transpose_op.name)  # the convolutions whose weights take the scale


def _is_inference_bn(op) -> bool:
    return op.name == batch_norm_op.name and not op.attrs.get("use_batch_stats", False) and not op.attrs.get("training")


def _vector(value, program: Program, ctx):
    """A known per-channel array as float64, or None (not a constant or a foldable weight)."""
    array = known_array(value, program, ctx)
    return None if array is None else np.asarray(array, np.float64).reshape(-1)


def _affine(op, program: Program, ctx):
    """(scale s, shift) of the batch_norm as float64 arrays, or None when its stats are not known."""
    _, mean, var, gamma, beta = op.inputs
    m, v = _vector(mean, program, ctx), _vector(var, program, ctx)
    if m is None or v is None:
        return None
    g = np.ones_like(m) if gamma is None else _vector(gamma, program, ctx)
    b = np.zeros_like(m) if beta is None else _vector(beta, program, ctx)
    if g is None or b is None:
        return None
    s = g / np.sqrt(v + float(op.attrs.get("epsilon", 1e-5)))
    return s, b - m * s


def _scale_output_channels(conv, weight: np.ndarray, s: np.ndarray) -> np.ndarray:
    if conv.name == conv2d_op.name:
        return weight * s.reshape(-1, *([1] * (weight.ndim - 1)))
    groups = conv.attrs.get("groups", 1)
    by_group = weight.reshape(groups, weight.shape[0] // groups, *weight.shape[1:])
    return (by_group * s.reshape(groups, 1, -1, *([1] * (weight.ndim - 2)))).reshape(weight.shape)


def _add_folded(program, block, index, w, new_w, new_b):
    """The folded weight and bias as new params before ``block.ops[index]``, named after the old weight."""
    base = producer(w).attrs["name"] if producer(w).name == "param" else "constant"
    pw = add_param(program, block, index, f"{base}.bn_folded", new_w)
    pb = add_param(program, block, index + 1, f"{base}.bn_folded_bias", new_b)
    return pw, pb


def _fold_conv(program, ctx, bn, conv, s, shift) -> bool:
    x, w, bias = conv.inputs
    nchw = conv.attrs.get("data_format", "NCHW") == "NCHW"
    if nchw == bool(bn.attrs.get("channels_last", False)):
        return False
    weight = known_array(w, program, ctx)
    b0 = 0.0 if bias is None else _vector(bias, program, ctx)
    if weight is None or b0 is None:
        return False
    new_w = _scale_output_channels(conv, weight.astype(np.float64), s).astype(weight.dtype)
    new_b = (b0 * s + shift).astype(weight.dtype)
    block = conv.parent
    index = block.ops.index(conv)
    pw, pb = _add_folded(program, block, index, w, new_w, new_b)
    conv.inputs = [x, pw.outputs[0], pb.outputs[0]]
    return True


def _conv_of(add, use_map):
    """The conv2d/conv2d_transpose whose result ``add`` (a bias add) alone reads, else None."""
    conv = producer(add.inputs[0])
    if conv is None or conv.name not in _CONVS:
        return None
    return conv if sole_reader(conv.outputs[0], use_map) is add else None


def _fold_conv_add(program, ctx, bn, add, conv, s, shift) -> bool:
    """``bn(conv(x) + b)`` (an exported conv with its bias as a separate add): the conv's weight and
    own bias take the scale, the add's per-channel constant becomes ``b * s + shift``."""
    bias = known_array(add.inputs[1], program, ctx)
    rank = len(add.outputs[0].shape)
    if bias is None or bias.ndim > rank:
        return False
    aligned = (1,) * (rank - bias.ndim) + bias.shape  # as it broadcasts against [N, C, ...]
    if rank < 2 or aligned[1] != s.size or any(d != 1 for i, d in enumerate(aligned) if i != 1):
        return False
    if not _fold_conv(program, ctx, bn, conv, s, np.zeros_like(shift)):
        return False
    new_b = (np.asarray(bias, np.float64).reshape(-1) * s + shift).reshape(bias.shape).astype(bias.dtype)
    block = add.parent
    pb = add_param(program, block, block.ops.index(add), "constant.bn_folded_bias", new_b)
    add.inputs = [add.inputs[0], pb.outputs[0]]
    return True


def _fold_matmul(program, ctx, bn, last, s, shift, use_map) -> bool:
    """``last`` is a matmul, or an add(matmul, bias) whose matmul only it reads."""
    add = last if last.name == add_op.name else None
    mm = producer(add.inputs[0]) if add else last
    if mm is None or mm.name != matmul_op.name or (add and sole_reader(mm.outputs[0], use_map) is not add):
        return False
    if len(mm.outputs[0].shape) != 2 or bn.attrs.get("channels_last", False):
        return False  # the channel (axis 1 of [N, C]) must be the matmul's last axis
    x, w = mm.inputs
    weight = known_array(w, program, ctx)
    b0 = 0.0 if add is None else _vector(add.inputs[1], program, ctx)
    if weight is None or len(w.shape) != 2 or b0 is None or (add is not None and len(add.inputs[1].shape) > 2):
        return False
    cols = s.reshape(-1, 1) if mm.attrs.get("transpose_y", False) else s.reshape(1, -1)
    new_w = (weight.astype(np.float64) * cols).astype(weight.dtype)
    new_b = (b0 * s + shift).astype(weight.dtype)
    block = mm.parent
    index = block.ops.index(mm)
    pw, pb = _add_folded(program, block, index, w, new_w, new_b)
    mm.inputs = [x, pw.outputs[0]]
    if add is not None:
        add.inputs = [add.inputs[0], pb.outputs[0]]
    else:
        out = mm.outputs[0]
        added = program.new_value(out.shape, out.dtype)
        block.insert(block.ops.index(mm) + 1, Operation(add_op.name, [out, pb.outputs[0]], [added], loc=bn.loc))
        program.replace_all_uses(bn.outputs[0], added)
    return True


def _fold_into_producer(program, ctx, bn, s, shift) -> bool:
    """Fold into the conv or matmul whose result only the batch_norm reads; False where none takes it."""
    use_map = users(program)
    prev = producer(bn.inputs[0])
    if prev is None or prev.parent is not bn.parent or sole_reader(bn.inputs[0], use_map) is not bn:
        return False
    conv = _conv_of(prev, use_map) if prev.name == add_op.name else None
    if prev.name in _CONVS:
        done = _fold_conv(program, ctx, bn, prev, s, shift)
    elif conv is not None:
        done = _fold_conv_add(program, ctx, bn, prev, conv, s, shift)
    elif prev.name in (matmul_op.name, add_op.name):
        done = _fold_matmul(program, ctx, bn, prev, s, shift, use_map)
    else:
        return False
    if done:
        program.replace_all_uses(bn.outputs[0], prev.outputs[0])
    return done


def _to_affine(program, bn, s, shift) -> bool:
    """``x * s + shift`` by per-channel constants in place of a batch_norm no producer takes (after a
    concat or a pool, as DenseNet's), so that ``fuse_elementwise`` merges it with the activation
    after it: one pass over the tensor instead of two."""
    x = bn.inputs[0]
    if np.dtype(x.dtype) not in (np.float32, np.float64) or len(x.shape) < 2:
        return False
    shape = (-1,) if bn.attrs.get("channels_last", False) else (-1,) + (1,) * (len(x.shape) - 2)
    block = bn.parent
    index = block.ops.index(bn)
    scale = add_param(program, block, index, "constant.bn_scale", s.astype(x.dtype).reshape(shape))
    offset = add_param(program, block, index + 1, "constant.bn_shift", shift.astype(x.dtype).reshape(shape))
    product, result = program.new_value(x.shape, x.dtype), program.new_value(x.shape, x.dtype)
    block.insert(index + 2, Operation(multiply_op.name, [x, scale.outputs[0]], [product], loc=bn.loc))
    block.insert(index + 3, Operation(add_op.name, [product, offset.outputs[0]], [result], loc=bn.loc))
    program.replace_all_uses(bn.outputs[0], result)
    return True


def fold_batchnorm(program: Program, ctx) -> int:
    folded = 0
    for bn in [op for op in program.walk() if _is_inference_bn(op)]:
        affine = _affine(bn, program, ctx)
        if affine is None or bn.parent is None:
            continue
        if _fold_into_producer(program, ctx, bn, *affine) or _to_affine(program, bn, *affine):
            bn.parent.remove(bn)
            folded += 1
    return folded
