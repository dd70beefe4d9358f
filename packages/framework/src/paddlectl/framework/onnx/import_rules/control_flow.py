"""If, Scan and Loop, inlined: a paddlectl program has no control flow ops, but these unroll.

``If`` with a known condition is its chosen branch; with a data-dependent one both branches run and
``where`` picks, which is exact because ONNX branches have no side effects (their outputs must then
have equal shapes). ``Scan`` (opset 9 on) runs its body once per step of a fixed-length scan axis,
states threaded through, scan outputs stacked. ``Loop`` runs its body once per iteration, up to the
trip count ``M`` and while its condition holds; both must be known at import (a graph input that
sets them is bound per call by the backend), except that a condition the body computes from data
is followed at run time when the loop has a trip count and no scan outputs: every iteration runs
and ``where`` keeps the loop-carried values from the first one whose condition was false (exact, as
the body has no side effects). Scan outputs need a known iteration count: their length is a shape.
Body nodes convert through the same rules as the graph's; an op type without one is refused by name."""

from __future__ import annotations

import numpy as np

from ...errors import ConversionError
from ..dependency import onnx
from ..validate import tensor_array
from .base import Rule, arg, attrs_of, item

_ALL = ["slice", None, None, None]


def run_body(b, graph, bindings: dict, opset: int, table: dict) -> list:
    """The outputs of subgraph ``graph`` with its inputs bound to ``bindings`` (name -> Value or
    array), its nodes converted by ``table`` (every import rule); outer names stay visible, as
    ONNX's scoping says."""
    for name, value in bindings.items():
        b.set(name, value)
    for init in graph.initializer:
        b.set(init.name, tensor_array(init, f"subgraph initializer {init.name!r}"))
    outer = b.node
    try:
        for node in graph.node:
            if node.op_type not in table:
                b.node = outer  # named by the node that holds the subgraph
                raise ConversionError(f"{b.where()}: its subgraph holds {node.op_type}, which has no import rule")
            b.node = node
            outs = table[node.op_type].convert(b, node, attrs_of(node), opset)
            for name, value in zip(node.output, outs, strict=False):
                if name:
                    b.set(name, value)
    finally:
        b.node = outer
    return [b.get(o.name) for o in graph.output]


def _if(b, node, a, opset, table):
    cond = b.known(node.input[0])
    if cond is not None:
        return run_body(b, a["then_branch"] if bool(cond.reshape(-1)[0]) else a["else_branch"], {}, opset, table)
    then, other = (run_body(b, a[branch], {}, opset, table) for branch in ("then_branch", "else_branch"))
    (flag,) = b.op("reshape", [node.input[0]], shape=())
    out = []
    for t, e in zip(then, other, strict=True):
        if tuple(item(b, t).shape) != tuple(item(b, e).shape):
            raise ConversionError(
                f"{b.where()}: with a data-dependent condition both branches must give equal shapes, got "
                f"{list(item(b, t).shape)} and {list(item(b, e).shape)}"
            )
        out.append(b.op("where", [flag, t, e])[0])
    return out


def _stack(b, parts: list, axis: int):
    lifted = [b.op("getitem", [p], spec=[_ALL] * axis + [["none"]])[0] for p in parts]
    return b.op("concat", lifted, axis=axis)[0]


def _scan(b, node, a, opset, table):
    body, m = a["body"], int(a["num_scan_inputs"])
    n_state = len(node.input) - m
    scans = list(node.input[n_state:])
    k = len(body.output) - n_state
    in_axes, in_dirs = a.get("scan_input_axes", [0] * m), a.get("scan_input_directions", [0] * m)
    out_axes, out_dirs = a.get("scan_output_axes", [0] * k), a.get("scan_output_directions", [0] * k)
    ranks = [len(item(b, s).shape) for s in scans]
    in_axes = [ax + r if ax < 0 else ax for ax, r in zip(in_axes, ranks, strict=True)]
    lengths = {item(b, s).shape[ax] for s, ax in zip(scans, in_axes, strict=True)}
    if len(lengths) != 1 or not isinstance(next(iter(lengths)), int):
        raise ConversionError(f"{b.where()}: the scan inputs need one fixed length, got {sorted(map(str, lengths))}")
    steps = lengths.pop()
    state = [b.get(s) for s in node.input[:n_state]]
    collected: list[list] = [[] for _ in range(k)]
    for t in range(steps):
        bind = {body.input[j].name: state[j] for j in range(n_state)}
        for j, (s, axis) in enumerate(zip(scans, in_axes, strict=True)):
            index = steps - 1 - t if in_dirs[j] else t
            bind[body.input[n_state + j].name] = b.op("getitem", [s], spec=[_ALL] * axis + [["int", index]])[0]
        outs = run_body(b, body, bind, opset, table)
        state = outs[:n_state]
        for j in range(k):
            collected[j].append(outs[n_state + j])
    stacked = []
    for j, parts in enumerate(collected):
        r = len(item(b, parts[0]).shape) + 1
        axis = out_axes[j] + r if out_axes[j] < 0 else out_axes[j]
        stacked.append(_stack(b, parts[::-1] if out_dirs[j] else parts, axis))
    return state + stacked


