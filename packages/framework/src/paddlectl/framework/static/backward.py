"""``paddle.static.append_backward`` and ``gradients``: record the backward of a static program
(as often as asked: the graph is kept).

The program records with the tape kept (``static_mode``), so a gradient is ``paddle.grad`` of the
recorded loss, recorded in turn: the returned gradient tensors are values of the program that
``Executor.run`` fetches. ``no_grad_set`` names parameters to leave out or tensors the gradient
must not flow through (Paddle's meaning of both).
"""

from __future__ import annotations

from .. import modes
from ..core.autograd import grad as autograd_grad
from ..core.tensor import Tensor
from ..errors import ConfigError
from ..ops.creation import ones_like


def _recording(what: str):
    program = modes.recording()
    if program is None:
        raise ConfigError(f"{what} records into a static program; call paddle.enable_static() first")
    return program


def _split(no_grad_set) -> tuple[set[str], list[Tensor]]:
    """Names to leave out, and tensors to block the gradient at."""
    names, tensors = set(), []
    for item in no_grad_set or ():
        if isinstance(item, str):
            names.add(item)
        elif isinstance(item, Tensor):
            tensors.append(item)
        else:
            raise ConfigError(f"no_grad_set holds variable names or Tensors, got {type(item).__name__}")
    return names, tensors


def _named(grads: list, params: list) -> list:
    for p, g in zip(params, grads, strict=True):
        if g is not None and p.name:
            g.name = f"{p.name}@GRAD"  # Paddle's name for a gradient variable
    return grads


def append_backward(loss, parameter_list=None, no_grad_set=None, callbacks=None, checkpoints=None) -> list:
    """``[(parameter, gradient)]`` of ``loss`` for ``parameter_list`` (Tensors or names; default:
    every trainable parameter of the program), recorded into the program."""
    program = _recording("append_backward")
    if callbacks is not None or checkpoints is not None:
        raise ConfigError("append_backward: callbacks and checkpoints (recompute) are not supported; leave them None")
    names, blocked = _split(no_grad_set)
    known = {p.name: p for p in program.all_parameters()}
    if parameter_list is None:
        params = [p for p in known.values() if not p.stop_gradient]
    else:
        params = []
        for item in parameter_list:
            if isinstance(item, str) and item not in known:
                raise ConfigError(f"append_backward: {item!r} is not a parameter of the program")
            params.append(known[item] if isinstance(item, str) else item)
    blocked_ids = {id(t) for t in blocked}
    params = [p for p in params if p.name not in names and id(p) not in blocked_ids]
    if not params:
        return []
    grads = autograd_grad(
        [loss], params, [ones_like(loss)], retain_graph=True, allow_unused=True, no_grad_vars=blocked or None
    )
    return [(p, g) for p, g in zip(params, _named(grads, params), strict=True) if g is not None]


def gradients(targets, inputs, target_gradients=None, no_grad_set=None) -> list:
    """The gradients of ``targets`` with respect to ``inputs`` (None where one does not depend on
    it), recorded into the program."""
    _recording("gradients")
    targets = [targets] if isinstance(targets, Tensor) else list(targets)
    inputs = [inputs] if isinstance(inputs, Tensor) else list(inputs)
    _, blocked = _split(no_grad_set)
    if target_gradients is None:  # ones as an op of each target's shape, not a constant of the example size
        target_gradients = [ones_like(t) for t in targets]
    grads = autograd_grad(
        targets, inputs, target_gradients, retain_graph=True, allow_unused=True, no_grad_vars=blocked or None
    )
    return _named(list(grads), inputs)
