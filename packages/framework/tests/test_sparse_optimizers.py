"""Optimizers on a sparse Embedding's SelectedRows gradient: SGD and Adagrad move only the touched
rows (the same as their dense update), lazy Adam changes only the touched rows' moments and values;
checked by hand and against PaddlePaddle 3.3.1, whose sparse Adam corrects step t's bias with
``beta^(t+1)``."""

from __future__ import annotations

import numpy as np
import pytest

import paddlectl.framework as paddle
from paddlectl.framework.errors import ConfigError
from paddlectl.framework.optimizer.gradient_merge import GradientMergeOptimizer

STEPS = [[[1, 2], [2, 5]], [[5, 7], [0, 7]], [[2, 2], [9, 1]]]
HEADS = np.random.default_rng(1).standard_normal((len(STEPS), 2, 2, 3)).astype("float32")
WEIGHT = np.random.default_rng(2).standard_normal((10, 3)).astype("float32")


def _train(api, sparse, make_opt, steps=STEPS):
    """Weights after one optimizer step per batch of ids, in ``api`` (ours or real Paddle)."""
    layer = api.nn.Embedding(10, 3, sparse=sparse)
    layer.weight.set_value(WEIGHT)
    opt = make_opt(api, layer.parameters())
    for ids, head in zip(steps, HEADS, strict=False):
        (layer(api.to_tensor(ids)) * api.to_tensor(head)).sum().backward()
        opt.step()
        opt.clear_grad()
    return layer.weight.numpy(), opt


OPTIMIZERS = {
    "sgd": lambda api, p: api.optimizer.SGD(0.1, parameters=p),
    "sgd_l2": lambda api, p: api.optimizer.SGD(0.1, parameters=p, weight_decay=0.01),
    "adagrad": lambda api, p: api.optimizer.Adagrad(0.1, parameters=p),
    "momentum": lambda api, p: api.optimizer.Momentum(0.1, parameters=p),
}


@pytest.mark.parametrize("name", sorted(OPTIMIZERS))
def test_sparse_update_equals_dense_where_paddle_says_so(name):
    """SGD/Adagrad touch only gradient rows either way; weight decay and optimizers without a
    row-wise rule apply the dense update."""
    sparse, _ = _train(paddle, True, OPTIMIZERS[name])
    dense, _ = _train(paddle, False, OPTIMIZERS[name])
    np.testing.assert_allclose(sparse, dense, rtol=1e-6, atol=1e-7)


def _lazy_adam(api, params, **kwargs):
    return api.optimizer.Adam(0.1, parameters=params, lazy_mode=True, **kwargs)


def test_lazy_adam_matches_a_hand_computed_update():
    """Adam on the merged rows only, bias-corrected with beta^(t+1) at step t (Paddle 3.3.1's
    SelectedRows kernel advances the powers before reading them; its dense kernel uses beta^t)."""
    weight, opt = _train(paddle, True, _lazy_adam, steps=STEPS[:2])
    b1, b2, lr, eps = 0.9, 0.999, 0.1, 1e-8
    p, m, v = WEIGHT.astype(np.float64), np.zeros((10, 3)), np.zeros((10, 3))
    for t, (ids, head) in enumerate(zip(STEPS[:2], HEADS, strict=False), start=1):
        g = np.zeros((10, 3))
        np.add.at(g, np.ravel(ids), head.reshape(-1, 3))
        rows = np.unique(ids)
        m[rows] = b1 * m[rows] + (1 - b1) * g[rows]
        v[rows] = b2 * v[rows] + (1 - b2) * g[rows] ** 2
        m_hat, v_hat = m[rows] / (1 - b1 ** (t + 1)), v[rows] / (1 - b2 ** (t + 1))
        p[rows] -= lr * m_hat / (np.sqrt(v_hat) + eps)
    np.testing.assert_allclose(weight, p, rtol=1e-5, atol=1e-6)
    untouched = [3, 4, 6, 8, 9]
    np.testing.assert_array_equal(weight[untouched], WEIGHT[untouched])
    state = opt.state_dict()
    moment1 = next(v for k, v in state.items() if k.endswith("_moment1_0")).numpy()
    np.testing.assert_array_equal(moment1[untouched], 0)  # never-touched rows' moments never moved
    np.testing.assert_allclose(moment1, m, rtol=1e-5, atol=1e-7)


