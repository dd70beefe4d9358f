"""The tape: graph nodes recorded by dispatch, the Context each op call keeps for its vjp, and the
reverse walk that turns them into gradients."""

from __future__ import annotations

import functools
import weakref
from typing import TYPE_CHECKING, Any

import numpy as np

from ..errors import ShapeError
from .dtype import is_floating
from .selected_rows import accumulate, dense, is_sparse
from .state import STATE
from .tensor import Tensor, _apply_hooks

if TYPE_CHECKING:  # op.py imports this module (an OpDef's call is dispatched and recorded here)
    from .op import OpDef


class Context:
    """What ``forward`` leaves for ``vjp``; ``needs_input_grad`` lets both skip needless work."""

    __slots__ = ("needs_input_grad", "saved", "attrs", "outputs", "_arrays", "_node", "_results", "__dict__")

    def __init__(self, needs_input_grad: tuple[bool, ...], attrs: dict[str, Any]) -> None:
        self.needs_input_grad = needs_input_grad
        self.attrs = attrs
        self.saved = ()

    def save(self, *values) -> None:
        self.saved = values

    def link(self, node, arrays: tuple, outputs: tuple, results: tuple) -> None:
        """Dispatch records where the op sits in the graph, for ``input``/``output``."""
        self._node = weakref.ref(node)
        self._arrays = arrays
        self.outputs = outputs
        self._results = tuple(weakref.ref(r) for r in results)

    def input(self, i: int):
        """Input ``i`` as the op read it: graph-connected where it needs a gradient, else a constant."""
        array = self._arrays[i]
        if array is None:
            return None
        node = self._node()
        tensor = node.inputs[i]
        if tensor is None:
            return Tensor._wrap(array)
        source, index = node.edges[i]
        if source is None or (tensor._data is array and tensor._node is source and tensor._out_index == index):
            return tensor
        view = Tensor._wrap(array)  # rebound in place since: the value this op read, where it was
        view.stop_gradient = False
        view._node, view._out_index = source, index
        return view

    def output(self, i: int = 0):
        """Output ``i`` as a Tensor connected to this op, so a vjp built on it is differentiable."""
        node, array = self._node(), self.outputs[i]
        live = self._results[i]()  # the very Tensor the op returned, if still unchanged (a tracer knows it)
        if live is not None and live._data is array and live._node is node and live._out_index == i:
            return live
        view = Tensor._wrap(array)
        view.stop_gradient = False
        view._node, view._out_index = node, i
        return view


class Node:
    """One recorded op call: how to map output gradients back to the inputs that need them."""

    __slots__ = ("op", "ctx", "inputs", "edges", "n_outputs", "hooks", "released", "__weakref__")

    def __init__(self, op: OpDef, ctx: Context, inputs: tuple, n_outputs: int) -> None:
        self.op = op
        self.ctx = ctx
        self.inputs = inputs  # Tensor where a gradient is needed, else None
        # Where each input sat in the graph when recorded: an in-place write (``x[i] = v``) later
        # rebinds the tensor's node, and earlier consumers must still reach the value they read.
        self.edges = tuple(None if t is None else (t._node, t._out_index) for t in inputs)
        self.n_outputs = n_outputs
        self.hooks: dict[int, list] | None = None
        self.released = False

    def release(self) -> None:
        self.ctx = None
        self.inputs = None
        self.edges = None
        self.released = True


class no_grad:
    """Context manager and decorator that stops recording the tape (``paddle.no_grad``). One instance
    may be entered again while entered (a module-level guard): each exit restores its own entry's mode
    (Paddle's keeps one saved mode per instance and leaves recording off)."""

    _mode = False

    def __enter__(self):
        self.__dict__.setdefault("_saved", []).append(STATE.grad_enabled)
        STATE.grad_enabled = self._mode
        return self

    def __exit__(self, *exc) -> None:
        STATE.grad_enabled = self._saved.pop()

    def __call__(self, fn):
        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            with type(self)():
                return fn(*args, **kwargs)

        return wrapper


class enable_grad(no_grad):
    """Re-enable recording inside a no_grad region."""

    _mode = True


class set_grad_enabled:
    def __init__(self, mode: bool) -> None:
        self._previous = STATE.grad_enabled
        STATE.grad_enabled = bool(mode)

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        STATE.grad_enabled = self._previous


