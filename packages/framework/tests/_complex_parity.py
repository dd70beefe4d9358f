"""Comparing a computation on complex (or real) tensors with real Paddle: the values, the dtype and
the gradient of a real loss with respect to every input (Paddle's convention for a complex input:
``dL/dRe + i dL/dIm``). The loss weights the outputs by a fixed random cotangent, complex for a
complex output (``Re(sum(y * w))``), so every output entry and both of its parts reach the inputs."""

from __future__ import annotations

import numpy as np

import paddlectl.framework as ours


def cotangent(shape, dtype) -> np.ndarray:
    rng = np.random.default_rng(7)
    w = rng.uniform(-1, 1, shape)
    if np.dtype(dtype).kind == "c":
        w = w + 1j * rng.uniform(-1, 1, shape)
    return w.astype(dtype)


def run(lib, fn, arrays, grads=True):
    inputs = [lib.to_tensor(a, stop_gradient=not grads) for a in arrays]
    out = fn(lib, *inputs)
    y = out.numpy()
    if not grads:
        return y, []
    w = lib.to_tensor(cotangent(y.shape, y.dtype))
    loss = lib.real(out * w).sum() if y.dtype.kind == "c" else (out * w).sum()
    loss.backward()
    return y, [t.grad.numpy() for t in inputs]


def compare(real_paddle, fn, *arrays, atol=1e-6, grads=True):
    """``fn(paddle_module, *tensors)`` under both; values, dtypes and gradients must agree."""
    theirs, their_grads = run(real_paddle, fn, arrays, grads)
    mine, my_grads = run(ours, fn, arrays, grads)
    assert mine.dtype == theirs.dtype, (mine.dtype, theirs.dtype)
    assert mine.shape == theirs.shape
    np.testing.assert_allclose(mine, theirs, rtol=1e-5, atol=atol)
    for g, h in zip(my_grads, their_grads, strict=True):
        assert g.dtype == h.dtype, (g.dtype, h.dtype)
        np.testing.assert_allclose(g, h, rtol=1e-5, atol=atol)


def complex_array(rng, shape, dtype="complex128") -> np.ndarray:
    return (rng.uniform(-1, 1, shape) + 1j * rng.uniform(-1, 1, shape)).astype(dtype)
