"""The ``fuse_elementwise`` pass: group chains of elementwise/broadcast ops into one generated kernel.

Groups grow backwards from a root (the last op of a chain, or a reduction over the last axes that
ends it): a producer joins when it is an elementwise op whose record has a scalar expression
(``OpDef.expr``) for its attrs,
has the root's dtype and the group's full shape (so nothing is computed twice for a broadcast),
and everything reading its result is already in the group. The group becomes one
``fused_elementwise`` op in the root's place, reading the group's outside inputs; its
intermediates disappear. When one of those inputs is a fresh conv/matmul/norm result read only by
the group, the kernel writes its result over it (``inplace``): the group is that op's epilogue.

A group whose kernel cannot be built (no writable cache directory, a Numba error) is left unfused
and the reason is kept in the report. A conv whose readers are all elementwise first gives up its
bias to an ``add`` that joins their group (one pass over the output less). A group of one
op is formed only as such an epilogue (it then saves a buffer); otherwise a lone op keeps its own
kernel. Every kernel is compiled (or loaded from the disk cache) here, at load time, so the first
run does not pay for it; the compile report records how each was obtained.
"""

from __future__ import annotations

import string

import numpy as np
from numba.core.errors import NumbaError

from ...compiler.fused_op import fused_elementwise_op
from ...compiler.report import CompileReport, GroupRecord
from ...core.op import BROADCAST, ELEMENTWISE, REGISTRY
from ...core.shapes import normalize_axes
from ...kernels import background
from ...kernels.codegen import accumulator, expression, template
from ...kernels.kernel_cache import cache_dir, get_kernel
from ...kernels.launch import probe_inner_kinds
from ...ops import elementwise as ew
from ...ops.conv import conv2d_op, conv2d_transpose_op
from ..ir import Operation, Program
from .base import add_param, deterministic, known_array, producer, users

_FLOATS = (np.dtype("float32"), np.dtype("float64"))


def _arity(text: str) -> int:
    return len({f for _, f, _, _ in string.Formatter().parse(text) if f})


def _reduction(op) -> bool:
    """A reduce op whose record gives the fused loops an accumulator rule (its ``expr``)."""
    return accumulator(op.name) is not None


def _elementwise(op) -> bool:
    if op.blocks or op.name not in REGISTRY or not deterministic(op) or len(op.outputs) != 1:
        return False
    if REGISTRY[op.name].kind not in (ELEMENTWISE, BROADCAST):
        return False
    text = template(REGISTRY[op.name].expr, op.attrs)
    out = op.outputs[0]
    return (
        text is not None
        and _arity(text) == len(op.inputs)
        and out.dtype in _FLOATS
        and all(v is not None and v.dtype == out.dtype for v in op.inputs)
    )


def _trailing_reduce(op) -> bool:
    if not _reduction(op) or len(op.inputs) != 1:
        return False
    x = op.inputs[0]
    if x.dtype not in _FLOATS or op.outputs[0].dtype != x.dtype or op.attrs.get("dtype") not in (None, x.dtype.name):
        return False
    axes = _reduced_axes(op)
    return bool(axes) and axes == list(range(len(x.shape) - len(axes), len(x.shape)))


def _reduced_axes(op) -> list[int]:
    """A reduction's axes, sorted and non-negative; all of them for ``axis=None`` (``paddle.mean(x)``)."""
    ndim = len(op.inputs[0].shape)
    axes = normalize_axes(op.name, op.attrs.get("axis"), ndim)
    return list(range(ndim)) if axes is None else sorted(axes)


def _grow(root, block, use_map, taken: set) -> list[Operation]:
    """The root and every producer that may join it, in block order."""
    shape = root.inputs[0].shape if _reduction(root) else root.outputs[0].shape
    dtype = root.outputs[0].dtype
    group = {id(root): root}
    changed = True
    while changed:
        changed = False
        for op in list(group.values()):
            for v in op.inputs:
                p = producer(v)
                if p is None or id(p) in group or id(p) in taken or p.parent is not block or not _elementwise(p):
                    continue
                out = p.outputs[0]
                if out.shape != shape or out.dtype != dtype:
                    continue
                if all(isinstance(u, Operation) and id(u) in group for u in use_map.get(id(out), [])):
                    group[id(p)] = p
                    changed = True
    order = {id(op): i for i, op in enumerate(block.ops)}
    return sorted(group.values(), key=lambda op: order[id(op)])


def _nbytes(value) -> str:
    dims = "*".join(f"({d})" for d in value.shape) or "1"
    return f"{dims}*{value.dtype.itemsize}"


