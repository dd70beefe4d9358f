"""Feature lists (the config's ``Train.dataset.features``) and the encoder fitted on the training split.

A sparse feature is either raw values mapped through a ``Vocab`` (row 0 for values unseen in
training: the cold-start fallback, counted) or, with ``num_embeddings``, integer ids the data
already holds (PaddleRec's slot ids), which must lie in ``[0, num_embeddings)``. Dense features are
standardised with the training split's mean and deviation. The fitted encoder is JSON-able and is
stored in the exported model, so serving encodes rows exactly as training did.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from paddlectl.framework.hapi.builders import check_keys, require_mapping

from ..errors import ConfigError, FeatureError
from ..table import Table
from ..vocab import Vocab

MAX_ROWS = 2**24  # float32 holds every integer below this exactly: the largest table one input addresses


@dataclass(frozen=True)
class Sparse:
    name: str
    num_embeddings: int | None = None  # None: raw values through a vocabulary


@dataclass(frozen=True)
class Label:
    """``name`` is the target column; ``threshold`` makes a number binary (rating >= 4), ``positive``
    a string (income == '>50K'); neither: the column already holds 0/1."""

    name: str
    threshold: float | None = None
    positive: str | None = None


@dataclass(frozen=True)
class FeatureSpec:
    sparse: tuple[Sparse, ...]
    dense: tuple[str, ...]
    label: Label

    @property
    def columns(self) -> list[str]:
        return [f.name for f in self.sparse] + list(self.dense)


def _sparse(item, where: str) -> Sparse:
    if isinstance(item, str):
        return Sparse(item)
    require_mapping(item, where)
    check_keys(item, where, ("name", "num_embeddings"))
    size = item.get("num_embeddings")
    if not isinstance(item.get("name"), str) or (
        size is not None and (not isinstance(size, int) or isinstance(size, bool) or not 0 < size < MAX_ROWS)
    ):
        raise ConfigError(f"{where} needs name: COLUMN and optionally num_embeddings: an int in [1, {MAX_ROWS})")
    return Sparse(item["name"], size)


def parse_features(section) -> FeatureSpec:
    """``{sparse: [col | {name, num_embeddings}], dense: [col], label: {...}}`` (``Train.dataset.features``)."""
    require_mapping(section, "Train.dataset.features")
    check_keys(section, "Train.dataset.features", ("sparse", "dense", "label"))
    sparse, dense, label = section.get("sparse") or [], section.get("dense") or [], section.get("label")
    if not isinstance(sparse, list) or not isinstance(dense, list) or not sparse:
        raise ConfigError(
            "Train.dataset.features.sparse must be a non-empty list of columns and dense a list of columns"
        )
    if not all(isinstance(d, str) for d in dense):
        raise ConfigError(f"Train.dataset.features.dense must list column names; got {dense!r}")
    require_mapping(label, "Train.dataset.features.label")
    check_keys(label, "Train.dataset.features.label", ("name", "threshold", "positive"))
    if not isinstance(label.get("name"), str):
        raise ConfigError(
            "Train.dataset.features.label needs name: the target column (with threshold: or positive: to binarise it)"
        )
    spec = FeatureSpec(
        tuple(_sparse(s, f"Train.dataset.features.sparse[{i}]") for i, s in enumerate(sparse)),
        tuple(dense),
        Label(label["name"], label.get("threshold"), label.get("positive")),
    )
    seen = spec.columns + [spec.label.name]
    duplicate = next((c for c in seen if seen.count(c) > 1), None)
    if duplicate:
        raise ConfigError(
            f"Train.dataset.features lists column {duplicate!r} twice (a feature cannot also be the label)"
        )
    return spec


def _floats(table: Table, name: str) -> np.ndarray:
    column = table[name]
    try:
        values = np.asarray(column, dtype=np.float64)
    except (TypeError, ValueError):
        raise FeatureError(f"column {name!r} holds a value that is not a number") from None
    bad = np.flatnonzero(~np.isfinite(values))
    if bad.size:
        raise FeatureError(f"column {name!r} has {bad.size} NaN or infinite value(s) (first at row {bad[0] + 1})")
    return values


def check_values(spec: FeatureSpec, table: Table) -> None:
    """Refuse NaN or non-numeric dense and numeric-label values in a whole table, before it is split,
    so the row an error names is the data's own row (1-based, a CSV header not counted)."""
    numeric_label = [spec.label.name] if spec.label.positive is None else []
    for name in [*spec.dense, *numeric_label]:
        _floats(table, name)


