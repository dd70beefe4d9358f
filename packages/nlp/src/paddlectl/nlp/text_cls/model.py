"""Sentence classifiers over character ids (0 = padding): a CNN (Kim, 2014) and a fastText-style
bag of character n-grams (Joulin et al., 2016) trained from scratch, and a BERT-architecture encoder
(``paddlectl.nlp.encoder``) with a linear head."""

from __future__ import annotations

from collections.abc import Sequence

import paddlectl.framework as paddle
from paddlectl.framework import nn
from paddlectl.framework.errors import CheckpointError, ConfigError
from paddlectl.framework.nn import functional as F
from paddlectl.framework.ops.hashing import hash as hash_rows

from ..checkpoint import load_pretrained
from ..encoder import BertConfig, BertModel
from .pretrained import checkpoint_dir


class CharCNN(nn.Layer):
    """Embeddings, parallel 1-D convolutions of several widths, max over time, dropout, linear."""

    def __init__(
        self,
        vocab_size: int,
        num_classes: int,
        embed_dim: int = 128,
        num_filters: int = 128,
        kernel_sizes: Sequence[int] = (2, 3, 4),
        dropout: float = 0.3,
    ) -> None:
        super().__init__()
        if not kernel_sizes or any(isinstance(k, bool) or not isinstance(k, int) or k < 1 for k in kernel_sizes):
            raise ConfigError(f"CharCNN.kernel_sizes must be positive integers, got {kernel_sizes!r}")
        self.embedding = nn.Embedding(vocab_size, embed_dim, padding_idx=0)
        self.convs = nn.LayerList([nn.Conv1D(embed_dim, num_filters, k, padding=k // 2) for k in kernel_sizes])
        self.dropout = nn.Dropout(dropout)
        self.fc = nn.Linear(num_filters * len(kernel_sizes), num_classes)

    def forward(self, input_ids):
        x = self.embedding(input_ids).transpose([0, 2, 1])
        pooled = [F.relu(conv(x)).max(axis=2) for conv in self.convs]
        return self.fc(self.dropout(paddle.concat(pooled, axis=1)))


class FastText(nn.Layer):
    """The pooled embeddings of a text's characters and of its character n-grams up to
    ``max_ngram``, dropout, linear (Joulin et al., 2016): the features the TF-IDF + logistic
    regression baseline sees, with shared low-rank weights. An n-gram is its row of character ids
    hashed (the framework's ``hash``, XXH64) into ``buckets`` rows after the characters' own, so
    n-grams are formed inside the model and it serves the character ids the task's table gives, like
    the CNN. Windows that reach into the padding are left out. ``pooling``: the sum over the count of
    features (``mean``), or over its square root (``sqrtn``: a long text's bag weighs more, as an
    L2-normalised term-frequency vector does). ``hidden`` > 0 puts a ReLU layer of that width (and
    the dropout) between the bag and the linear layer: with two classes the bag alone is a linear
    model of the n-gram counts, as the baseline's, and the layer lets n-grams interact.

    ``weighting`` (``idf`` or ``nb``) scales each feature's embedding by a fixed weight per row, a
    buffer the task computes from the training texts (``text_cls/weights.py``) and the checkpoint and
    the exported model carry: the inverse document frequency the TF-IDF baseline weighs by, or the
    naive-Bayes log-count ratio of NBSVM (Wang & Manning, 2012). The pooling then divides by the
    weights' sum (``mean``) or root sum of squares (``sqrtn``) instead of the count. Rows fewer than
    ``min_df`` training texts hold weigh 0 (the baseline's vectoriser drops them). ``binary`` counts
    each feature once per text (NBSVM's binarised counts; the baseline damps repeats with ``1 + log
    tf``), so a review that repeats a word is not that word's vote many times over."""

    WEIGHTINGS = ("idf", "nb")

    def __init__(
        self,
        vocab_size: int,
        num_classes: int,
        embed_dim: int = 64,
        max_ngram: int = 3,
        buckets: int = 200_000,
        dropout: float = 0.0,
        pooling: str = "mean",
        hidden: int = 0,
        weighting: str | None = None,
        min_df: int = 1,
        binary: bool = False,
    ) -> None:
        super().__init__()
        if weighting is not None and weighting not in self.WEIGHTINGS:
            raise ConfigError(f"FastText.weighting must be idf, nb or left out, got {weighting!r}")
        if pooling not in ("mean", "sqrtn"):
            raise ConfigError(f"FastText.pooling must be mean or sqrtn, got {pooling!r}")
        self.pooling = pooling
        sizes = (("embed_dim", embed_dim), ("max_ngram", max_ngram), ("buckets", buckets), ("min_df", min_df))
        for label, value in sizes:
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ConfigError(f"FastText.{label} must be a positive integer, got {value!r}")
        if min_df != 1 and weighting is None:
            raise ConfigError("FastText.min_df drops rows through the feature weights; set weighting (idf or nb) too")
        if not isinstance(binary, bool):
            raise ConfigError(f"FastText.binary must be true or false, got {binary!r}")
        if isinstance(hidden, bool) or not isinstance(hidden, int) or hidden < 0:
            raise ConfigError(f"FastText.hidden must be a width >= 0 (0: no hidden layer), got {hidden!r}")
        self.vocab_size, self.max_ngram, self.buckets = vocab_size, max_ngram, buckets
        rows = vocab_size + (buckets if max_ngram > 1 else 0)
        self.embedding = nn.Embedding(rows, embed_dim, padding_idx=0)
        self.weighting, self.min_df, self.binary = weighting, min_df, binary
        if weighting is not None:  # ones until the task sets the training texts' weights
            self.register_buffer("feature_weight", paddle.ones([rows], dtype="float32"))
        self.dropout = nn.Dropout(dropout)
        self.hidden = nn.Sequential(nn.Linear(embed_dim, hidden), nn.ReLU(), nn.Dropout(dropout)) if hidden else None
        self.fc = nn.Linear(hidden or embed_dim, num_classes)

    def ngram_ids(self, input_ids):
        """[batch, features]: the character ids, then each n-gram's bucket row (0 where the window
        ends in padding: padding only ever follows the text)."""
        length = input_ids.shape[1]
        features = [input_ids]
        for n in range(2, min(self.max_ngram, length) + 1):
            windows = paddle.stack([input_ids[:, i : length - n + 1 + i] for i in range(n)], axis=2)
            rows = hash_rows(windows.reshape([-1, n]), self.buckets).reshape([-1, length - n + 1])
            inside = (input_ids[:, n - 1 :] != 0).astype("int64")
            features.append((rows + self.vocab_size) * inside)
        return paddle.concat(features, axis=1)

    def forward(self, input_ids):
        ids = self.ngram_ids(input_ids)
        if self.binary:  # each feature once per text: a repeat, sorted next to its first copy, becomes padding
            ids = paddle.sort(ids, axis=1)
            repeat = (ids[:, 1:] == ids[:, :-1]).astype("int64")
            ids = paddle.concat([ids[:, :1], ids[:, 1:] * (1 - repeat)], axis=1)
        vectors = self.embedding(ids)  # the padding row is zero and stays so
        if self.weighting is None:
            weights = (ids != 0).astype("float32")
        else:
            weights = paddle.gather(self.feature_weight, ids.reshape([-1])).reshape([-1, ids.shape[1]])
            vectors = vectors * weights.unsqueeze(2)
        if self.pooling == "sqrtn":
            scale = (weights * weights).sum(axis=1, keepdim=True).sqrt()
        else:
            scale = weights.abs().sum(axis=1, keepdim=True)
        pooled = vectors.sum(axis=1) / scale.clip(min=1e-6)
        pooled = self.dropout(pooled)
        return self.fc(pooled if self.hidden is None else self.hidden(pooled))

    def set_feature_weights(self, weights) -> None:
        """The per-row weights of ``weighting`` (the padding row's is 0), one float per embedding row."""
        expected = [self.embedding.weight.shape[0]]
        if self.weighting is None or list(weights.shape) != expected:
            raise ConfigError(
                f"FastText takes feature weights only with weighting set, {expected[0]} of them; "
                f"got {list(weights.shape)} with weighting {self.weighting!r}"
            )
        self.feature_weight.set_value(weights.astype("float32"))


class EncoderClassifier(nn.Layer):
    """A BERT-architecture encoder, the pooled [CLS] state, dropout and a linear layer. With
    ``pretrained`` (a checkpoint directory, or ``all-MiniLM-L6-v2``) the encoder starts from that
    checkpoint and the task encodes text with its tokenizer (fine-tuning); without, ``BertConfig``'s
    fields size a new encoder over the task's characters (``vocab_size``)."""

    def __init__(
        self, vocab_size: int, num_classes: int, dropout: float = 0.1, pretrained: str | None = None, **encoder
    ) -> None:
        super().__init__()
        if pretrained is not None:
            if encoder:
                raise ConfigError(f"Architecture: {sorted(encoder)} size a new encoder; drop them with pretrained")
            self.encoder = load_pretrained(checkpoint_dir(pretrained))[0]
            self.encoder.train()
            config = self.encoder.config
        else:
            try:
                config = BertConfig(vocab_size=vocab_size, **encoder)
            except (TypeError, CheckpointError) as exc:
                raise ConfigError(f"Architecture (EncoderClassifier): {exc}") from None
            self.encoder = BertModel(config)
        self.dropout = nn.Dropout(dropout)
        self.fc = nn.Linear(config.hidden_size, num_classes)

    def forward(self, input_ids):
        _, pooled = self.encoder(input_ids)  # padding (id 0, the config's pad_token_id) is masked
        return self.fc(self.dropout(pooled))


MODELS = {"CharCNN": CharCNN, "FastText": FastText, "EncoderClassifier": EncoderClassifier}
