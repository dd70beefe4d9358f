"""The logistic-regression floor sees the task's own split and encoding (a Rows file of clicks)."""

import numpy as np
import pytest
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import roc_auc_score

from paddlectl.rec.baselines import logistic_floor


def clicks(tmp_path, informative=True, n=600, seed=0):
    rng = np.random.default_rng(seed)
    site = rng.integers(0, 6, n)
    hour = rng.normal(size=n)
    p = 1 / (1 + np.exp(-(np.where(site < 3, 2.0, -2.0) + hour))) if informative else np.full(n, 0.5)
    click = (rng.random(n) < p).astype(int)
    lines = ["site,hour,click", *(f"s{s},{h:.4f},{c}" for s, h, c in zip(site, hour, click, strict=True))]
    (tmp_path / "clicks.csv").write_text("\n".join(lines) + "\n")
    return {
        "Train": {
            "dataset": {
                "name": "Rows",
                "path": str(tmp_path / "clicks.csv"),
                "split": {"name": "random", "fractions": [0.75, 0.25], "seed": 1},
                "features": {"sparse": ["site"], "dense": ["hour"], "label": {"name": "click"}},
            }
        }
    }, (site, hour, click)


def test_floor_equals_a_hand_built_one_hot_regression(tmp_path):
    config, (site, hour, click) = clicks(tmp_path)
    floor = logistic_floor(config)
    assert (floor["train_rows"], floor["eval_rows"]) == (450, 150)
    # the same split by hand: the seeded permutation random_split draws
    order = np.random.default_rng(1).permutation(600)
    train, test = np.sort(order[:450]), np.sort(order[450:])
    onehot = np.eye(6)[site]
    mean, std = hour[train].mean(), hour[train].std()
    x = np.column_stack([onehot, (hour - mean) / std])
    model = LogisticRegression(max_iter=1000).fit(x[train], click[train])
    assert floor["auc"] == pytest.approx(roc_auc_score(click[test], model.predict_proba(x[test])[:, 1]), abs=1e-6)
    assert floor["auc"] > 0.8


def test_floor_is_chance_when_the_label_is_noise(tmp_path):
    config, _ = clicks(tmp_path, informative=False)
    assert abs(logistic_floor(config)["auc"] - 0.5) < 0.12


def test_floor_sees_a_multi_valued_feature_as_normalised_multi_hot(tmp_path):
    rng = np.random.default_rng(2)
    n = 500
    tags = [rng.choice(5, size=rng.integers(0, 4), replace=False) for _ in range(n)]
    hot = np.zeros((n, 5))
    for r, t in enumerate(tags):
        hot[r, t] = 1.0
    click = (rng.random(n) < 1 / (1 + np.exp(-(2 * hot[:, 0] - 2 * hot[:, 1])))).astype(int)
    lines = ["tags,click", *(f"{'|'.join(f't{i}' for i in t)},{c}" for t, c in zip(tags, click, strict=True))]
    (tmp_path / "tags.csv").write_text("\n".join(lines) + "\n")
    features = {"sparse": [{"name": "tags", "max_len": 4}], "label": {"name": "click"}}
    config = {"Train": {"dataset": {"name": "Rows", "path": str(tmp_path / "tags.csv"),
                                    "split": {"name": "random", "fractions": [0.8, 0.2], "seed": 0},
                                    "features": features}}}  # fmt: skip
    floor = logistic_floor(config)
    order = np.random.default_rng(0).permutation(n)
    train, test = np.sort(order[:400]), np.sort(order[400:])
    # mean pooling: each row's tags weigh 1 / its count; column 0 is the unseen row (never used here)
    x = np.column_stack([np.zeros(n), hot / np.maximum(hot.sum(1, keepdims=True), 1)])
    model = LogisticRegression(max_iter=1000).fit(x[train], click[train])
    assert floor["auc"] == pytest.approx(roc_auc_score(click[test], model.predict_proba(x[test])[:, 1]), abs=1e-6)
    assert floor["auc"] > 0.65
