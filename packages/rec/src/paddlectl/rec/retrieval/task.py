"""``rec.retrieval``: two-tower (DSSM) candidate retrieval as a ``paddlectl.tasks`` task.

Sections (see ``configs/dssm_ml100k.yml``)::

    Architecture: {name: DSSM, embedding_dim, tower_layers, temperature, user_features, item_features}
    Loss:         {name: InBatchSoftmax}
    Optimizer:    {name: Adam, lr: {...}}                  (the framework's builders)
    Train:        {dataset: {name: MovieLens100K, root, split: leave_last_out | random, holdout,
                             test_fraction, seed}, loader: {batch_size, shuffle, drop_last, num_workers}}
    Eval:         {loader: {batch_size, num_workers}}      (the held-out part of Train's split)
    Metric:       {ks: [10, 20], main_indicator: ndcg_at_10}
    PostProcess:  {topk: 10}

The exported program takes user rows and returns catalogue scores (``model.TwoTower``); its
pre-processing maps raw user ids through the training vocabulary (unknown -> row 0, the
cold-start fallback) and its post-processing returns the top-k unrated items with ids, titles and
the model's probability of each among the candidates. ``export_item_index`` writes the item
tower's vectors and the HNSW index parameters beside an exported model (``ann``).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from paddlectl.framework.core.autograd import no_grad
from paddlectl.framework.hapi.builders import check_keys, instantiate, require_mapping
from paddlectl.framework.hapi.task import TaskBase
from paddlectl.framework.io import Dataset
from paddlectl.framework.static.input_spec import InputSpec

from ..ann import HnswParams, save_item_index
from ..data import Vocab
from ..errors import ConfigError, DataError
from .data import retrieval_data
from .loss import InBatchSoftmax
from .metric import RetrievalMetric
from .model import COLD_START_FLAG, EXCLUDED, TwoTower

MODELS = {"DSSM": TwoTower, "TwoTower": TwoTower}
LOSSES = {"InBatchSoftmax": InBatchSoftmax}
LOADER_KEYS = ("batch_size", "shuffle", "drop_last", "num_workers")
MAX_ID_FILE_BYTES = 1024
"""A ``predict`` input is a small text file holding one raw user id."""


class _Pairs(Dataset):
    """Training positives: input (user row, item row), label the item row (for duplicate masking)."""

    def __init__(self, pairs: np.ndarray) -> None:
        self.pairs = pairs

    def __len__(self) -> int:
        return len(self.pairs)

    def __getitem__(self, i):
        return self.pairs[i], self.pairs[i, 1]


class _TestUsers(Dataset):
    """Evaluation: input the user row, label (user row, held-out item rows padded with -1)."""

    def __init__(self, users: np.ndarray, targets: np.ndarray) -> None:
        self.users, self.labels = users, np.concatenate([users[:, None], targets], axis=1)

    def __len__(self) -> int:
        return len(self.users)

    def __getitem__(self, i):
        return self.users[i], self.labels[i]


class RetrievalTask(TaskBase):
    name = "rec.retrieval"

    # ----- config -------------------------------------------------------------------------
    def check_config(self, config: dict) -> None:
        arch = config.get("Architecture")
        if not isinstance(arch, dict) or "name" not in arch:
            raise ConfigError("config needs Architecture: {name: DSSM, embedding_dim: 32, ...}")
        train = config.get("Train")
        if not isinstance(train, dict) or "dataset" not in train:
            raise ConfigError("config section 'Train' needs a dataset: {name: MovieLens100K, split: leave_last_out}")
        check_keys(train, "Train", ("dataset", "loader"))
        check_keys(train.get("loader") or {}, "Train.loader", LOADER_KEYS)
        check_keys(config.get("Eval") or {}, "Eval", ("loader",))
        check_keys((config.get("Eval") or {}).get("loader") or {}, "Eval.loader", LOADER_KEYS)
        check_keys(config.get("Metric") or {}, "Metric", ("name", "ks", "main_indicator"))
        check_keys(config.get("PostProcess") or {}, "PostProcess", ("topk",))
        check_keys(config.get("Export") or {}, "Export", ())
        self.topk(config)
        self.build_loss(config)
        self.build_model(config)  # reads the data and refuses architecture typos before training
        reported = self.build_metrics(config)[0].name()
        if self.main_indicator(config) not in reported:
            raise ConfigError(
                f"Metric.main_indicator {self.main_indicator(config)!r} is not reported; use one of {', '.join(reported)}"
            )

    @staticmethod
    def data(config: dict):
        return retrieval_data(config["Train"]["dataset"])

    @staticmethod
    def topk(config: dict) -> int:
        value = (config.get("PostProcess") or {}).get("topk", 10)
        if not isinstance(value, int) or isinstance(value, bool) or not 1 <= value <= 1000:
            raise ConfigError(f"PostProcess.topk is {value!r}; give an integer in [1, 1000]")
        return value

    # ----- model, loss, metrics -----------------------------------------------------------
    def build_model(self, config: dict):
        return instantiate(config["Architecture"], MODELS, "Architecture", data=self.data(config))

    def build_loss(self, config: dict):
        return instantiate(config.get("Loss") or {"name": "InBatchSoftmax"}, LOSSES, "Loss")

    def build_metrics(self, config: dict) -> list:
        section = dict(config.get("Metric") or {})
        require_mapping(section, "Metric")
        if section.get("name", "RetrievalMetric") != "RetrievalMetric":
            raise ConfigError(f"Metric.name is {section['name']!r}; rec.retrieval reports RetrievalMetric")
        ks = section.get("ks", [10])
        if not isinstance(ks, list):
            raise ConfigError(f"Metric.ks is {ks!r}; give a list such as [10, 20]")
        return [RetrievalMetric(self.data(config).history, ks)]

    def main_indicator(self, config: dict) -> str:
        ks = (config.get("Metric") or {}).get("ks") or [10]
        return str((config.get("Metric") or {}).get("main_indicator", f"ndcg_at_{ks[0]}"))

    # ----- data ---------------------------------------------------------------------------
    def build_datasets(self, config: dict):
        data = self.data(config)
        return _Pairs(data.train_pairs), _TestUsers(data.test_users, data.test_targets)

    def build_loader_options(self, config: dict, split: str) -> dict:
        loader = dict((config.get("Train" if split == "train" else "Eval") or {}).get("loader") or {})
        return {
            "batch_size": int(loader.get("batch_size", 256)),
            "shuffle": bool(loader.get("shuffle", split == "train")),
            "drop_last": bool(loader.get("drop_last", split == "train")),
            "num_workers": int(loader.get("num_workers", 0)),
        }

    def eval_samples(self, config: dict):
        """``(raw user id, [user row, held-out item rows])`` per test user, in the split's order."""
        data = self.data(config)
        for raw, user, targets in zip(data.test_raw_users, data.test_users, data.test_targets, strict=True):
            yield raw, np.concatenate([[user], targets]).astype(np.int64)

    # ----- export and serving -------------------------------------------------------------
    def input_spec(self, config: dict) -> list:
        return [InputSpec([None], "int64", "user")]

    def preprocess_config(self, config: dict) -> dict:
        return {"task": self.name, "users": self.data(config).users.to_list()}

    def postprocess_config(self, config: dict) -> dict:
        data = self.data(config)
        return {"task": self.name, "topk": self.topk(config), "items": data.items.to_list(), "titles": data.titles[1:]}

    def preprocess(self, pre: dict, raw_inputs: Sequence[Any]) -> list[np.ndarray]:
        """Raw user ids (strings, integers, or small text files holding one) -> user rows;
        an id the training data never saw becomes row 0, the cold-start user."""
        users = Vocab.from_list(pre.get("users"))
        rows, _ = users.encode([_raw_user(raw) for raw in raw_inputs])
        return [rows]

    def postprocess(self, post: dict, outputs: Sequence[np.ndarray]) -> list[dict]:
        """Per user: ``topk`` records (item id, title, score = the model's probability among the
        unrated items), ``label``/``score`` of the best, and ``cold_start`` (popularity fallback)."""
        items, titles, k = post.get("items"), post.get("titles"), post.get("topk")
        if not isinstance(items, list) or not isinstance(titles, list) or len(items) != len(titles):
            raise DataError("the model's postprocess config lacks its item ids and titles; re-export it")
        if not outputs or np.asarray(outputs[0]).shape[-1] != len(items) + 1:
            raise DataError(f"a retrieval model must score {len(items) + 1} item rows; re-export it")
        scores = np.asarray(outputs[0], np.float64)
        excluded = scores <= EXCLUDED / 2
        excluded[:, 0] = True
        shifted = np.where(
            excluded, -np.inf, scores - np.max(np.where(excluded, -np.inf, scores), axis=1, keepdims=True)
        )
        probability = np.exp(shifted)
        probability /= np.maximum(probability.sum(axis=1, keepdims=True), 1e-300)
        from ..ranking import top_k

        top = top_k(np.where(excluded, -np.inf, scores), int(k), excluded)
        results = []
        for row, best in enumerate(top):
            records = [
                {"item_id": items[i - 1], "title": titles[i - 1], "label": titles[i - 1],
                 "score": float(probability[row, i])}
                for i in best if i > 0
            ]  # fmt: skip
            results.append(
                {
                    "cold_start": bool(scores[row, 0] == COLD_START_FLAG),
                    "label": records[0]["title"] if records else "",
                    "score": records[0]["score"] if records else 0.0,
                    "topk": records,
                }
            )
        return results

    # ----- the item side, beside an exported model ---------------------------------------
    def export_extras(self, config: dict, model, directory) -> None:
        """``paddlectl export`` writes the item index beside the program (see ``export_item_index``)."""
        self.export_item_index(config, model, directory)

    def export_item_index(self, config: dict, model, directory, params: HnswParams | None = None) -> Path:
        """Write the item tower's vectors (every catalogue row but the reserved row 0) and the HNSW
        parameters into ``directory``, so a server can retrieve with ``ann.load_item_index``."""
        model.eval()
        with no_grad():
            vectors = model.encode_items(model.item_rows).numpy()[1:]
        return save_item_index(directory, vectors, params or HnswParams())


def _raw_user(raw) -> str:
    """A raw user id: the value itself, or the stripped text of a small file holding it."""
    if isinstance(raw, int | np.integer | str) and not (isinstance(raw, str) and Path(raw).is_file()):
        return str(raw)
    path = Path(raw)
    if not path.is_file():
        raise DataError(f"input {str(raw)!r} is neither a user id nor a file holding one")
    if path.stat().st_size > MAX_ID_FILE_BYTES:
        raise DataError(
            f"{path} is {path.stat().st_size} bytes; a user-id file holds one id (at most {MAX_ID_FILE_BYTES})"
        )
    try:
        text = path.read_text(encoding="utf-8").strip()
    except UnicodeDecodeError:
        raise DataError(f"{path} is not UTF-8 text; write the user id as text, e.g. `echo 196 > user.txt`") from None
    if not text or len(text.split()) != 1:
        raise DataError(f"{path} must hold exactly one user id; it holds {text!r}")
    return text
