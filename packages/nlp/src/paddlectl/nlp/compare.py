"""The migration check: a Hugging Face checkpoint through ``paddlectl.nlp`` against ``transformers``.

On fixed samples (English, Chinese, mixed, padded in one batch): the tokenizer ids and token types
first (a different split makes every later number meaningless), then the largest error of each
layer's hidden states over the real tokens (where a wrong weight mapping, position encoding or
precision shows up, and in which layer), the pooler, and the sentence embeddings (the directory's
pooling and normalisation) with their least cosine. ``transformers`` and ``torch`` are optional:
without them the check is a DataError saying how to install them.
"""

from __future__ import annotations

import importlib.util
from dataclasses import dataclass
from pathlib import Path

import numpy as np

import paddlectl.framework as paddle
from paddlectl.framework.errors import DataError

from .checkpoint import load_pretrained
from .embed import SentenceConfig

__all__ = ["SAMPLES", "Check", "compare_with_transformers"]

SAMPLES = (
    "The quick brown fox jumps over the lazy dog.",
    "Sentence embeddings map similar meanings to nearby vectors.",
    "今天天气很好，我们去公园散步吧。",
    "paddlectl 在 CPU 上运行 BERT 模型 (MiniLM-L6-v2)!",
    "Short.",
    "Unbelievably, the tokenizer's WordPieces split rare words: electroencephalography, naïve café, 12,345.67",
)


@dataclass(frozen=True)
class Check:
    name: str
    value: float
    tolerance: float
    ok: bool
    note: str = ""


def _oracle():
    missing = [m for m in ("torch", "transformers") if importlib.util.find_spec(m) is None]
    if missing:
        raise DataError(
            f"paddlectl nlp compare needs {' and '.join(missing)} (the reference): pip install torch transformers"
        )
    import torch
    import transformers

    return torch, transformers


def _pool(hidden: np.ndarray, mask: np.ndarray, config: SentenceConfig) -> np.ndarray:
    """sentence-transformers' pooling in NumPy, applied to both sides' last hidden states."""
    if config.pooling == "cls":
        vectors = hidden[:, 0]
    else:
        keep = mask[..., None].astype(np.float64)
        vectors = (hidden * keep).sum(1) / np.maximum(keep.sum(1), 1e-9)
    if config.normalize:
        vectors = vectors / np.maximum(np.linalg.norm(vectors, axis=-1, keepdims=True), 1e-12)
    return vectors


def compare_with_transformers(directory, tolerance: float = 1e-4, samples=SAMPLES) -> list[Check]:
    """One Check per comparison; ``ok`` is False past ``tolerance`` (cosine: past ``1 - tolerance / 10``)."""
    if not isinstance(tolerance, int | float) or not tolerance > 0:
        raise DataError(f"compare: tolerance must be a positive number, got {tolerance!r}")
    torch, transformers = _oracle()
    root = Path(directory)
    model, tokenizer = load_pretrained(root)
    config = SentenceConfig.read(root, model.config.max_position_embeddings)
    theirs_tok = transformers.AutoTokenizer.from_pretrained(str(root), local_files_only=True)
    theirs = transformers.AutoModel.from_pretrained(str(root), local_files_only=True).eval()

    texts = list(samples)
    kwargs = {"padding": True, "truncation": True, "max_length": config.max_seq_length}
    ours_batch = tokenizer(texts, return_tensors="np", **kwargs)
    their_batch = theirs_tok(texts, return_tensors="np", **kwargs)
    differ = [
        i
        for i in range(len(texts))
        if any(not np.array_equal(ours_batch[k][i], their_batch[k][i]) for k in ("input_ids", "token_type_ids"))
    ]
    checks = [
        Check("tokenizer ids", float(len(differ)), 0, not differ, f"differ on samples {differ}" if differ else "")
    ]
    if differ:
        return checks  # the models would see different inputs

    feeds = [paddle.to_tensor(ours_batch[k]) for k in ("input_ids", "token_type_ids", "attention_mask")]
    with paddle.no_grad():
        _, pooled, states = model(*feeds, output_hidden_states=True)
    with torch.no_grad():
        out = theirs(**{k: torch.from_numpy(v) for k, v in ours_batch.items()}, output_hidden_states=True)
    mask = ours_batch["attention_mask"].astype(bool)
    for layer, (a, b) in enumerate(zip(states, out.hidden_states, strict=True)):
        error = float(np.abs(a.numpy() - b.numpy())[mask].max())
        name = "embeddings output" if layer == 0 else f"layer {layer} hidden states"
        checks.append(Check(name, error, tolerance, error <= tolerance))
    if getattr(out, "pooler_output", None) is not None:
        error = float(np.abs(pooled.numpy() - out.pooler_output.numpy()).max())
        checks.append(Check("pooler output", error, tolerance, error <= tolerance))
    ours_vec = _pool(states[-1].numpy().astype(np.float64), mask, config)
    their_vec = _pool(out.last_hidden_state.numpy().astype(np.float64), mask, config)
    error = float(np.abs(ours_vec - their_vec).max())
    checks.append(Check("sentence embeddings", error, tolerance, error <= tolerance, f"{config.pooling} pooling"))
    cosine = float(
        np.min(
            (ours_vec * their_vec).sum(-1) / (np.linalg.norm(ours_vec, axis=-1) * np.linalg.norm(their_vec, axis=-1))
        )
    )
    floor = 1 - tolerance / 10
    checks.append(Check("least embedding cosine", cosine, floor, cosine >= floor, "at least the tolerance column"))
    return checks
