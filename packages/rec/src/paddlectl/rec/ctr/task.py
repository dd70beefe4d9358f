"""``rec.ctr``: click-through-rate ranking (Wide&Deep, DeepFM, DCN) as a ``paddlectl.tasks`` task.

Sections (see ``configs/deepfm_ml100k.yml``)::

    Architecture: {name: DeepFM | WideDeep | DCN, embedding_dim, hidden_sizes, dropout, sparse, cross_layers (DCN)}
    Loss:         {name: BCELoss}
    Optimizer:    {name: Adam, lr: {learning_rate}, ...}
    Train:        {dataset: {name: MovieLens100K | Adult | Rows, path (Rows), max_rows,
                             split: {name: leave_last_out | random, n, fractions, seed, validation},
                             history: {length},  (adds history, history_liked, history_disliked)
                             features: {sparse: [column | {name, num_embeddings, max_len, pooling}],
                                        dense: [column], label: {name, threshold | positive}}},
                   loader: {batch_size, shuffle, drop_last, num_workers}}
    Eval:         {loader: {batch_size}}
    Metric:       {main_indicator: auc}      (auc, logloss)

The evaluation split is the second part of ``Train.dataset.split``. The exported model is one
predictor program over the encoded ``[N, slots + D]`` matrix (a multi-valued feature's ``max_len``
slots); the fitted feature encoder (vocabularies,
dense statistics) travels in its metadata, so ``paddlectl predict`` takes raw feature rows.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from paddlectl.framework import to_tensor
from paddlectl.framework.hapi.builders import check_keys, instantiate, require_mapping
from paddlectl.framework.hapi.task import TaskBase
from paddlectl.framework.io import TensorDataset
from paddlectl.framework.nn import functional as F
from paddlectl.framework.static.input_spec import InputSpec

from ..errors import ConfigError, DataError
from ..metrics_ctr import CtrAuc, LogLoss
from .features import FeatureEncoder, FeatureSpec, parse_features
from .models import MODELS
from .rows import read_rows, rows_table
from .sources import check_dataset, features_section, prepare

log = logging.getLogger("paddlectl.rec")
LOADER_KEYS = ("batch_size", "shuffle", "drop_last", "num_workers")
METRICS = {"auc": CtrAuc, "logloss": LogLoss}


def bce(output, label):
    """Binary cross-entropy of the click probability (PaddleRec's ``log_loss`` / ``BCELoss``)."""
    return F.binary_cross_entropy(output, label)


class CtrTask(TaskBase):
    name = "rec.ctr"

    # ----- config -----------------------------------------------------------------------
    def check_config(self, config: dict) -> None:
        arch = config.get("Architecture")
        if not isinstance(arch, dict) or arch.get("name") not in MODELS:
            raise ConfigError(f"config needs Architecture: {{name: {' | '.join(MODELS)}, embedding_dim, hidden_sizes}}")
        spec = parse_features(features_section(config))
        train = config.get("Train")
        require_mapping(train, "Train")
        check_keys(train, "Train", ("dataset", "loader"))
        check_dataset(train.get("dataset"))
        for split in ("Train", "Eval"):
            section = config.get(split) or {}
            require_mapping(section, split)
            check_keys(section.get("loader") or {}, f"{split}.loader", LOADER_KEYS)
        check_keys(config.get("Eval") or {}, "Eval", ("loader",))
        loss = config.get("Loss") or {}
        require_mapping(loss, "Loss")
        if loss.get("name", "BCELoss") != "BCELoss" or set(loss) - {"name"}:
            raise ConfigError(f"Loss is {loss!r}; rec.ctr trains with binary cross-entropy: Loss: {{name: BCELoss}}")
        check_keys(config.get("Metric") or {}, "Metric", ("main_indicator",))
        if self.main_indicator(config) not in METRICS:
            raise ConfigError(f"Metric.main_indicator must be one of {', '.join(METRICS)}")
        sizes = [f.num_embeddings or 2 for f in spec.sparse]
        self._build(arch, sizes, spec)  # refuses architecture typos before the data is read

    @staticmethod
    def _build(arch: dict, field_sizes: list[int], spec: FeatureSpec):
        return instantiate(
            arch,
            MODELS,
            "Architecture",
            field_sizes=field_sizes,
            num_dense=len(spec.dense),
            field_lengths=spec.field_lengths,
            pooling=spec.pooling,
        )

    # ----- model, loss, metrics ---------------------------------------------------------
    def build_model(self, config: dict):
        encoder = prepare(config).encoder
        return self._build(config["Architecture"], encoder.field_sizes, encoder.spec)

    def build_loss(self, config: dict):
        return bce

    def build_metrics(self, config: dict) -> list:
        return [CtrAuc(), LogLoss()]

    def main_indicator(self, config: dict) -> str:
        return str((config.get("Metric") or {}).get("main_indicator", "auc"))

    # ----- data -------------------------------------------------------------------------
    def build_datasets(self, config: dict):
        data = prepare(config)
        sets = []
        for table in (data.train, data.eval):
            x, unseen = data.encoder.encode(table)
            # (features [S + D], label [1]) float32 rows; a TensorDataset is fetched a batch at a time
            sets.append(TensorDataset([to_tensor(x), to_tensor(data.encoder.labels(table))]))
        _report_unseen(unseen, len(data.eval), "evaluation rows")
        return tuple(sets)

    def build_loader_options(self, config: dict, split: str) -> dict:
        loader = dict((config.get("Train" if split == "train" else "Eval") or {}).get("loader") or {})
        return {
            "batch_size": int(loader.get("batch_size", 512)),
            "shuffle": bool(loader.get("shuffle", split == "train")),
            "drop_last": bool(loader.get("drop_last", False)),
            "num_workers": int(loader.get("num_workers", 0)),
        }

    def eval_samples(self, config: dict):
        """``(feature row dict, 0/1 label)`` per evaluation row, raw as a client would send it."""
        data = prepare(config)
        columns = data.encoder.spec.columns
        labels = data.encoder.labels(data.eval).reshape(-1)
        for i in range(len(data.eval)):
            yield {c: _plain(data.eval[c][i]) for c in columns}, np.asarray([labels[i]], np.float32)

    # ----- export and serving -----------------------------------------------------------
    def input_spec(self, config: dict) -> list:
        spec = parse_features(features_section(config))
        return [InputSpec([None, spec.width], "float32", "features")]

    def preprocess_config(self, config: dict) -> dict:
        return {"task": self.name, "encoder": prepare(config).encoder.to_dict()}

    def postprocess_config(self, config: dict) -> dict:
        return {"task": self.name, "threshold": 0.5}

    def expand_inputs(self, paths: Sequence[Any]) -> list[tuple[str, dict]]:
        """``(name, row)`` for every feature row of ``.csv``/``.jsonl``/``.json`` files, in order, named
        ``file:row`` (1-based): a caller that predicts row by row gets one prediction per row."""
        return [(f"{path}:{n}", row) for path in paths for n, row in enumerate(read_rows(path), start=1)]

    def preprocess(self, pre: dict, raw_inputs: Sequence[Any]) -> list[np.ndarray]:
        """Feature rows (dicts, or ``.json`` files of one row object) -> ``[x]``; ids never seen in
        training take the cold-start row 0 and are counted in a warning."""
        encoder = FeatureEncoder.from_dict(pre.get("encoder"))
        rows = [raw if isinstance(raw, Mapping) else _one_row(raw) for raw in raw_inputs]
        x, unseen = encoder.encode(rows_table(rows, encoder.spec.columns, encoder.spec.multi_valued))
        _report_unseen(unseen, len(rows), "rows")
        return [x]

    def postprocess(self, post: dict, outputs: Sequence[np.ndarray]) -> list[dict]:
        """Per row the click probability (``score``) and ``label`` 1/0 at ``threshold``."""
        if not outputs:
            raise DataError("a CTR model gave no outputs; export it with `paddlectl export`")
        threshold = float(post.get("threshold", 0.5))
        return [{"score": float(p), "label": int(p >= threshold)} for p in np.asarray(outputs[0]).reshape(-1)]


def _one_row(path) -> dict:
    rows = read_rows(path)
    if len(rows) != 1:
        raise DataError(
            f"{Path(path).name} holds {len(rows)} rows where one input is one row; send one row per input "
            "(`paddlectl predict` reads files of many rows row by row)"
        )
    return rows[0]


def _plain(value):
    """A numpy scalar, or a multi-valued cell's tuple, as the Python value JSON would carry."""
    if isinstance(value, (tuple, list, np.ndarray)):
        return [_plain(v) for v in value]
    return value.item() if isinstance(value, np.generic) else value


def _report_unseen(unseen: dict[str, int], total: int, what: str) -> None:
    """One warning per batch that met ids unseen in training (the cold-start fallback is visible)."""
    if unseen:
        counts = ", ".join(f"{n} {name}" for name, n in unseen.items())
        log.warning("rec.ctr: %s of %d %s unseen in training; scored with the cold-start row 0", counts, total, what)