def is_grad_enabled() -> bool:
    return STATE.grad_enabled


def _collect(roots: list) -> dict[Node, int]:
    """Count, for every node reachable from the roots, how many gradient messages it will receive."""
    pending: dict[Node, int] = {}
    stack = [t._node for t in roots if t._node is not None]
    seen = set()
    while stack:
        node = stack.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        if node.released:
            raise RuntimeError(
                f"backward through the graph of '{node.op.name}' a second time: its saved values were freed; "
                "pass retain_graph=True to the first backward() if you need to run backward twice"
            )
        pending.setdefault(node, 0)
        for edge in node.edges:
            if edge is not None and edge[0] is not None:
                pending[edge[0]] = pending.get(edge[0], 0) + 1
                stack.append(edge[0])
    return pending


def run_backward(
    roots: list,
    root_grads: list,
    retain_graph: bool,
    capture: list | None = None,
    create_graph: bool = False,
    blocked: list | None = None,
) -> list | None:
    """Propagate ``root_grads`` (Tensors) from ``roots`` to the leaves.

    Without ``capture`` the leaves' ``.grad`` accumulate (``Tensor.backward``); with it, only the
    gradients of the tensors in ``capture`` are returned and no ``.grad`` changes (``paddle.grad``).
    With ``create_graph`` the vjps' own ops are recorded, so the gradients can be differentiated.
    No gradient reaches or passes through a tensor in ``blocked`` (``paddle.grad``'s ``no_grad_vars``).
    """
    previous = STATE.grad_enabled
    STATE.grad_enabled = create_graph
    try:
        return _propagate(roots, root_grads, retain_graph or create_graph, capture, blocked or ())
    finally:
        STATE.grad_enabled = previous


def _propagate(roots, root_grads, retain_graph, capture, blocked=()):
    pending = _collect(roots)
    cut = {(id(t._node), t._out_index) if t._node is not None else id(t) for t in blocked}
    buffers: dict[Node, list] = {}
    wanted_nonleaf = {}
    wanted_leaf = {}
    if capture is not None:
        for i, t in enumerate(capture):
            if t._node is not None:
                wanted_nonleaf[(id(t._node), t._out_index)] = i
            else:
                wanted_leaf[id(t)] = i
    results = [None] * len(capture) if capture is not None else None

    def send(tensor, grad, edge: tuple | None = None) -> None:
        node, i = edge if edge is not None else (tensor._node, tensor._out_index)
        if cut and ((id(node), i) if node is not None else id(tensor)) in cut:
            return
        if node is None:
            if tensor.stop_gradient:
                return
            if capture is None:
                accumulate(tensor, grad)
            elif id(tensor) in wanted_leaf:
                i, grad = wanted_leaf[id(tensor)], dense(grad)  # paddle.grad returns table-shaped gradients
                results[i] = grad if results[i] is None else results[i] + grad
            return
        buf = buffers.get(node)
        if buf is None:
            buf = buffers[node] = [None] * node.n_outputs
        buf[i] = grad if buf[i] is None else buf[i] + grad

    for tensor, grad in zip(roots, root_grads, strict=True):
        send(tensor, grad)
    ready = [n for n, count in pending.items() if count == 0]
    while ready:
        node = ready.pop()
        buf = buffers.pop(node, None) or [None] * node.n_outputs
        if node.hooks:
            for i, hooks in node.hooks.items():
                if buf[i] is not None:
                    buf[i] = _apply_hooks(hooks, buf[i])
        if capture is not None:
            for i in range(node.n_outputs):
                slot = wanted_nonleaf.get((id(node), i))
                if slot is not None and buf[i] is not None:
                    results[slot] = buf[i]
        grads = _vjp(node, buf)
        for inp, edge, grad in zip(node.inputs, node.edges, grads, strict=False):
            if inp is None:
                continue
            if grad is not None:
                send(inp, _fit(grad, inp, edge), edge)
            child = edge[0]
            if child is not None:
                pending[child] -= 1
                if pending[child] == 0:
                    ready.append(child)
        if not retain_graph:
            node.release()
    return results


