"""PaddleRec's ``config.yaml`` (``runner`` + ``hyper_parameters``) as a ``rec.ctr`` experiment config.

PaddleRec users carry configs like ``models/rank/deepfm/config.yaml``; this maps every key that
means something here onto our Global/Architecture/Optimizer/Train/Eval sections and refuses typos.
Keys that only drive PaddleRec's own runtime (reader module paths, parameter-server strategy,
inference epochs) are listed back to the caller as ignored rather than dropped silently.

Feature lists follow PaddleRec's slot convention: ``sparse_slots`` (a space-separated string or a
list) whose first name is the label unless ``label`` is given, and ``dense_slots`` (``name`` or
``name:1``). Where the data comes from is ours: ``runner.dataset`` (a ``Train.dataset`` mapping) or
``runner.train_data_dir`` naming a .csv/.jsonl file of rows.
"""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import yaml

from paddlectl.framework.config import validate
from paddlectl.framework.hapi.builders import check_keys, require_mapping

from .errors import ConfigError

RUNNER = {
    "epochs": ("Global", "epochs"),
    "model_save_path": ("Global", "output_dir"),
    "print_interval": ("Global", "log_interval"),
    "seed": ("Global", "seed"),
    "train_batch_size": ("Train", "loader", "batch_size"),
    "infer_batch_size": ("Eval", "loader", "batch_size"),
}
RUNNER_OURS = ("dataset", "train_data_dir", "use_gpu")
RUNNER_IGNORED = (
    "train_reader_path", "infer_reader_path", "test_data_dir", "infer_load_path", "infer_start_epoch",
    "infer_end_epoch", "use_auc", "use_visual", "model_init_path", "use_inference", "save_inference_feed_varnames",
    "save_inference_fetch_varnames", "thread_num", "reader_type", "split_file_list", "sync_mode", "use_fleet",
    "use_xpu", "use_npu", "reader_batch_size", "pipe_command", "print_period",
)  # fmt: skip
HYPER = {
    "sparse_feature_dim": "embedding_dim",
    "fc_sizes": "hidden_sizes",
    "cross_num": "cross_layers",
    "dropout": "dropout",
    "is_sparse": "sparse",
}
HYPER_OURS = ("optimizer", "model", "sparse_slots", "dense_slots", "label", "sparse_feature_number",
              "sparse_inputs_slots", "dense_input_dim")  # fmt: skip
HYPER_IGNORED = ("distributed_embedding", "l2_reg_cross", "clip_by_norm", "use_batchnorm", "use_dropout")
OPTIMIZERS = {"sgd": "SGD", "adam": "Adam", "adagrad": "Adagrad"}


def _names(value, where: str) -> list[str]:
    names = value.split() if isinstance(value, str) else value
    if not isinstance(names, list) or not all(isinstance(n, str) and n for n in names):
        raise ConfigError(f"hyper_parameters.{where} must be a space-separated string or a list of column names")
    return names


def _dense(value) -> list[str]:
    names = []
    for slot in _names(value, "dense_slots"):
        name, _, dim = slot.partition(":")
        if dim not in ("", "1"):
            raise ConfigError(f"dense slot {slot!r}: each dense column is one value here; list them one by one")
        names.append(name)
    return names


def _features(hyper: dict) -> dict:
    if "sparse_slots" not in hyper:
        raise ConfigError(
            "hyper_parameters needs sparse_slots: the sparse columns (first the label, as PaddleRec's slots)"
        )
    sparse, dense = _names(hyper["sparse_slots"], "sparse_slots"), _dense(hyper.get("dense_slots") or [])
    label = hyper.get("label")
    if label is None:
        label, sparse = {"name": sparse[0]}, sparse[1:]
    require_mapping(label, "hyper_parameters.label")
    for key, count, found in (("sparse_inputs_slots", "sparse", sparse), ("dense_input_dim", "dense", dense)):
        if key in hyper and hyper[key] != len(found):
            raise ConfigError(f"hyper_parameters.{key} is {hyper[key]} but {len(found)} {count} slots are listed")
    size = hyper.get("sparse_feature_number")
    slots = [{"name": s, "num_embeddings": size} for s in sparse] if size is not None else sparse
    return {"sparse": slots, "dense": dense, "label": dict(label)}


