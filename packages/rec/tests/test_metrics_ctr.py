"""AUC (the framework's bucketed metric.Auc) and log loss against scikit-learn and hand-computed cases."""

import numpy as np
import pytest
from sklearn.metrics import log_loss, roc_auc_score

from paddlectl.framework.errors import ShapeError
from paddlectl.rec.metrics_ctr import CtrAuc, LogLoss


def measure(metric, p, y, batches=3):
    metric.reset()
    for pb, yb in zip(np.array_split(p, batches), np.array_split(y, batches), strict=True):
        metric.update(*metric.compute(pb.reshape(-1, 1), yb.reshape(-1, 1)))
    return metric.accumulate()


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_auc_and_logloss_match_scikit_learn(seed):
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 2, 2000).astype(np.float32)
    p = np.clip(rng.normal(0.35 + 0.3 * y, 0.25), 0, 1).astype(np.float32)
    # 4095 buckets, as Paddle's Auc: scores in one bucket count as ties, so agreement is to ~1e-3
    assert measure(CtrAuc(), p, y) == pytest.approx(roc_auc_score(y, p), abs=2e-3)
    clipped = np.clip(p.astype(np.float64), 1e-7, 1 - 1e-7)
    assert measure(LogLoss(), p, y) == pytest.approx(log_loss(y, clipped), rel=1e-9)


def test_hand_computed_cases():
    y = np.array([0, 0, 1, 1], np.float32)
    assert measure(CtrAuc(), np.array([0.1, 0.2, 0.8, 0.9]), y, batches=2) == 1.0
    assert measure(CtrAuc(), np.array([0.9, 0.8, 0.2, 0.1]), y, batches=2) == 0.0
    assert measure(CtrAuc(), np.full(4, 0.5), y, batches=2) == 0.5
    # one of the four positive/negative pairs is ordered wrongly: 3/4
    assert measure(CtrAuc(), np.array([0.1, 0.6, 0.5, 0.9]), y, batches=1) == pytest.approx(0.75)
    # -(ln 0.5 + ln 0.5 + ln 0.8 + ln 0.25) / 4
    expected = -(2 * np.log(0.5) + np.log(0.8) + np.log(0.25)) / 4
    assert measure(LogLoss(), np.array([0.5, 0.2, 0.5, 0.25]), y, batches=2) == pytest.approx(expected)


def test_confident_miss_is_finite():
    assert np.isfinite(measure(LogLoss(), np.array([0.0, 1.0]), np.array([1.0, 0.0]), batches=1))


def test_bad_predictions_are_refused():
    with pytest.raises(ShapeError, match="one probability per label"):
        LogLoss().update(np.zeros((3, 1)), np.zeros(2))
    with pytest.raises(ValueError, match=r"probabilities in \[0, 1\]"):
        CtrAuc().compute(np.array([[np.nan]]), np.array([1.0]))
