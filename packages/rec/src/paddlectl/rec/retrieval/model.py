"""The two-tower retrieval model (DSSM): a user tower and an item tower meeting in a cosine.

Each tower embeds its features (ids and categories; genres as the mean of their embeddings), runs
an optional MLP and L2-normalises, so a score is a cosine divided by a temperature. Training sees a
batch of (user, item) positives and scores every user against every item of the batch (in-batch
negatives, ``loss.InBatchSoftmax``). In evaluation and serving the model scores each user against
the whole catalogue, with items the user rated in training and the reserved unseen-item row pushed
to ``EXCLUDED``; a cold-start user (row 0) gets the items' log-popularity instead, the stated
fallback (most popular items), flagged in the reserved column (``COLD_START_FLAG``).
"""

from __future__ import annotations

import numpy as np

import paddlectl.framework as paddle
import paddlectl.framework.nn.functional as F
from paddlectl.framework import nn

from ..errors import ConfigError
from .data import RetrievalData

__all__ = ["COLD_START_FLAG", "EXCLUDED", "TwoTower"]

EXCLUDED = -1.0e9
"""Score of an item that must not be retrieved (rated in training; the reserved row 0)."""
COLD_START_FLAG = 1.0
"""Column 0's score for a cold-start user (``EXCLUDED`` otherwise): serving counts the fallback."""


def _mlp(in_dim: int, layers: list[int]) -> tuple[nn.Layer | None, int]:
    if not layers:
        return None, in_dim
    blocks: list[nn.Layer] = []
    for n, width in enumerate(layers):
        blocks.append(nn.Linear(in_dim, width))
        if n < len(layers) - 1:
            blocks.append(nn.ReLU())
        in_dim = width
    return nn.Sequential(*blocks), in_dim


