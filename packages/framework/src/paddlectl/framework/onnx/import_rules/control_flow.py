"""If and Scan, inlined: a paddlectl program has no control flow ops, but these two unroll.

``If`` with a known condition is its chosen branch; with a data-dependent one both branches run and
``where`` picks, which is exact because ONNX branches have no side effects (their outputs must then
have equal shapes). ``Scan`` (opset 9 on) runs its body once per step of a fixed-length scan axis,
states threaded through, scan outputs stacked. Body nodes convert through the same rules as the
graph's; an op type without one is refused by name. Loop (a data-dependent trip count) is not."""

from __future__ import annotations

from ...errors import ConversionError
from ..validate import tensor_array
from .base import Rule, attrs_of, item

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


_SCAN_ATTRS = {"body", "num_scan_inputs", "scan_input_axes", "scan_input_directions", "scan_output_axes",
               "scan_output_directions"}  # fmt: skip


def rules(table: dict) -> dict:
    """If and Scan, converting their subgraphs by ``table`` (the converters' whole RULES, which
    these join: passed in, so this module does not import the table it belongs to)."""
    return {
        "If": Rule(lambda b, node, a, opset: _if(b, node, a, opset, table), frozenset({"then_branch", "else_branch"})),
        "Scan": Rule(lambda b, node, a, opset: _scan(b, node, a, opset, table), frozenset(_SCAN_ATTRS), since=9),
    }