MAX_LOOP_STEPS = 1024
"""Loop iterations unrolled at most: each one is a copy of the body in the program."""


def _scalar_flag(b, value):
    """A Loop condition (a bool tensor of one element) as a 0-d Value or a Python bool where known."""
    if isinstance(value, np.ndarray):
        return bool(value.reshape(-1)[0])
    return value if tuple(value.shape) == () else b.op("reshape", [value], shape=())[0]


def _loop(b, node, a, opset, table):
    body = a["body"]
    n_state = len(node.input) - 2
    k = len(body.output) - 1 - n_state
    steps = int(b.require_known(node.input[0], "the Loop trip count M").reshape(-1)[0]) if arg(node, 0) else None
    active = True  # a Python bool while the condition is known, else a 0-d bool Value
    if arg(node, 1):
        if k:  # the number of iterations sizes the scan outputs: the condition must be known
            b.require_known(node.input[1], "the condition of a Loop with scan outputs")
        active = _scalar_flag(b, b.get(node.input[1]))
    state = [b.get(n) for n in node.input[2:]]
    collected: list[list] = [[] for _ in range(k)]
    step = 0
    while active is not False and (steps is None or step < steps):
        if step == MAX_LOOP_STEPS or (steps is None and active is not True):
            raise ConversionError(
                f"{b.where()}: no known trip count ends this loop within {MAX_LOOP_STEPS} iterations (its condition "
                f"{'depends on the input data' if active is not True else 'still holds'}); paddlectl unrolls loops: "
                f"give it a trip count M of at most {MAX_LOOP_STEPS}"
            )
        bind = {body.input[0].name: np.asarray(step, np.int64), body.input[1].name: np.asarray(active)
                if isinstance(active, bool) else active}  # fmt: skip
        bind.update({body.input[2 + j].name: s for j, s in enumerate(state)})
        outs = run_body(b, body, bind, opset, table)
        new_state, cond = outs[1 : 1 + n_state], _scalar_flag(b, outs[0])
        if active is True:
            state, active = new_state, cond
        else:
            state = [_keep_while(b, active, new, old) for new, old in zip(new_state, state, strict=True)]
            if cond is False:
                active = False
            elif cond is not True:
                (active,) = b.op("logical_and", [active, cond])
        if k and not isinstance(active, bool):
            raise ConversionError(
                f"{b.where()}: the loop condition depends on the input data and the loop has scan outputs, whose "
                "length would then be data-dependent; paddlectl programs have static shapes"
            )
        for j in range(k):
            collected[j].append(outs[1 + n_state + j])
        step += 1
    return state + [_stack(b, parts, 0) if parts else _empty_scan(b, body.output[1 + n_state + j])
                    for j, parts in enumerate(collected)]  # fmt: skip


def _keep_while(b, active, new, old):
    """``new`` where the iteration ran (``active``), else the value from before it."""
    if tuple(item(b, new).shape) != tuple(item(b, old).shape):
        raise ConversionError(
            f"{b.where()}: with a data-dependent condition a loop-carried value must keep its shape, got "
            f"{list(item(b, old).shape)} -> {list(item(b, new).shape)}"
        )
    return b.op("where", [active, new, old])[0]


def _empty_scan(b, declared):
    """The scan output of a loop that ran no iteration: [0, *the body output's declared shape]."""
    t = declared.type.tensor_type
    dims = [d.dim_value if d.HasField("dim_value") else None for d in t.shape.dim]
    if not t.HasField("shape") or None in dims:
        raise ConversionError(f"{b.where()}: the loop runs no iteration and the body does not declare the full "
                              f"shape of scan output {declared.name!r}")  # fmt: skip
    return np.zeros([0, *dims], onnx.helper.tensor_dtype_to_np_dtype(t.elem_type))


_SCAN_ATTRS = {"body", "num_scan_inputs", "scan_input_axes", "scan_input_directions", "scan_output_axes",
               "scan_output_directions"}  # fmt: skip


def rules(table: dict) -> dict:
    """If, Scan and Loop, converting their subgraphs by ``table`` (the converters' whole RULES, which
    these join: passed in, so this module does not import the table it belongs to)."""
    return {
        "Loop": Rule(lambda b, node, a, opset: _loop(b, node, a, opset, table), frozenset({"body"})),
        "If": Rule(lambda b, node, a, opset: _if(b, node, a, opset, table), frozenset({"then_branch", "else_branch"})),
        "Scan": Rule(lambda b, node, a, opset: _scan(b, node, a, opset, table), frozenset(_SCAN_ATTRS), since=9),
    }
