"""Candidate retrieval: exact top-k over item vectors, and an approximate HNSW index (hnswlib).

A two-tower model scores a user against items by an inner product, so retrieval is a maximum
inner-product search. Exact search is one matrix product and is the reference; ``ItemIndex`` is
hnswlib's HNSW graph (inner-product space) for catalogues too large for that, and ``index_recall``
says how much of the exact top-k it finds. Items a user has already rated are excluded from both.

On disk an index is its item vectors (safetensors) and a JSON manifest with the HNSW parameters,
*not* hnswlib's own binary file: that format is a raw memory image read by C++ without bounds
checks, so a hostile file could crash the process. The graph is rebuilt at load with one thread
and a fixed seed, which makes it the same graph every time.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np

from .errors import DataError
from .ranking import top_k

__all__ = ["HnswParams", "ItemIndex", "exact_top_k", "index_recall", "load_item_index", "save_item_index"]

VECTORS_FILE = "items.safetensors"
MANIFEST_FILE = "item_index.json"
FORMAT = "paddlectl.rec.item_index"
VERSION = 1
MAX_MANIFEST_BYTES = 64 * 1024
MAX_ITEMS = 50_000_000
MAX_DIM = 4096
MAX_HEADER_BYTES = 4096  # a one-tensor safetensors header is ~100 bytes


@dataclass(frozen=True)
class HnswParams:
    """hnswlib's build and search parameters (``M`` links per node, ``ef_construction`` and ``ef``
    candidate-list sizes at build and query time; larger is slower and more exact)."""

    M: int = 16  # noqa: N815 - hnswlib's name
    ef_construction: int = 200
    ef: int = 100
    seed: int = 0

    def __post_init__(self) -> None:
        for name, low, high in (("M", 2, 128), ("ef_construction", 8, 4096), ("ef", 1, 4096), ("seed", 0, 2**31)):
            value = getattr(self, name)
            if not isinstance(value, int) or isinstance(value, bool) or not low <= value <= high:
                raise DataError(f"HNSW parameter {name} is {value!r}; give an integer in [{low}, {high}]")


def _vectors(vectors, what: str) -> np.ndarray:
    vectors = np.asarray(vectors)
    if vectors.ndim != 2 or vectors.shape[0] == 0 or vectors.shape[1] == 0:
        raise DataError(f"{what} must be a non-empty [count, dim] array; got shape {vectors.shape}")
    if not np.issubdtype(vectors.dtype, np.floating) or not np.isfinite(vectors).all():
        raise DataError(f"{what} must be finite floating-point numbers")
    return np.ascontiguousarray(vectors, np.float32)


def _excluded_rows(exclude, shape: tuple[int, int]) -> np.ndarray | None:
    if exclude is None:
        return None
    exclude = np.asarray(exclude, bool)
    if exclude.shape != shape:
        raise DataError(f"the exclusion mask has shape {exclude.shape}; it must be [queries, items] = {shape}")
    return exclude


def exact_top_k(queries, items, k: int, exclude=None) -> tuple[np.ndarray, np.ndarray]:
    """``(indices, scores)``: each query's ``k`` best items by inner product, best first (-1 and
    -inf where fewer than ``k`` are left after ``exclude``, a [queries, items] boolean mask)."""
    queries, items = _vectors(queries, "query vectors"), _vectors(items, "item vectors")
    if queries.shape[1] != items.shape[1]:
        raise DataError(f"query vectors have dim {queries.shape[1]}, item vectors {items.shape[1]}")
    scores = queries @ items.T
    indices = top_k(scores, k, _excluded_rows(exclude, scores.shape))
    found = np.take_along_axis(scores, np.maximum(indices, 0), axis=1)
    return indices, np.where(indices >= 0, found, -np.inf).astype(np.float32)


class ItemIndex:
    """An HNSW graph over item vectors in hnswlib's inner-product space, built on one thread."""

    def __init__(self, vectors, params: HnswParams | None = None) -> None:
        import hnswlib

        self.vectors = _vectors(vectors, "item vectors")
        self.params = params or HnswParams()
        count, dim = self.vectors.shape
        index = hnswlib.Index(space="ip", dim=dim)
        index.init_index(
            max_elements=count, ef_construction=self.params.ef_construction, M=self.params.M,
            random_seed=self.params.seed,
        )  # fmt: skip
        index.set_num_threads(1)  # one thread: insertion order, and so the graph, is reproducible
        index.add_items(self.vectors, np.arange(count))
        index.set_ef(max(self.params.ef, 1))
        self._index = index

    @property
    def count(self) -> int:
        return self.vectors.shape[0]

    def query(self, queries, k: int, exclude=None) -> tuple[np.ndarray, np.ndarray]:
        """Like ``exact_top_k`` but through the graph: each row asks for ``k`` plus the number of
        items it excludes, then drops those, so exclusions never leave a row short when the graph
        finds enough candidates."""
        queries = _vectors(queries, "query vectors")
        if queries.shape[1] != self.vectors.shape[1]:
            raise DataError(f"query vectors have dim {queries.shape[1]}, the index {self.vectors.shape[1]}")
        if not isinstance(k, int | np.integer) or k < 1:
            raise DataError(f"k must be a positive integer; got {k!r}")
        exclude = _excluded_rows(exclude, (queries.shape[0], self.count))
        indices = np.full((queries.shape[0], k), -1, np.int64)
        scores = np.full((queries.shape[0], k), -np.inf, np.float32)
        for row, query in enumerate(queries):
            skip = exclude[row] if exclude is not None else None
            ask = min(self.count, k + (int(skip.sum()) if skip is not None else 0))
            self._index.set_ef(max(self.params.ef, ask))
            labels, distances = self._index.knn_query(query[None], k=ask)
            labels, similarity = labels[0].astype(np.int64), 1.0 - distances[0]  # ip distance is 1 - <q, v>
            if skip is not None:
                keep = ~skip[labels]
                labels, similarity = labels[keep], similarity[keep]
            indices[row, : min(k, labels.size)] = labels[:k]
            scores[row, : min(k, labels.size)] = similarity[:k]
        return indices, scores


