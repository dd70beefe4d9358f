"""``paddlectl train`` -> ``export --verify`` -> ``predict`` (top-k for user ids) -> ``eval`` on
rec.retrieval, then the item tower's vectors and HNSW index beside the exported model."""

import json

import pytest
import yaml
from test_retrieval import CONFIG
from typer.testing import CliRunner

import paddlectl.framework as paddle
from paddlectl.cli.app import app
from paddlectl.framework.config import load_config
from paddlectl.framework.hapi.export import load_trained
from paddlectl.rec.ann import VECTORS_FILE, exact_top_k, index_recall, load_item_index
from paddlectl.rec.errors import DataError
from paddlectl.rec.retrieval.task import RetrievalTask

pytest.importorskip("recbole", reason="MovieLens-100k ships in recbole==1.2.1 (pip install --no-deps recbole==1.2.1)")
pytest.importorskip("hnswlib", reason="the ANN index is hnswlib's")
cli = CliRunner()


def _invoke(*args):
    return cli.invoke(app, [str(a) for a in args])


@pytest.fixture(scope="module")
def exported(tmp_path_factory):
    root = tmp_path_factory.mktemp("retrieval_cli")
    config = {
        **CONFIG,
        "Global": {"task": "rec.retrieval", "epochs": 1, "output_dir": str(root / "run"), "log_interval": 5},
        "Train": {**CONFIG["Train"], "loader": {"batch_size": 2048, "shuffle": True, "drop_last": True}},
        "Eval": {"loader": {"batch_size": 1024}},
    }
    (root / "dssm.yml").write_text(yaml.safe_dump(config), encoding="utf-8")
    result = _invoke("train", "-c", root / "dssm.yml", "-q")
    assert result.exit_code == 0, result.output
    result = _invoke("export", "-w", root / "run" / "best", "-o", root / "model", "--verify")
    assert result.exit_code == 0, result.output
    return root


def test_training_loss_falls_and_eval_reports_ranking_metrics(exported):
    records = [json.loads(line) for line in (exported / "run" / "metrics.jsonl").read_text().splitlines()]
    losses = [r["loss"] for r in records if r["kind"] == "train"]
    assert losses[-1] < losses[0]
    evaluation = [r for r in records if r["kind"] == "eval"][-1]
    assert {"recall_at_10", "ndcg_at_10", "hit_rate_at_10", "cold_start_users"} <= set(evaluation)


def test_predict_returns_the_top_k_items_for_user_ids_with_the_cold_start_fallback(exported, tmp_path):
    (tmp_path / "known.txt").write_text("196\n")
    (tmp_path / "new.txt").write_text("a-new-user\n")
    out = tmp_path / "p.json"
    result = _invoke("predict", "-m", exported / "model", "-i", tmp_path / "known.txt", tmp_path / "new.txt",
                     "--json", out)  # fmt: skip
    assert result.exit_code == 0, result.output
    known, new = json.loads(out.read_text())["predictions"]
    assert len(known["topk"]) == 5 and {"item_id", "title", "score"} <= set(known["topk"][0])
    assert not known["cold_start"] and new["cold_start"] and new["label"] == "Star Wars"
    scores = [r["score"] for r in known["topk"]]
    assert scores == sorted(scores, reverse=True) and 0 < scores[-1] <= scores[0] <= 1


def test_eval_on_the_exported_model_matches_training(exported):
    quick = ["threads=1", "cold_start=false", "repeats=2", "warmup=1", "rounds=1", "accuracy_batch_size=512"]
    overrides = [arg for setting in quick for arg in ("-o", f"Eval.harness.{setting}")]
    result = _invoke("eval", "-m", exported / "model", "-c", exported / "dssm.yml", "--output-dir",
                     exported / "eval", *overrides)  # fmt: skip
    assert result.exit_code == 0, result.output
    records = [json.loads(line) for line in (exported / "run" / "metrics.jsonl").read_text().splitlines()]
    trained = [r for r in records if r["kind"] == "eval"][-1]["ndcg_at_10"]
    report = json.loads(next((exported / "eval").rglob("report.json")).read_text())
    assert report["metrics"]["ndcg_at_10"] == pytest.approx(trained, rel=1e-4)


def test_item_index_beside_the_export_finds_what_exact_search_finds_and_refuses_damage(exported):
    task = RetrievalTask()
    config = load_config(exported / "dssm.yml", [])
    model = load_trained(task, config, exported / "run" / "best")
    index = load_item_index(exported / "model")  # `paddlectl export` wrote it beside the program
    data = task.data(config)
    users = model.encode_users(paddle.to_tensor(data.test_users)).numpy()
    rated = data.history[data.test_users][:, 1:]
    approximate, _ = index.query(users, 10, rated)
    exact, _ = exact_top_k(users, index.vectors, 10, rated)
    assert index_recall(approximate, exact) >= 0.9
    (exported / "model" / VECTORS_FILE).write_bytes(b"\0" * 64)
    with pytest.raises(DataError):
        load_item_index(exported / "model")
