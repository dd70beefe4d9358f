"""PaddleRec's config.yaml (runner + hyper_parameters + slot lists) as a rec.ctr config."""

import copy

import pytest
import yaml
from typer.testing import CliRunner

from paddlectl.cli.app import app
from paddlectl.rec.config import from_paddlerec, load_paddlerec
from paddlectl.rec.ctr.task import CtrTask
from paddlectl.rec.errors import ConfigError

# the layout of PaddleRec's models/rank/deepfm/config.yaml, with our data source and column slots
PADDLEREC = {
    "runner": {
        "train_reader_path": "criteo_reader",
        "use_gpu": False,
        "use_auc": True,
        "train_batch_size": 256,
        "infer_batch_size": 1024,
        "epochs": 3,
        "print_interval": 20,
        "model_save_path": "output_model_deepfm",
        "dataset": {"name": "MovieLens100K", "split": {"name": "leave_last_out"}},
    },
    "hyper_parameters": {
        "optimizer": {"class": "adam", "learning_rate": 0.002, "strategy": "async"},
        "sparse_slots": "click user_id item_id",
        "dense_slots": "age:1 year",
        "sparse_feature_dim": 9,
        "fc_sizes": [64, 32],
        "sparse_inputs_slots": 2,
        "dense_input_dim": 2,
        "distributed_embedding": 0,
    },
}


def changed(**changes):
    data = copy.deepcopy(PADDLEREC)
    for key, value in changes.items():
        section, name = key.split("__")
        if value is None:
            data[section].pop(name)
        else:
            data[section][name] = value
    return data


def test_runner_and_hyper_parameters_map_onto_our_sections():
    config, ignored = from_paddlerec(PADDLEREC, model="DeepFM")
    assert config["Global"] == {"task": "rec.ctr", "device": "cpu", "epochs": 3, "output_dir": "output_model_deepfm",
                                "log_interval": 20}  # fmt: skip
    assert config["Architecture"] == {"name": "DeepFM", "embedding_dim": 9, "hidden_sizes": [64, 32]}
    assert config["Optimizer"] == {"name": "Adam", "learning_rate": 0.002}
    assert config["Train"]["loader"] == {"batch_size": 256} and config["Eval"]["loader"] == {"batch_size": 1024}
    features = config["Train"]["dataset"]["features"]
    assert features == {"sparse": ["user_id", "item_id"], "dense": ["age", "year"], "label": {"name": "click"}}
    assert set(ignored) == {"runner.train_reader_path", "runner.use_auc", "hyper_parameters.distributed_embedding",
                            "hyper_parameters.optimizer.strategy"}  # fmt: skip
    CtrTask().check_config(config)


def test_feature_number_makes_slots_pre_indexed_and_label_can_be_named():
    config, _ = from_paddlerec(
        changed(hyper_parameters__sparse_feature_number=1000, hyper_parameters__label={"name": "rating", "threshold": 4},
                hyper_parameters__sparse_slots=["user_id", "item_id"], hyper_parameters__model="WideDeep"),
    )  # fmt: skip
    features = config["Train"]["dataset"]["features"]
    assert features["sparse"] == [
        {"name": "user_id", "num_embeddings": 1000},
        {"name": "item_id", "num_embeddings": 1000},
    ]
    assert features["label"] == {"name": "rating", "threshold": 4} and config["Architecture"]["name"] == "WideDeep"


def test_sparse_tables_train_with_lazy_adam():
    config, _ = from_paddlerec(changed(hyper_parameters__is_sparse=True), "DCN")
    assert config["Architecture"]["sparse"] is True
    assert config["Optimizer"] == {"name": "Adam", "learning_rate": 0.002, "lazy_mode": True}
    CtrTask().check_config(config)


def test_rows_file_as_train_data_dir():
    data = changed(runner__dataset=None, runner__train_data_dir="clicks.csv")
    assert from_paddlerec(data, "DCN")[0]["Train"]["dataset"]["name"] == "Rows"


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (changed(runner__epoch=3), "unknown config key 'runner.epoch'"),
        (changed(hyper_parameters__fc_size=[3]), "fc_sizes"),
        (changed(hyper_parameters__sparse_inputs_slots=26), "sparse_inputs_slots is 26 but 2 sparse slots"),
        (changed(hyper_parameters__dense_slots="dense_var:13"), "each dense column is one value"),
        (changed(hyper_parameters__optimizer={"class": "Lamb"}), "SGD, Adam, AdaGrad"),
        (changed(hyper_parameters__sparse_slots=None), "needs sparse_slots"),
        (changed(runner__dataset=None, runner__train_data_dir="data/sample_data/train"), "say where the data is"),
        (changed(runner__epochs="three"), "Global.epochs' must be int"),
        ({"runner": {}, "workspace": "x"}, "workspace"),
    ],
)
def test_bad_paddlerec_configs_are_named(data, message):
    with pytest.raises(ConfigError, match=message):
        from_paddlerec(data, "DeepFM")


def test_model_must_be_named():
    with pytest.raises(ConfigError, match="name the model"):
        from_paddlerec(PADDLEREC)


def test_convert_command_writes_a_trainable_config(tmp_path):
    source = tmp_path / "config.yaml"
    source.write_text(yaml.safe_dump(PADDLEREC))
    result = CliRunner().invoke(
        app, ["rec", "convert", str(source), "--model", "DeepFM", "-o", str(tmp_path / "o.yml")]
    )
    assert result.exit_code == 0, result.output
    assert "runner.use_auc" in result.output
    assert yaml.safe_load((tmp_path / "o.yml").read_text()) == from_paddlerec(PADDLEREC, "DeepFM")[0]
    assert load_paddlerec(source, "DeepFM") == from_paddlerec(PADDLEREC, "DeepFM")


@pytest.mark.parametrize(("text", "message"), [("runner: [1\n", "not valid YAML"), ("runner: {}\n", "name the model")])
def test_convert_command_refuses_bad_files_in_one_line(tmp_path, text, message):
    (tmp_path / "bad.yaml").write_text(text)
    result = CliRunner().invoke(app, ["rec", "convert", str(tmp_path / "bad.yaml"), "-o", str(tmp_path / "o.yml")])
    assert result.exit_code == 2 and message in result.output and "Traceback" not in result.output
    assert not (tmp_path / "o.yml").exists()