class FeatureEncoder:
    """Rows of a ``Table`` -> the models' ``[N, S + D]`` float32 input; fitted on training rows."""

    def __init__(self, spec: FeatureSpec, vocabs: dict[str, Vocab], mean: list[float], std: list[float]) -> None:
        self.spec, self.vocabs, self.mean, self.std = spec, vocabs, np.asarray(mean), np.asarray(std)

    @classmethod
    def fit(cls, spec: FeatureSpec, table: Table) -> FeatureEncoder:
        vocabs = {f.name: Vocab(table[f.name]) for f in spec.sparse if f.num_embeddings is None}
        dense = [_floats(table, name) for name in spec.dense]
        std = [float(d.std()) or 1.0 for d in dense]
        encoder = cls(spec, vocabs, [float(d.mean()) for d in dense], std)
        if sum(encoder.field_sizes) >= MAX_ROWS:
            raise ConfigError(f"the sparse features need {sum(encoder.field_sizes)} embedding rows; at most {MAX_ROWS}")
        return encoder

    @property
    def field_sizes(self) -> list[int]:
        return [f.num_embeddings or self.vocabs[f.name].size for f in self.spec.sparse]

    def encode(self, table: Table) -> tuple[np.ndarray, dict[str, int]]:
        """``(x [N, S + D] float32, {feature: rows whose value was unseen in training})``."""
        columns, unseen = [], {}
        for feature in self.spec.sparse:
            if feature.num_embeddings is None:
                rows, unseen[feature.name] = self.vocabs[feature.name].encode(table[feature.name])
            else:
                rows = self._indices(table, feature)
            columns.append(rows.astype(np.float64))
        for name, mean, std in zip(self.spec.dense, self.mean, self.std, strict=True):
            columns.append((_floats(table, name) - mean) / std)
        return np.stack(columns, axis=1).astype(np.float32), {k: v for k, v in unseen.items() if v}

    @staticmethod
    def _indices(table: Table, feature: Sparse) -> np.ndarray:
        values = _floats(table, feature.name)
        outside = np.flatnonzero((values < 0) | (values >= feature.num_embeddings) | (values != np.round(values)))
        if outside.size:
            raise FeatureError(
                f"feature {feature.name!r}: index {values[outside[0]]:g} (row {outside[0] + 1}) is out of range "
                f"[0, {feature.num_embeddings}); its embedding table has {feature.num_embeddings} rows"
            )
        return values.astype(np.int64)

    def labels(self, table: Table) -> np.ndarray:
        """The binary target ``[N, 1]`` float32."""
        label = self.spec.label
        if label.positive is not None:
            return (table[label.name].astype(str) == str(label.positive)).astype(np.float32).reshape(-1, 1)
        values = _floats(table, label.name)
        if label.threshold is not None:
            return (values >= float(label.threshold)).astype(np.float32).reshape(-1, 1)
        if not np.isin(values, (0.0, 1.0)).all():
            raise FeatureError(
                f"label {label.name!r} must hold 0/1; set Train.dataset.features.label.threshold or positive"
            )
        return values.astype(np.float32).reshape(-1, 1)

    def to_dict(self) -> dict:
        return {
            "sparse": [{"name": f.name, "num_embeddings": f.num_embeddings} for f in self.spec.sparse],
            "dense": list(self.spec.dense),
            "label": vars(self.spec.label),
            "vocabs": {name: vocab.to_list() for name, vocab in self.vocabs.items()},
            "mean": self.mean.tolist(),
            "std": self.std.tolist(),
        }

    @classmethod
    def from_dict(cls, data) -> FeatureEncoder:
        """The encoder an exported model stores (its metadata is checked, not trusted)."""
        try:
            spec = parse_features({k: data[k] for k in ("sparse", "dense", "label")})
            vocabs = {name: Vocab.from_list(values) for name, values in data["vocabs"].items()}
            mean, std = [float(v) for v in data["mean"]], [float(v) for v in data["std"]]
        except (KeyError, TypeError, ValueError, AttributeError) as exc:
            raise FeatureError(f"the model's stored feature encoder is malformed ({exc}); re-export it") from None
        needed = {f.name for f in spec.sparse if f.num_embeddings is None}
        if set(vocabs) != needed or len(mean) != len(spec.dense) or len(std) != len(spec.dense):
            raise FeatureError("the model's stored feature encoder does not match its feature lists; re-export it")
        return cls(spec, vocabs, mean, std)