def _vjp(node: Node, buf: list) -> tuple:
    op = node.op
    if op.vjp is None:
        raise RuntimeError(f"op '{op.name}' has no gradient; call .detach() on its inputs or outputs")
    if all(g is None for g in buf):
        return (None,) * len(node.inputs)
    if node.n_outputs > 1 and any(g is None for g in buf):
        # zeros for a float output nothing read; an integer one (a mask, indices) never has a gradient
        buf = [
            Tensor._wrap(np.zeros_like(o)) if g is None and (o.dtype.kind == "c" or is_floating(o.dtype)) else g
            for g, o in zip(buf, node.ctx.outputs, strict=True)
        ]
    grads = op.vjp(node.ctx, *buf)
    return grads if isinstance(grads, tuple) else (grads,)


def _fit(grad, tensor, edge: tuple):
    """Gradients arrive in the input's own shape and dtype, whatever a vjp computed in."""
    data = tensor._data
    if is_sparse(grad) or (grad._data.dtype == data.dtype and grad._data.shape == data.shape):
        return grad  # a row-sparse gradient carries the table's rows, not its shape
    if edge[0] is not tensor._node or edge[1] != tensor._out_index:
        return grad  # rebound in place since (``x.reshape_``): its value now is not the one this op read
    if grad._data.dtype != data.dtype:
        grad = grad.astype(data.dtype)
    if grad._data.shape != data.shape:
        grad = grad.expand(list(data.shape))
    return grad


def _backward(self, grad_tensor=None, retain_graph: bool = False) -> None:
    """Accumulate d(self)/d(leaf) into every leaf's ``.grad`` (Paddle: ``Tensor.backward``)."""
    if self.stop_gradient:
        raise RuntimeError(
            "backward() on a tensor with stop_gradient=True: nothing it depends on requires a gradient; "
            "set stop_gradient=False on the inputs (parameters have it already)"
        )
    if grad_tensor is None:
        grad = np.ones_like(self._data)
    else:
        grad = np.asarray(grad_tensor._data if isinstance(grad_tensor, Tensor) else grad_tensor, dtype=self.dtype)
        if grad.shape != self._data.shape:
            raise ShapeError(f"backward: grad_tensor has shape {list(grad.shape)}, expected {self.shape}")
    run_backward([self], [Tensor._wrap(grad)], retain_graph)


Tensor.backward = _backward


def grad(
    outputs,
    inputs,
    grad_outputs=None,
    retain_graph=None,
    create_graph=False,
    only_inputs=True,
    allow_unused=False,
    no_grad_vars=None,
):
    """Gradients of ``outputs`` with respect to ``inputs``, without touching any ``.grad`` (``paddle.grad``);
    no gradient flows through the tensors in ``no_grad_vars``."""
    single = isinstance(outputs, Tensor)
    outputs = [outputs] if single else list(outputs)
    single_in = isinstance(inputs, Tensor)
    inputs = [inputs] if single_in else list(inputs)
    if grad_outputs is None or isinstance(grad_outputs, Tensor):
        grad_outputs = [grad_outputs] * len(outputs) if grad_outputs is None else [grad_outputs]
    roots, root_grads = [], []
    for out, g in zip(outputs, grad_outputs, strict=True):
        if out.stop_gradient:
            continue
        roots.append(out)
        root_grads.append(Tensor._wrap(np.ones_like(out._data)) if g is None else g.astype(out.dtype))
    for t in inputs:
        if t.stop_gradient:
            raise RuntimeError(f"paddle.grad: input {t.name} has stop_gradient=True, so it has no gradient")
    retain = create_graph if retain_graph is None else bool(retain_graph)
    blocked = [no_grad_vars] if isinstance(no_grad_vars, Tensor) else list(no_grad_vars or ())
    results = run_backward(roots, root_grads, retain, capture=inputs, create_graph=bool(create_graph), blocked=blocked)
    out = []
    for i, (t, r) in enumerate(zip(inputs, results, strict=True)):
        if r is None and not allow_unused:
            raise RuntimeError(
                f"paddle.grad: input {i} ({t.name or 'unnamed'}, shape {t.shape}) is not used to compute the "
                "outputs, or only through a constant derivative; pass allow_unused=True to get None for it"
            )
        if r is not None and r.dtype != t.dtype:
            r = r.astype(t.dtype)
        out.append(r if r is None or create_graph else Tensor._wrap(r._data))
    return out