def _optimizer(section, sparse: bool) -> dict:
    """PaddleRec's optimizer; its Adam is lazy (only touched embedding rows move) where tables are sparse."""
    require_mapping(section, "hyper_parameters.optimizer")
    check_keys(section, "hyper_parameters.optimizer", ("class", "learning_rate", "strategy"))
    name = OPTIMIZERS.get(str(section.get("class", "Adam")).lower())
    if name is None:
        raise ConfigError(f"optimizer class {section.get('class')!r}; PaddleRec's choices are SGD, Adam, AdaGrad")
    lazy = {"lazy_mode": True} if name == "Adam" and sparse else {}
    return {"name": name, "learning_rate": float(section.get("learning_rate", 0.001)), **lazy}


def _dataset(runner: dict) -> dict:
    if "dataset" in runner:
        require_mapping(runner["dataset"], "runner.dataset")
        return copy.deepcopy(runner["dataset"])
    path = runner.get("train_data_dir")
    if not isinstance(path, str) or Path(path).suffix.lower() not in (".csv", ".jsonl"):
        raise ConfigError(
            "say where the data is: runner.dataset: {name: MovieLens100K | Adult, split: ...}, or "
            "runner.train_data_dir: a .csv/.jsonl file of rows (PaddleRec's reader modules are not run)"
        )
    return {"name": "Rows", "path": path}


def from_paddlerec(data: dict[str, Any], model: str | None = None) -> tuple[dict[str, Any], list[str]]:
    """``(our config, PaddleRec keys ignored)`` for a PaddleRec ``config.yaml`` mapping.

    ``model`` (``DeepFM``, ``WideDeep``, ``DCN``) is the model PaddleRec picks by directory;
    ``hyper_parameters.model`` may name it instead.
    """
    require_mapping(data, "PaddleRec config")
    check_keys(data, "PaddleRec config", ("runner", "hyper_parameters"))
    runner, hyper = data.get("runner") or {}, data.get("hyper_parameters") or {}
    require_mapping(runner, "runner")
    require_mapping(hyper, "hyper_parameters")
    check_keys(runner, "runner", (*RUNNER, *RUNNER_OURS, *RUNNER_IGNORED))
    check_keys(hyper, "hyper_parameters", (*HYPER, *HYPER_OURS, *HYPER_IGNORED))
    name = model or hyper.get("model")
    if not isinstance(name, str):
        raise ConfigError("name the model: hyper_parameters.model: DeepFM | WideDeep | DCN (PaddleRec's directory)")
    config: dict[str, Any] = {
        "Global": {"task": "rec.ctr", "device": "gpu" if runner.get("use_gpu") else "cpu"},
        "Architecture": {"name": name, **{ours: hyper[key] for key, ours in HYPER.items() if key in hyper}},
        "Loss": {"name": "BCELoss"},
        "Optimizer": _optimizer(hyper.get("optimizer") or {}, bool(hyper.get("is_sparse"))),
        "Train": {"dataset": {**_dataset(runner), "features": _features(hyper)}, "loader": {}},
        "Eval": {"loader": {}},
        "Metric": {"main_indicator": "auc"},
    }
    for key, path in RUNNER.items():
        if key in runner:
            node = config
            for part in path[:-1]:
                node = node[part]
            node[path[-1]] = runner[key]
    validate(config)
    ignored = [f"runner.{k}" for k in runner if k in RUNNER_IGNORED]
    ignored += [f"hyper_parameters.{k}" for k in hyper if k in HYPER_IGNORED]
    ignored += ["hyper_parameters.optimizer.strategy"] if "strategy" in (hyper.get("optimizer") or {}) else []
    return config, ignored


def load_paddlerec(path: str | Path, model: str | None = None) -> tuple[dict[str, Any], list[str]]:
    """``from_paddlerec`` on a YAML file (read as safe YAML, as every config here)."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"cannot read PaddleRec config {path}: {exc}") from None
    try:
        data = yaml.safe_load(text)
    except (yaml.YAMLError, RecursionError) as exc:
        raise ConfigError(f"{path} is not valid YAML: {getattr(exc, 'problem', exc)}") from None
    return from_paddlerec(data, model)