class TwoTower(nn.Layer):
    """DSSM with ``user_features``/``item_features`` chosen from the data's columns.

    ``logq_correction`` subtracts each in-batch item's log training frequency from its logits
    (Yi et al. 2019): a popular item is a negative in many batches, and without the correction the
    model learns to rank it below what its probability for the user warrants.

    ``tower_layers: []`` with id features only is the plain two-tower (matrix factorisation
    trained with a sampled softmax); with side features and an MLP it is DSSM.
    """

    USER_FEATURES = ("user_id", "gender", "age", "occupation")
    ITEM_FEATURES = ("item_id", "genres", "year")

    def __init__(
        self,
        data: RetrievalData,
        embedding_dim: int = 32,
        tower_layers: list[int] | None = None,
        temperature: float = 0.05,
        user_features: list[str] | None = None,
        item_features: list[str] | None = None,
        logq_correction: bool = True,
    ) -> None:
        super().__init__()
        if not isinstance(embedding_dim, int) or embedding_dim < 1:
            raise ConfigError(f"Architecture.embedding_dim is {embedding_dim!r}; give a positive integer")
        if not isinstance(temperature, int | float) or not 0 < temperature <= 10:
            raise ConfigError(f"Architecture.temperature is {temperature!r}; give a number in (0, 10]")
        layers = list(tower_layers or [])
        if not all(isinstance(w, int) and w > 0 for w in layers):
            raise ConfigError(f"Architecture.tower_layers is {tower_layers!r}; give a list of positive widths")
        self.user_features = self._features(user_features, self.USER_FEATURES, "user")
        self.item_features = self._features(item_features, self.ITEM_FEATURES, "item")
        self.temperature = float(temperature)
        self.logq_correction = bool(logq_correction)
        d = embedding_dim
        self.user_id = nn.Embedding(data.users.size, d)
        self.item_id = nn.Embedding(data.items.size, d)
        sizes = dict(zip(("gender", "age", "occupation"), data.user_feature_sizes, strict=True))
        self.user_side = nn.LayerList([nn.Embedding(sizes[f], d) for f in self.user_features[1:]])
        self.genre = (
            nn.Linear(data.item_genres.shape[1], d, bias_attr=False) if "genres" in self.item_features else None
        )
        self.year = nn.Embedding(int(data.item_year.max()) + 1, d) if "year" in self.item_features else None
        self.user_mlp, _ = _mlp(d * len(self.user_features), layers)
        self.item_mlp, _ = _mlp(d * len(self.item_features), layers)
        columns = [("gender", "age", "occupation").index(f) for f in self.user_features[1:]]
        genres = data.item_genres / np.maximum(data.item_genres.sum(axis=1, keepdims=True), 1.0)
        log_pop = np.log(data.popularity + 1.0) - np.log(data.popularity.sum() + len(data.popularity))
        exclusion = data.history.copy()
        exclusion[:, 0] = True
        # non-persistable: rebuilt from the data by build_model, traced into the exported program
        for name, value in (
            ("user_table", np.ascontiguousarray(data.user_features[:, columns])),
            ("item_rows", np.arange(data.items.size, dtype=np.int64)),
            ("item_genres", genres.astype(np.float32)),
            ("item_year", data.item_year),
            ("log_popularity", log_pop.astype(np.float32)),
            ("exclusion", exclusion),
        ):
            self.register_buffer(name, paddle.to_tensor(value), persistable=False)

    @staticmethod
    def _features(chosen, known: tuple[str, ...], side: str) -> list[str]:
        chosen = list(chosen or [known[0]])
        unknown = [f for f in chosen if f not in known]
        if unknown or not chosen or chosen[0] != known[0]:
            raise ConfigError(
                f"Architecture.{side}_features is {chosen!r}; start with {known[0]!r} and choose from {', '.join(known)}"
            )
        return chosen

    def encode_users(self, users):
        """``[n, d]`` unit vectors for user rows."""
        parts = [self.user_id(users)]
        if len(self.user_side):
            side = paddle.gather(self.user_table, users)
            parts += [embed(side[:, n]) for n, embed in enumerate(self.user_side)]
        return self._tower(parts, self.user_mlp)

    def encode_items(self, items):
        """``[n, d]`` unit vectors for item rows."""
        parts = [self.item_id(items)]
        if self.genre is not None:
            parts.append(self.genre(paddle.gather(self.item_genres, items)))
        if self.year is not None:
            parts.append(self.year(paddle.gather(self.item_year, items)))
        return self._tower(parts, self.item_mlp)

    @staticmethod
    def _tower(parts, mlp):
        x = paddle.concat(parts, axis=-1) if len(parts) > 1 else parts[0]
        return F.normalize(mlp(x) if mlp is not None else x, axis=-1)

    def forward(self, x):
        """Training: ``x`` [B, 2] (user row, item row) -> [B, B] in-batch logits.
        Evaluation/serving: ``x`` [N] user rows -> [N, item rows] catalogue scores."""
        if self.training:
            users, items = self.encode_users(x[:, 0]), self.encode_items(x[:, 1])
            logits = paddle.matmul(users, items, transpose_y=True) / self.temperature
            if self.logq_correction:  # in-batch negatives come by popularity: remove that bias (logQ)
                logits = logits - paddle.gather(self.log_popularity, x[:, 1]).unsqueeze(0)
            return logits
        scores = paddle.matmul(self.encode_users(x), self.encode_items(self.item_rows), transpose_y=True)
        scores = scores / self.temperature
        cold = (x == 0).unsqueeze(-1)
        scores = paddle.where(cold, self.log_popularity.unsqueeze(0) + paddle.zeros_like(scores), scores)
        excluded = paddle.gather(self.exclusion, x)
        flag = paddle.where(cold, paddle.full_like(scores, COLD_START_FLAG), paddle.full_like(scores, EXCLUDED))
        scores = paddle.where(excluded, paddle.full_like(scores, EXCLUDED), scores)
        return paddle.concat([flag[:, :1], scores[:, 1:]], axis=1)
