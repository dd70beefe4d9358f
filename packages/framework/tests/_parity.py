"""Run the same computation on paddlectl and on real PaddlePaddle; compare outputs and gradients."""

from __future__ import annotations

import numpy as np

import paddlectl.framework as ours


def _inputs(mod, arrays):
    return [mod.to_tensor(a, stop_gradient=a.dtype.kind != "f") for a in arrays]


def compare(real_paddle, build, *arrays, rtol=1e-5, atol=1e-6, grad_rtol=None, grad_atol=None, layers=None, grads=True):
    """``build(mod)`` returns a function of tensors for framework ``mod``. Outputs must agree, then the
    gradients of ``sum(out * c)`` for a random ``c`` with respect to every float input, and to every
    parameter of ``layers`` (ours, theirs) when given (``grads=False``: outputs only). Returns both
    outputs as arrays."""
    grad_rtol = rtol if grad_rtol is None else grad_rtol
    grad_atol = atol if grad_atol is None else grad_atol
    ours_in, theirs_in = _inputs(ours, arrays), _inputs(real_paddle, arrays)
    got = build(ours)(*ours_in)
    expected = build(real_paddle)(*theirs_in)
    assert got.shape == list(expected.shape)
    assert got.dtype == np.dtype(str(expected.numpy().dtype))
    np.testing.assert_allclose(got.numpy(), expected.numpy(), rtol=rtol, atol=atol, err_msg="forward")
    if not grads or got.dtype.kind != "f" or (got.stop_gradient and expected.stop_gradient):
        return got.numpy(), expected.numpy()
    # a cotangent of its own per comparison: the same whatever tests ran before (a shared generator
    # made each test's draw depend on the selection and order of the tests before it)
    cot = np.random.default_rng(1234).standard_normal(got.shape).astype(got.dtype)
    (got * ours.to_tensor(cot)).sum().backward()
    (expected * real_paddle.to_tensor(cot)).sum().backward()
    for i, (o, t) in enumerate(zip(ours_in, theirs_in, strict=True)):
        if not o.stop_gradient:
            assert (o.grad is None) == (t.grad is None), f"grad {i} presence"
            if o.grad is not None:
                np.testing.assert_allclose(
                    o.grad.numpy(), t.grad.numpy(), rtol=grad_rtol, atol=grad_atol, err_msg=f"grad of input {i}"
                )
    if layers is not None:
        mine, theirs = layers
        their_params = dict(theirs.named_parameters())
        for name, p in mine.named_parameters():
            q = their_params[name]
            if p.stop_gradient:
                continue
            np.testing.assert_allclose(
                p.grad.numpy(), q.grad.numpy(), rtol=grad_rtol, atol=grad_atol, err_msg=f"grad of {name}"
            )
    return got.numpy(), expected.numpy()


def functional(real_paddle, name, *arrays, rtol=1e-5, atol=1e-6, **kwargs):
    """Compare ``nn.functional.<name>(*arrays, **kwargs)``; kwargs that are arrays become tensors."""

    def build(mod):
        kw = {k: mod.to_tensor(v) if isinstance(v, np.ndarray) else v for k, v in kwargs.items()}
        return lambda *ts: getattr(mod.nn.functional, name)(*ts, **kw)

    return compare(real_paddle, build, *arrays, rtol=rtol, atol=atol)


def layer_pair(real_paddle, cls: str, *args, **kwargs):
    """The same layer in both frameworks, ours loaded from Paddle's state dict (so the weights agree)."""
    theirs = getattr(real_paddle.nn, cls)(*args, **kwargs)
    mine = getattr(ours.nn, cls)(*args, **kwargs)
    state = {k: v.numpy() for k, v in theirs.state_dict().items()}
    assert list(mine.state_dict()) == list(state), "state_dict keys differ from Paddle's"
    missing, unexpected = mine.set_state_dict(state)
    assert not missing and not unexpected
    return mine, theirs


def layer(
    real_paddle, cls: str, args=(), kwargs=None, *arrays, train=True, rtol=1e-5, atol=1e-6, prep=None, grads=True
):
    """Compare a layer's output and input/parameter gradients given the same weights."""
    mine, theirs = layer_pair(real_paddle, cls, *args, **(kwargs or {}))
    for model in (mine, theirs):
        model.train() if train else model.eval()
    prep = prep or (lambda t: t)

    def build(mod):
        model = mine if mod is ours else theirs
        return lambda *ts: model(*[prep(t) for t in ts])

    compare(real_paddle, build, *arrays, rtol=rtol, atol=atol, layers=(mine, theirs), grads=grads)
    return mine, theirs
