"""paddle.metric against real PaddlePaddle 3.3.1 on random batches."""

from __future__ import annotations

import numpy as np
import pytest

import paddlectl.framework as paddle
from paddlectl.framework.errors import ShapeError


@pytest.mark.parametrize("topk", [(1,), (1, 3)])
@pytest.mark.parametrize("label_shape", ["flat", "column", "onehot"])
def test_accuracy_class_matches_paddle(real_paddle, topk, label_shape):
    rng = np.random.default_rng(0)
    ours, theirs = paddle.metric.Accuracy(topk=topk), real_paddle.metric.Accuracy(topk=topk)
    for _ in range(3):
        pred = rng.random((8, 5)).astype("float32")
        label = rng.integers(0, 5, size=8)
        label = {"flat": label, "column": label[:, None], "onehot": np.eye(5)[label].astype("float32")}[label_shape]
        c_ours = ours.compute(paddle.to_tensor(pred), paddle.to_tensor(label))
        c_theirs = theirs.compute(real_paddle.to_tensor(pred), real_paddle.to_tensor(label))
        np.testing.assert_array_equal(c_ours.numpy(), c_theirs.numpy())
        assert ours.update(c_ours) == theirs.update(c_theirs)
    assert ours.accumulate() == theirs.accumulate()
    assert ours.name() == theirs.name()
    ours.reset()
    assert ours.accumulate() == (0.0 if len(topk) == 1 else [0.0, 0.0])


@pytest.mark.parametrize("k", [1, 2])
def test_accuracy_function_matches_paddle(real_paddle, k):
    rng = np.random.default_rng(1)
    x = rng.random((10, 4)).astype("float32")
    y = rng.integers(0, 4, size=(10, 1)).astype("int64")
    got = paddle.metric.accuracy(paddle.to_tensor(x), paddle.to_tensor(y), k=k)
    want = real_paddle.metric.accuracy(real_paddle.to_tensor(x), real_paddle.to_tensor(y), k=k)
    assert got.shape == list(want.shape) and got.dtype == np.float32
    np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-6)


def test_accuracy_function_fills_counts_and_checks_shapes():
    x = paddle.to_tensor(np.array([[0.1, 0.9], [0.8, 0.2], [0.3, 0.7]], "float32"))
    correct, total = paddle.zeros([1], "int32"), paddle.zeros([1], "int32")
    acc = paddle.metric.accuracy(x, paddle.to_tensor([[1], [1], [1]]), correct=correct, total=total)
    assert float(acc) == pytest.approx(2 / 3) and correct.item() == 2 and total.item() == 3
    with pytest.raises(ShapeError, match="label"):
        paddle.metric.accuracy(x, paddle.to_tensor([[1], [1]]))


@pytest.mark.parametrize("cls", ["Precision", "Recall"])
def test_precision_recall_match_paddle(real_paddle, cls):
    rng = np.random.default_rng(2)
    ours, theirs = getattr(paddle.metric, cls)(), getattr(real_paddle.metric, cls)()
    for _ in range(3):
        preds = rng.random((16, 1)).astype("float32")
        labels = rng.integers(0, 2, size=(16, 1)).astype("int64")
        ours.update(paddle.to_tensor(preds), paddle.to_tensor(labels))
        theirs.update(preds, labels)
    assert ours.accumulate() == pytest.approx(theirs.accumulate(), rel=1e-12)
    assert ours.name() == theirs.name()
    ours.reset()
    assert ours.accumulate() == 0.0
    with pytest.raises(ValueError, match="numpy ndarray or Tensor"):
        ours.update([0.1], [1])


@pytest.mark.parametrize("num_thresholds", [4095, 7])
def test_auc_matches_paddle(real_paddle, num_thresholds):
    rng = np.random.default_rng(3)
    ours = paddle.metric.Auc(num_thresholds=num_thresholds)
    theirs = real_paddle.metric.Auc(num_thresholds=num_thresholds)
    for _ in range(3):
        p = rng.random(50).astype("float32")
        preds = np.stack([1 - p, p], axis=1)
        labels = (rng.random(50) < p).astype("int64")[:, None]
        ours.update(paddle.to_tensor(preds), paddle.to_tensor(labels))
        theirs.update(preds, labels)
    assert ours.accumulate() == pytest.approx(theirs.accumulate(), rel=1e-12)
    assert ours.name() == "auc"
    ours.reset()
    assert ours.accumulate() == 0.0
    with pytest.raises(ShapeError, match=r"preds must be \[N, 2\]"):
        ours.update(np.zeros(3), np.zeros(3))


def test_metric_base_is_abstract_and_compute_passes_through():
    with pytest.raises(TypeError):
        paddle.metric.Metric()

    class Count(paddle.metric.Metric):
        def reset(self):
            self.n = 0

        def update(self, x):
            self.n += len(x)

        def accumulate(self):
            return self.n

        def name(self):
            return "count"

    m = Count()
    m.reset()
    assert m.compute(1, 2) == (1, 2)
    m.update([1, 2, 3])
    assert m.accumulate() == 3
