"""Higher-order gradients through shape and indexing ops (issue 21).

Each case is ``y = op(x)``, cubed elementwise so the second and third derivatives are not zero.
``paddle.grad(..., create_graph=True)`` is taken three times (gradient, Hessian-vector product,
third-derivative contraction) and each is checked in float64 against central differences of the
order below it. Before the vjps ran through ops, create_graph refused every one of these.
"""

from __future__ import annotations

import numpy as np
import pytest

import paddlectl.framework as paddle

EPS = 1e-5

CASES = {
    "reshape": ((2, 6), lambda x: paddle.reshape(x, [3, 4])),
    "flatten": ((2, 3, 2), lambda x: paddle.flatten(x, 1)),
    "transpose": ((2, 3, 4), lambda x: paddle.transpose(x, [2, 0, 1])),
    "squeeze_unsqueeze": ((3, 1, 2), lambda x: paddle.unsqueeze(paddle.squeeze(x, 1), 0)),
    "concat": ((3, 2), lambda x: paddle.concat([x, x[1:] * 2.0], axis=0)),
    "split": ((4, 3), lambda x: paddle.split(x, [1, 3], axis=0)[1]),
    "stack": ((2, 3), lambda x: paddle.stack([x, x * x], axis=1)),
    "expand": ((3, 1), lambda x: paddle.expand(x, [2, 3, 4])),
    "tile": ((2, 3), lambda x: paddle.tile(x, [2, 2])),
    "flip_roll": ((3, 4), lambda x: paddle.roll(paddle.flip(x, [1]), 1, 0)),
    "tril": ((3, 3), lambda x: paddle.tril(x)),
    "slice": ((5, 4), lambda x: paddle.strided_slice(x, [0, 1], [1, 3], [5, 0], [2, -1])),
    "pad_reflect": ((1, 1, 3, 4), lambda x: paddle.nn.functional.pad(x, [1, 2, 1, 0], mode="reflect")),
    "getitem_basic": ((4, 3), lambda x: x[1:, ::-2]),
    "getitem_index": ((3, 4), lambda x: x[:, paddle.to_tensor([3, 0, 3])]),
    "getitem_mask": ((2, 3), lambda x: x[paddle.to_tensor([[True, False, True], [False, True, True]])]),
    "getitem_mixed": ((3, 2), lambda x: x[paddle.to_tensor([0, 2, 0]), None, 1]),
    "gather": ((4, 3), lambda x: paddle.gather(x, paddle.to_tensor([2, 0, 2]), axis=0)),
    "gather_nd": ((3, 2, 2), lambda x: paddle.gather_nd(x, paddle.to_tensor([[0, 1], [2, 0], [0, 1]]))),
    "take_along_axis": ((3, 4), lambda x: paddle.take_along_axis(x, paddle.to_tensor([[0, 2], [1, 1], [3, 0]]), 1)),
    "masked_select": ((3, 2), lambda x: paddle.masked_select(x, x > 0.0)),
    "sort": ((3, 4), lambda x: paddle.sort(x, axis=1)),
    "topk": ((2, 5), lambda x: paddle.topk(x, 2)[0]),
    "scatter": ((4, 2), lambda x: paddle.scatter(x, paddle.to_tensor([1, 3]), x[:2] * x[:2])),
    "unfold": ((1, 2, 4, 4), lambda x: paddle.nn.functional.unfold(x, [2, 2], strides=2)),
}


def _setitem(x):
    y = x * 1.0
    y[1:, 0] = x[0, 1:] * x[0, 1:]
    return y


CASES["setitem"] = ((3, 3), _setitem)


def _grad(fn, x_value: np.ndarray, directions: list[np.ndarray], w: np.ndarray, create_graph: bool):
    """The gradient of <w, fn(x)^3>, then each further order contracted with the next direction."""
    x = paddle.to_tensor(x_value, stop_gradient=False)
    y = fn(x)
    (g,) = paddle.grad(y * y * y, x, grad_outputs=paddle.to_tensor(w), create_graph=True)
    for i, d in enumerate(directions):
        last = i == len(directions) - 1
        (g,) = paddle.grad(g, x, grad_outputs=paddle.to_tensor(d), create_graph=create_graph or not last)
    return g.numpy()


def _central(fn, x_value, directions, w, along):
    """Central difference of one derivative order along ``along``."""
    plus = _grad(fn, x_value + EPS * along, directions, w, False)
    minus = _grad(fn, x_value - EPS * along, directions, w, False)
    return (plus - minus) / (2 * EPS)


@pytest.mark.parametrize("case", sorted(CASES))
def test_second_and_third_derivatives_match_finite_differences(case):
    shape, fn = CASES[case]
    rng = np.random.default_rng(21)
    x = rng.uniform(0.5, 1.5, shape) * rng.choice([-1.0, 1.0], shape)  # away from 0: masked_select keeps its mask
    w = rng.standard_normal(fn(paddle.to_tensor(x)).shape)
    v, u = rng.standard_normal(shape), rng.standard_normal(shape)
    hvp = _grad(fn, x, [v], w, True)
    np.testing.assert_allclose(hvp, _central(fn, x, [], w, v), rtol=1e-6, atol=1e-6)
    third = _grad(fn, x, [v, u], w, True)
    np.testing.assert_allclose(third, _central(fn, x, [v], w, u), rtol=1e-6, atol=1e-6)


def test_gather_hessian_is_analytic():
    """<w, gather(x)^3> with a repeated index: the Hessian is diagonal, 6 * x_i * (sum of w over i's copies)."""
    x_value = np.array([[0.5, -1.0], [2.0, 1.5], [-0.5, 0.25]])
    index = [2, 0, 2]
    w = np.array([[1.0, -2.0], [0.5, 3.0], [2.0, 1.0]])
    x = paddle.to_tensor(x_value, stop_gradient=False)
    y = paddle.gather(x, paddle.to_tensor(index))
    (g,) = paddle.grad(y * y * y, x, grad_outputs=paddle.to_tensor(w), create_graph=True)
    (h,) = paddle.grad(g, x, grad_outputs=paddle.ones_like(x))
    summed = np.zeros_like(x_value)
    np.add.at(summed, index, w)
    np.testing.assert_allclose(h.numpy(), 6 * x_value * summed)


def test_a_traced_backward_through_shape_and_index_ops_keeps_the_batch_symbolic():
    """The backward ops take the forward input's shape from that input, not from an attr frozen at
    the tracing example's size, so one program serves every batch size."""
    w = paddle.create_parameter([6, 2], "float64")

    def step(x):
        h = paddle.flatten(paddle.transpose(paddle.reshape(x, [x.shape[0], 2, 3]), [0, 2, 1]), 1)
        h = paddle.concat([h[:, :3], h[:, 3:]], axis=1)
        h = paddle.nn.functional.pad(h, [1, 1], mode="reflect", data_format="NCL")[:, 1:-1]
        y = paddle.gather(paddle.tanh(paddle.matmul(h, w)), paddle.to_tensor([1, 0, 1]), axis=1)
        z = paddle.sort(y, axis=1)[:, :2] * paddle.topk(y, 2)[0]
        return paddle.grad(z * z, [w], grad_outputs=paddle.ones_like(z))

    static = paddle.jit.to_static(step, input_spec=[paddle.jit.InputSpec([None, 6], "float64")])
    for batch in (4, 7):
        x = np.random.default_rng(batch).standard_normal((batch, 6))
        (got,), (want,) = static(paddle.to_tensor(x)), step(paddle.to_tensor(x))
        np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-12, atol=1e-14)