def _rewrite(program: Program, block, ops: list[Operation], use_map, report: CompileReport) -> None:
    root = ops[-1]
    members = {id(op) for op in ops}
    leaves: list = []
    names: dict[int, str] = {}
    statements = []
    for k, op in enumerate(ops):
        operands = []
        for v in op.inputs:
            if id(v) not in names:
                names[id(v)] = f"x{len(leaves)}"
                leaves.append(v)
            operands.append(names[id(v)])
        if op is root and _reduction(op):
            continue
        statements.append(f"t{k} = {expression(template(REGISTRY[op.name].expr, op.attrs), operands)}")
        names[id(op.outputs[0])] = f"t{k}"
    body = "; ".join(statements)
    out = root.outputs[0]
    attrs = {"body": body, "ops": [op.name for op in ops], "dtype": out.dtype}
    reduce = root.name if _reduction(root) else None
    if reduce:
        attrs.update(reduce=reduce, axis=_reduced_axes(root), keepdim=bool(root.attrs.get("keepdim", False)))
    epilogue = None
    if reduce is None:
        for i, leaf in enumerate(leaves):
            p = producer(leaf)
            if (
                p is not None and p.name in REGISTRY and REGISTRY[p.name].fresh_output and leaf.shape == out.shape and leaf.dtype == out.dtype
                and all(isinstance(u, Operation) and id(u) in members for u in use_map.get(id(leaf), []))
            ):  # fmt: skip
                attrs["inplace"] = i
                epilogue = p.name
                break
    if len(ops) == 1 and epilogue is None:
        return
    saved = [_nbytes(op.outputs[0]) for op in ops if op is not root]
    if epilogue is not None:
        saved.append(_nbytes(out))
    try:
        inner = probe_inner_kinds(tuple(v.shape for v in leaves), reduce, attrs.get("axis"))
        with background.deferred():  # a cold kernel compiles in the background, not in this pass
            kernel = get_kernel(body, [v.dtype for v in leaves], out.dtype, reduce, attrs.get("inplace"), inner)
        key, source, seconds = kernel.key, kernel.stats.source, kernel.stats.seconds
    except background.KernelsCompiling as cold:
        key, source, seconds = cold.key, "background", 0.0
    except (OSError, NumbaError) as exc:  # no cache directory, or Numba refuses: the ops keep their kernels
        report.skipped.append(f"{'+'.join(attrs['ops'])}: {exc}")
        return
    index = block.ops.index(root)
    for op in ops:
        block.remove(op)
    block.insert(index - len(ops) + 1, Operation(fused_elementwise_op.name, leaves, [out], attrs, loc=root.loc))
    report.groups.append(
        GroupRecord(
            ops=attrs["ops"], body=body, kernel=key, source=source,
            seconds=seconds, saved_bytes="+".join(saved) or "0", epilogue_of=epilogue,
        )
    )  # fmt: skip


def _bias_into_epilogues(program: Program, ctx) -> None:
    """A conv (or transposed conv) ``conv(x, w, b)`` read only by elementwise ops becomes
    ``conv(x, w) + b``, so the bias add joins their group (the conv's epilogue) instead of being a
    pass of its own over the output. Several readers are common: hardswish ``x * relu6(x + 3) / 6``
    reads the conv twice (PP-OCR cls: 0.45 ms of NumPy bias adds a run, ~15% of it)."""
    use_map = users(program)
    convs = (conv2d_op.name, conv2d_transpose_op.name)
    for conv in [op for op in program.walk() if op.name in convs and len(op.inputs) == 3]:
        bias, out = conv.inputs[2], conv.outputs[0]
        readers = use_map.get(id(out), [])
        array = None if bias is None else known_array(bias, program, ctx)
        if array is None or conv.attrs.get("data_format", "NCHW") != "NCHW" or len(out.shape) != 4:
            continue
        if not readers or not all(isinstance(r, Operation) and _elementwise(r) for r in readers):
            continue
        block = conv.parent
        index = block.ops.index(conv)
        channel = add_param(program, block, index, "conv_bias", np.asarray(array).reshape(-1, 1, 1))
        bare = program.new_value(out.shape, out.dtype)
        conv.inputs = [conv.inputs[0], conv.inputs[1], None]
        conv.outputs = [bare]
        bare.owner = conv
        add = Operation(ew.add.name, [bare, channel.outputs[0]], [out], loc=conv.loc)
        block.insert(block.ops.index(conv) + 1, add)


def fuse_elementwise(program: Program, ctx) -> int:
    report = CompileReport(cache_dir=str(cache_dir()))
    ctx.compile_report = report
    _bias_into_epilogues(program, ctx)
    for block in list(program.block.blocks()):
        taken: set = set()
        for root in reversed(list(block.ops)):
            if id(root) in taken or root.parent is not block:
                continue
            reduce_root = _trailing_reduce(root)
            if not (_elementwise(root) or reduce_root):
                continue
            use_map = users(program)
            ops = _grow(root, block, use_map, taken)
            if reduce_root and len(ops) == 1:
                continue
            taken.update(id(op) for op in ops)
            _rewrite(program, block, ops, use_map, report)
    return report.ops_fused
