"""Feature lists (the config's ``Train.dataset.features``) and the encoder fitted on the training split.

A sparse feature is either raw values mapped through a ``Vocab`` (row 0 for values unseen in
training: the cold-start fallback, counted) or, with ``num_embeddings``, integer ids the data
already holds (PaddleRec's slot ids), which must lie in ``[0, num_embeddings)``. With ``max_len`` it
is multi-valued (PaddleRec's variable-length slots, DeepCTR's ``VarLenSparseFeat``): each row holds
a list of values (a film's genres, a user's earlier films), written as a list or a ``|``-separated
string; it takes ``max_len`` input slots, its last ``max_len`` values, ``PAD`` in the unused ones,
and the model pools its embeddings (``pooling``: mean or sum) into one field. Dense features are
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
MAX_LEN = 1024  # input slots one multi-valued feature may take
PAD = -1  # an unused slot of a multi-valued feature (the models mask it); never an embedding row
POOLING = ("mean", "sum")


@dataclass(frozen=True)
class Sparse:
    name: str
    num_embeddings: int | None = None  # None: raw values through a vocabulary
    max_len: int | None = None  # None: one value a row; else a list of values, pooled
    pooling: str = "mean"

    @property
    def slots(self) -> int:
        """Input columns the feature takes."""
        return self.max_len or 1


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

    @property
    def width(self) -> int:
        """Columns of the models' input matrix: every sparse feature's slots, then the dense values."""
        return sum(f.slots for f in self.sparse) + len(self.dense)

    @property
    def multi_valued(self) -> list[str]:
        return [f.name for f in self.sparse if f.max_len]

    @property
    def field_lengths(self) -> list[int]:
        """Input slots per sparse feature (1, or a multi-valued feature's ``max_len``)."""
        return [f.slots for f in self.sparse]

    @property
    def pooling(self) -> list[str | None]:
        """Per sparse feature its pooling, None for a one-value feature (the models' ``pooling``)."""
        return [f.pooling if f.max_len else None for f in self.sparse]


def _sparse(item, where: str) -> Sparse:
    if isinstance(item, str):
        return Sparse(item)
    require_mapping(item, where)
    check_keys(item, where, ("name", "num_embeddings", "max_len", "pooling"))
    size, length = item.get("num_embeddings"), item.get("max_len")
    if not isinstance(item.get("name"), str) or not _int_in(size, MAX_ROWS) or not _int_in(length, MAX_LEN + 1):
        raise ConfigError(
            f"{where} needs name: COLUMN and optionally num_embeddings: an int in [1, {MAX_ROWS}) and "
            f"max_len: an int in [1, {MAX_LEN}] (a multi-valued column)"
        )
    pooling = item.get("pooling", "mean")
    if pooling not in POOLING or ("pooling" in item and length is None):
        raise ConfigError(f"{where}.pooling is {pooling!r}; give mean or sum, with max_len (a multi-valued column)")
    return Sparse(item["name"], size, length, pooling)


def _int_in(value, stop: int) -> bool:
    """None (not given) or an int in ``[1, stop)``."""
    return value is None or (isinstance(value, int) and not isinstance(value, bool) and 0 < value < stop)


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
    return _numbers(table[name], name)


def _numbers(values, name: str) -> np.ndarray:
    try:
        values = np.asarray(values, dtype=np.float64)
    except (TypeError, ValueError):
        raise FeatureError(f"column {name!r} holds a value that is not a number") from None
    bad = np.flatnonzero(~np.isfinite(values))
    if bad.size:
        raise FeatureError(f"column {name!r} has {bad.size} NaN or infinite value(s) (first at row {bad[0] + 1})")
    return values


def value_lists(column) -> list[list]:
    """Each row's values of a multi-valued column: a list, tuple or array as it is, a string split
    on ``|`` (how a CSV cell carries a list; ``""`` is an empty list), any other value as one value."""
    lists = []
    for value in column:
        if isinstance(value, str):
            lists.append([v for v in value.split("|") if v])
        elif isinstance(value, (list, tuple, np.ndarray)):
            lists.append(list(value))
        else:
            lists.append([value])
    return lists


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
        vocabs = {
            f.name: Vocab(_flat(value_lists(table[f.name])) if f.max_len else table[f.name])
            for f in spec.sparse
            if f.num_embeddings is None
        }
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
        """``(x [N, width] float32, {feature: values unseen in training})``: each sparse feature's
        rows (a multi-valued one's in ``max_len`` slots, ``PAD`` after its values), then dense."""
        columns, unseen = [], {}
        for feature in self.spec.sparse:
            if feature.max_len:
                rows, unseen[feature.name] = self._multi(table, feature)
            else:
                rows, unseen[feature.name] = self._rows(feature, table[feature.name])
                rows = rows.reshape(-1, 1)
            columns.append(rows.astype(np.float64))
        for name, mean, std in zip(self.spec.dense, self.mean, self.std, strict=True):
            columns.append(((_floats(table, name) - mean) / std).reshape(-1, 1))
        return np.concatenate(columns, axis=1).astype(np.float32), {k: v for k, v in unseen.items() if v}

    def _rows(self, feature: Sparse, values) -> tuple[np.ndarray, int]:
        """Embedding rows of raw values (vocabulary) or of ids (range-checked), and the unseen count."""
        if feature.num_embeddings is None:
            return self.vocabs[feature.name].encode(values)
        return self._indices(_numbers(values, feature.name), feature), 0

    def _multi(self, table: Table, feature: Sparse) -> tuple[np.ndarray, int]:
        """``[N, max_len]`` rows of each row's last ``max_len`` values, left-aligned, ``PAD`` after."""
        lists = [values[max(len(values) - feature.max_len, 0) :] for values in value_lists(table[feature.name])]
        lengths = np.asarray([len(values) for values in lists], np.int64)
        flat = _flat(lists)
        rows, unseen = self._rows(feature, flat) if len(flat) else (np.zeros(0, np.int64), 0)
        out = np.full((len(lists), feature.max_len), PAD, np.int64)
        out[np.arange(feature.max_len) < lengths[:, None]] = rows  # row-major: each row's values in order
        return out, unseen

    @staticmethod
    def _indices(values: np.ndarray, feature: Sparse) -> np.ndarray:
        outside = np.flatnonzero((values < 0) | (values >= feature.num_embeddings) | (values != np.round(values)))
        if outside.size:
            raise FeatureError(
                f"feature {feature.name!r}: index {values[outside[0]]:g} (row {outside[0] + 1}) is out of range "
                f"[0, {feature.num_embeddings}); its embedding table has {feature.num_embeddings} rows"
            )
        return values.astype(np.int64)

    def labels(self, table: Table) -> np.ndarray:
        """The binary target ``[N, 1]`` float32."""
        return binary_labels(self.spec.label, table)

    def to_dict(self) -> dict:
        return {
            "sparse": [_sparse_dict(f) for f in self.spec.sparse],
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


def _flat(lists: list[list]) -> np.ndarray:
    flat = np.empty(sum(len(values) for values in lists), dtype=object)
    flat[:] = [value for values in lists for value in values]
    return flat


def _sparse_dict(feature: Sparse) -> dict:
    """A sparse feature as the config writes it (a multi-valued one with its max_len and pooling)."""
    extra = {"max_len": feature.max_len, "pooling": feature.pooling} if feature.max_len else {}
    return {"name": feature.name, "num_embeddings": feature.num_embeddings, **extra}


def binary_labels(label: Label, table: Table) -> np.ndarray:
    """``label``'s column of ``table`` as the binary target ``[N, 1]`` float32."""
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
