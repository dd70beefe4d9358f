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
    rows, weights, dense = model.embedder.split(paddle.to_tensor(x))
    assert weights is None  # no multi-valued field: nothing pooled
    fields = model.embedder(rows, weights, dense)
    v = fields.numpy()
    brute = sum((v[:, i] * v[:, j]).sum(1) for i, j in itertools.combinations(range(v.shape[1]), 2))
    summed = v.sum(1)
    fm = 0.5 * ((summed**2) - (v**2).sum(1)).sum(1)
    assert np.allclose(fm, brute, atol=1e-5)
    first = model.first(rows, weights, dense).numpy()[:, 0]
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


# one-value fields of 40 and 20 rows, then a multi-valued field of 10 rows in 4 slots (-1: PAD)
MULTI = dict(field_lengths=[1, 1, 4], pooling=[None, None, "mean"])
MULTI_X = np.array([[1, 2, 3, 5, -1, -1, 0.5], [0, 19, -1, -1, -1, -1, 1.0], [-5, 2, 7, 7, 7, 2, -1.0]], np.float32)


@pytest.mark.parametrize("pooling", ["mean", "sum"])
def test_multi_valued_field_pools_its_filled_slots_and_masks_padding(pooling):
    paddle.seed(3)
    model = DeepFM(
        [40, 20, 10], 1, embedding_dim=4, hidden_sizes=[8], field_lengths=[1, 1, 4], pooling=[None, None, pooling]
    )
    table = model.embedder.table.weight.numpy()
    first = model.first.weights.weight.numpy()[:, 0]
    rows, weights, dense = model.embedder.split(paddle.to_tensor(MULTI_X))
    fields = model.embedder(rows, weights, dense).numpy()
    assert fields.shape == (3, 4, 4)  # three sparse fields (the multi-valued one pooled) and one dense
    scale = (lambda n: 1 / max(n, 1)) if pooling == "mean" else (lambda n: 1.0)
    for r, (values, n) in enumerate([([3, 5], 2), ([], 0), ([7, 7, 7, 2], 4)]):
        pooled = sum((table[60 + v] for v in values), np.zeros(4)) * scale(n)
        assert np.allclose(fields[r, 2], pooled, atol=1e-6)  # PAD slots add nothing, whatever row they clamp to
        want = first[[max(int(MULTI_X[r, 0]), 0), 40 + int(MULTI_X[r, 1])]].sum() + sum(
            first[60 + v] for v in values
        ) * scale(n)
        got = model.first(rows, weights, dense).numpy()[r, 0] - model.first.dense(dense).numpy()[r, 0]
        assert np.isclose(got, want, atol=1e-6)
    assert np.allclose(fields[2, 0], table[0])  # a one-value field's negative id is clamped to its row 0, not masked


@pytest.mark.parametrize("name", sorted(MODELS))
def test_multi_valued_models_learn_and_padding_gets_no_gradient(name):
    paddle.seed(4)
    model = MODELS[name]([40, 20, 10], 1, embedding_dim=4, hidden_sizes=[8], sparse=True, **MULTI)
    optimizer = paddle.optimizer.Adam(learning_rate=0.02, parameters=model.parameters(), lazy_mode=True)
    rng = np.random.default_rng(0)
    n = 256
    multi = np.where(rng.random((n, 4)) < 0.5, rng.integers(0, 10, (n, 4)), -1)
    x = np.concatenate([rng.integers(0, 40, (n, 1)), rng.integers(0, 20, (n, 1)), multi, rng.normal(size=(n, 1))], 1)
    y = (multi == 3).any(1).astype(np.float32).reshape(-1, 1)  # the label lives in the multi-valued field
    x, y = paddle.to_tensor(x.astype(np.float32)), paddle.to_tensor(y)
    losses = []
    for _ in range(20):
        loss = F.binary_cross_entropy(model(x), y)
        loss.backward()
        optimizer.step()
        optimizer.clear_grad()
        losses.append(float(loss))
    assert losses[-1] < 0.8 * losses[0]
    only_pad = paddle.to_tensor(np.array([[1, 2, -1, -1, -1, -1, 0.0]], np.float32))
    F.binary_cross_entropy(model(only_pad), paddle.to_tensor(np.ones((1, 1), np.float32))).backward()
    grad = model.embedder.table.weight.grad
    touched = dict(
        zip(np.asarray(grad.rows()).tolist(), np.abs(np.asarray(grad.values())).sum(1).tolist(), strict=True)
    )
    assert touched.get(60, 0.0) == 0.0  # the PAD slots clamp to the multi-valued field's row 0: zero gradient