def test_lazy_adam_leaves_stale_rows_moments_alone():
    """Row 1 is touched at step 1 only: dense Adam keeps moving it on momentum, lazy Adam does not."""
    steps = [[[1]], [[3]]]
    lazy, _ = _train(paddle, True, _lazy_adam, steps=steps)
    eager, _ = _train(paddle, True, lambda api, p: api.optimizer.Adam(0.1, parameters=p), steps=steps)
    one_step, _ = _train(paddle, True, _lazy_adam, steps=steps[:1])
    np.testing.assert_array_equal(lazy[1], one_step[1])
    assert not np.allclose(eager[1], one_step[1])


def test_lazy_adam_amsgrad_runs_on_rows():
    weight, _ = _train(paddle, True, lambda api, p: _lazy_adam(api, p, amsgrad=True))
    assert np.isfinite(weight).all() and np.array_equal(weight[3], WEIGHT[3])


def test_adam_refuses_weight_decay_on_sparse_gradients_as_paddle():
    layer = paddle.nn.Embedding(10, 3, sparse=True)
    opt = paddle.optimizer.Adam(0.1, parameters=layer.parameters(), weight_decay=0.01, lazy_mode=True)
    layer(paddle.to_tensor([1, 2])).sum().backward()
    with pytest.raises(ConfigError, match="weight_decay=None"):
        opt.step()


def test_lazy_adamw_decays_only_touched_rows():
    """Paddle 3.3.1's AdamW fails on a SelectedRows gradient (it reads a garbage dimension), so there
    is no oracle: lazy AdamW is lazy Adam plus the decoupled decay of the rows it updates."""
    adamw, _ = _train(paddle, True, lambda api, p: api.optimizer.AdamW(0.1, parameters=p, lazy_mode=True))
    no_decay, _ = _train(
        paddle, True, lambda api, p: api.optimizer.AdamW(0.1, parameters=p, lazy_mode=True, weight_decay=0.0)
    )
    adam, _ = _train(paddle, True, _lazy_adam)
    np.testing.assert_array_equal(adamw[3], WEIGHT[3])
    np.testing.assert_allclose(no_decay, adam, rtol=1e-6)
    assert not np.allclose(adamw[1], adam[1])


ORACLE_CASES = {
    "sgd": OPTIMIZERS["sgd"],
    "sgd_l2": OPTIMIZERS["sgd_l2"],
    "adagrad": OPTIMIZERS["adagrad"],
    "adam_lazy": _lazy_adam,
    "adam": lambda api, p: api.optimizer.Adam(0.1, parameters=p),
    "adam_lazy_clipped": lambda api, p: _lazy_adam(api, p, grad_clip=api.nn.ClipGradByGlobalNorm(0.5)),
    "momentum": OPTIMIZERS["momentum"],  # the dense update of the densified gradient, as Paddle's
    "rmsprop": lambda api, p: api.optimizer.RMSProp(0.1, parameters=p),
}


@pytest.mark.parametrize("name", sorted(ORACLE_CASES))
def test_sparse_training_matches_paddle(real_paddle, name):
    ours, _ = _train(paddle, True, ORACLE_CASES[name])
    theirs, _ = _train(real_paddle, True, ORACLE_CASES[name])
    np.testing.assert_allclose(ours, theirs, rtol=1e-5, atol=1e-6)


def test_gradient_merge_averages_a_sparse_gradient_keeping_its_rows():
    """Two micro-batches merged equal the dense model's merged update (the average kept the rows)."""

    def merged_sgd(api, params):
        return GradientMergeOptimizer(api.optimizer.SGD(0.1, parameters=params), k_steps=2)

    sparse, _ = _train(paddle, True, merged_sgd)
    dense, _ = _train(paddle, False, merged_sgd)
    np.testing.assert_allclose(sparse, dense, rtol=1e-6, atol=1e-7)
    assert not np.array_equal(sparse, WEIGHT)


def test_lbfgs_reads_a_sparse_gradient_as_the_table_shaped_one():
    weights = {}
    for sparse in (True, False):
        layer = paddle.nn.Embedding(10, 3, sparse=sparse)
        layer.weight.set_value(WEIGHT)
        opt = paddle.optimizer.LBFGS(parameters=layer.parameters(), max_iter=3)

        def closure(layer=layer, opt=opt):
            opt.clear_grad()
            loss = ((layer(paddle.to_tensor(STEPS[0])) - 1.0) ** 2).sum()
            loss.backward()
            return loss

        opt.step(closure)
        weights[sparse] = layer.weight.numpy()
    np.testing.assert_allclose(weights[True], weights[False], rtol=1e-6, atol=1e-7)
    assert not np.array_equal(weights[True], WEIGHT)
