"""The CTR models: each trains and its loss falls; DeepFM's pairwise term equals the brute-force sum."""

import itertools

import numpy as np
import pytest

import paddlectl.framework as paddle
from paddlectl.framework.nn import functional as F
from paddlectl.framework.ops.embedding import is_selected_rows
from paddlectl.rec.ctr.models import MODELS, DeepFM

SIZES = [40, 20, 3]


def batch(n=256, seed=0):
    rng = np.random.default_rng(seed)
    ids = np.stack([rng.integers(0, s, n) for s in SIZES], 1)
    dense = rng.normal(size=(n, 2))
    y = ((ids[:, 0] % 2 == 0) ^ (dense[:, 0] > 0)).astype(np.float32).reshape(-1, 1)
    return np.concatenate([ids, dense], 1).astype(np.float32), y


@pytest.mark.parametrize("sparse", [False, True])
@pytest.mark.parametrize("name", sorted(MODELS))
def test_each_model_learns(name, sparse):
    paddle.seed(0)
    model = MODELS[name](SIZES, 2, embedding_dim=8, hidden_sizes=[16], sparse=sparse)
    optimizer = paddle.optimizer.Adam(learning_rate=0.01, parameters=model.parameters(), lazy_mode=sparse)
    x, y = (paddle.to_tensor(a) for a in batch())
    losses = []
    for _ in range(15):
        loss = F.binary_cross_entropy(model(x), y)
        loss.backward()
        optimizer.step()
        optimizer.clear_grad()
        losses.append(float(loss))
    assert model(x).shape == [256, 1]
    assert losses[-1] < 0.8 * losses[0]


def test_sparse_tables_get_the_touched_rows_only():
    model = DeepFM(SIZES, 2, embedding_dim=4, hidden_sizes=[8], sparse=True)
    x = np.array([[1, 2, 0, 0.5, -1], [3, 2, 1, 0.0, 2]], np.float32)
    F.binary_cross_entropy(model(paddle.to_tensor(x)), paddle.to_tensor(np.ones((2, 1), np.float32))).backward()
    for table in (model.embedder.table, model.first.weights):
        grad = table.weight.grad
        assert is_selected_rows(grad)  # rows at each field's offset: 40 + id for field 1, 60 + id for field 2
        assert sorted(set(np.asarray(grad.rows()).tolist())) == [1, 3, 42, 60, 61]


def test_deepfm_pairwise_term_is_the_sum_over_field_pairs():
    paddle.seed(1)
    model = DeepFM(SIZES, 2, embedding_dim=4, hidden_sizes=[])
    x, _ = batch(5)
    rows, dense = model.embedder.split(paddle.to_tensor(x))
    fields = model.embedder(rows, dense)
    v = fields.numpy()
    brute = sum((v[:, i] * v[:, j]).sum(1) for i, j in itertools.combinations(range(v.shape[1]), 2))
    summed = v.sum(1)
    fm = 0.5 * ((summed**2) - (v**2).sum(1)).sum(1)
    assert np.allclose(fm, brute, atol=1e-5)
    first = model.first(rows, dense).numpy()[:, 0]
    deep = model.head(model.deep(paddle.flatten(fields, start_axis=1))).numpy()[:, 0]
    expected = 1 / (1 + np.exp(-(first + brute + deep)))
    assert np.allclose(model(paddle.to_tensor(x)).numpy()[:, 0], expected, atol=1e-5)


def test_ids_outside_a_field_never_read_another_fields_rows():
    paddle.seed(2)
    model = MODELS["WideDeep"](SIZES, 2, embedding_dim=4, hidden_sizes=[8])
    x, _ = batch(3)
    high, top = x.copy(), x.copy()
    high[:, 1], top[:, 1] = 1000, SIZES[1] - 1  # past field 1's last row: clamped to it
    assert np.allclose(model(paddle.to_tensor(high)).numpy(), model(paddle.to_tensor(top)).numpy())