def index_recall(approximate: np.ndarray, exact: np.ndarray) -> float:
    """The share of the exact top-k that the approximate search also returned (recall@k of the index)."""
    approximate, exact = np.asarray(approximate), np.asarray(exact)
    if approximate.shape != exact.shape:
        raise DataError(f"approximate {approximate.shape} and exact {exact.shape} results must match in shape")
    wanted = exact >= 0
    if not wanted.any():
        raise DataError("the exact results hold no item; nothing to measure the index against")
    found = ((approximate[:, :, None] == exact[:, None, :]) & wanted[:, None, :]).any(axis=1)
    return float(found.sum() / wanted.sum())


# ----- files ------------------------------------------------------------------------------------
def save_item_index(directory, vectors, params: HnswParams) -> Path:
    """Write the item vectors and the HNSW parameters into ``directory`` (which must exist)."""
    from safetensors.numpy import save_file

    vectors = _vectors(vectors, "item vectors")
    directory = Path(directory)
    save_file({"vectors": vectors}, str(directory / VECTORS_FILE))
    digest = hashlib.sha256((directory / VECTORS_FILE).read_bytes()).hexdigest()
    manifest = {
        "format": FORMAT, "version": VERSION, "count": int(vectors.shape[0]), "dim": int(vectors.shape[1]),
        "space": "ip", "hnsw": asdict(params), "sha256": digest,
    }  # fmt: skip
    (directory / MANIFEST_FILE).write_text(json.dumps(manifest, indent=1), encoding="utf-8")
    return directory / MANIFEST_FILE


def _manifest(path: Path) -> dict:
    bad = f"{path} is not a paddlectl item index manifest"
    if not path.is_file():
        raise DataError(f"{path} is missing; export the retrieval model again")
    if path.stat().st_size > MAX_MANIFEST_BYTES:
        raise DataError(f"{bad}: {path.stat().st_size} bytes, more than {MAX_MANIFEST_BYTES}")
    try:
        manifest = json.loads(path.read_text(encoding="utf-8"))
    except (UnicodeDecodeError, ValueError) as exc:
        raise DataError(f"{bad}: {exc}") from None
    if not isinstance(manifest, dict) or manifest.get("format") != FORMAT:
        raise DataError(f"{bad}: its format is not {FORMAT!r}")
    if manifest.get("version") != VERSION:
        raise DataError(f"{path} has version {manifest.get('version')!r}; this paddlectl-rec reads {VERSION}")
    for key, high in (("count", MAX_ITEMS), ("dim", MAX_DIM)):
        value = manifest.get(key)
        if not isinstance(value, int) or isinstance(value, bool) or not 1 <= value <= high:
            raise DataError(f"{bad}: {key} is {value!r}, not an integer in [1, {high}]")
    if manifest.get("space") != "ip" or not isinstance(manifest.get("hnsw"), dict):
        raise DataError(f"{bad}: it needs space 'ip' and an hnsw parameter table")
    if not isinstance(manifest.get("sha256"), str):
        raise DataError(f"{bad}: it records no sha256 of {VECTORS_FILE}")
    return manifest


def _stored_vectors(path: Path, manifest: dict) -> np.ndarray:
    from safetensors import SafetensorError, safe_open

    count, dim = manifest["count"], manifest["dim"]
    expected = count * dim * 4
    if not path.is_file():
        raise DataError(f"{path} is missing; export the retrieval model again")
    size = path.stat().st_size
    if not expected < size <= expected + MAX_HEADER_BYTES:
        raise DataError(f"{path} holds {size} bytes; {count} x {dim} float32 vectors need about {expected}")
    data = path.read_bytes()
    if hashlib.sha256(data).hexdigest() != manifest["sha256"]:
        raise DataError(f"{path} does not match the sha256 in its manifest; the file was changed or damaged")
    try:
        with safe_open(str(path), framework="numpy") as handle:
            keys = list(handle.keys())
            if keys != ["vectors"]:
                raise DataError(f"{path} holds tensors {keys}; an item index holds only 'vectors'")
            vectors = handle.get_tensor("vectors")
    except SafetensorError as exc:
        raise DataError(f"{path} is not a valid safetensors file: {exc}") from None
    if vectors.dtype != np.float32 or vectors.shape != (count, dim):
        raise DataError(
            f"{path}: vectors are {vectors.dtype} {vectors.shape}; the manifest says float32 {(count, dim)}"
        )
    return _vectors(vectors, f"{path}'s vectors")


def load_item_index(directory) -> ItemIndex:
    """The index ``save_item_index`` wrote, every file checked as untrusted input before use
    (size, checksum, tensor names, dtype, shape, finite values); the graph is rebuilt from them."""
    directory = Path(directory)
    manifest = _manifest(directory / MANIFEST_FILE)
    hnsw = manifest["hnsw"]
    unknown = sorted(set(hnsw) - set(HnswParams.__dataclass_fields__))
    if unknown:
        raise DataError(f"{directory / MANIFEST_FILE}: unknown HNSW parameter {unknown[0]!r}")
    params = HnswParams(**hnsw)
    return ItemIndex(_stored_vectors(directory / VECTORS_FILE, manifest), params)
