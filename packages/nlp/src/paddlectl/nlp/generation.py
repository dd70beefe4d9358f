"""Autoregressive decoding in PaddleNLP's style: ``generate(model, input_ids, max_length=,
decode_strategy="greedy_search"|"sampling", top_k=, top_p=, temperature=, eos_token_id=, use_cache=,
seed=)`` returns ``(ids, scores)``: the generated tokens only (the prompt is not repeated) and each
sequence's mean log-probability of them.

With ``use_cache`` the prompt runs once and every later step feeds one token with the keys and
values of the earlier ones (``model(ids, cache=..., use_cache=True)``); without it every step runs
the whole sequence again, which is what an exported predictor (no cache inputs) can do, so
``model`` may also be any callable from an int64 ``[batch, seq]`` array to logits.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from paddlectl.framework import nn
from paddlectl.framework.core.autograd import no_grad
from paddlectl.framework.core.tensor import Tensor
from paddlectl.framework.errors import ConfigError, DataError

STRATEGIES = ("greedy_search", "sampling")


def top_k_filter(logits: np.ndarray, top_k: int) -> np.ndarray:
    """``logits`` [batch, vocab] with all but the ``top_k`` largest per row set to -inf (ties with the
    k-th value are kept); ``top_k`` 0 keeps everything."""
    if top_k <= 0 or top_k >= logits.shape[-1]:
        return logits
    kth = np.partition(logits, -top_k, axis=-1)[:, -top_k][:, None]
    return np.where(logits < kth, -np.inf, logits)


def top_p_filter(logits: np.ndarray, top_p: float) -> np.ndarray:
    """Nucleus filtering: per row, keep the most probable tokens whose mass first reaches ``top_p``
    (a token is kept while the mass of the tokens ranked above it is below ``top_p``, so the most
    probable one always stays); the rest become -inf. ``top_p`` 1.0 keeps everything."""
    if top_p >= 1.0:
        return logits
    order = np.argsort(-logits, axis=-1, kind="stable")
    ranked = np.take_along_axis(logits, order, axis=-1)
    probs = _softmax(ranked)
    before = np.cumsum(probs, axis=-1) - probs
    drop = np.zeros_like(before, dtype=bool)
    np.put_along_axis(drop, order, before >= top_p, axis=-1)
    return np.where(drop, -np.inf, logits)


def _softmax(logits: np.ndarray) -> np.ndarray:
    shifted = np.exp(logits - logits.max(axis=-1, keepdims=True))
    return shifted / shifted.sum(axis=-1, keepdims=True)


def _log_softmax(logits: np.ndarray) -> np.ndarray:
    shifted = logits - logits.max(axis=-1, keepdims=True)
    with np.errstate(divide="ignore"):
        return shifted - np.log(np.exp(shifted).sum(axis=-1, keepdims=True))


def _check_options(max_length, decode_strategy, top_k, top_p, temperature) -> None:
    if not isinstance(max_length, int) or isinstance(max_length, bool) or max_length < 1:
        raise ConfigError(f"max_length must be a positive number of tokens to generate, got {max_length!r}")
    if decode_strategy not in STRATEGIES:
        raise ConfigError(f"decode_strategy is {decode_strategy!r}; choose {' or '.join(STRATEGIES)}")
    if not isinstance(top_k, int) or isinstance(top_k, bool) or top_k < 0:
        raise ConfigError(f"top_k must be an integer >= 0 (0: no top-k filter), got {top_k!r}")
    if not 0.0 < float(top_p) <= 1.0:
        raise ConfigError(f"top_p must be in (0, 1] (1: no nucleus filter), got {top_p!r}")
    if not float(temperature) > 0.0:
        raise ConfigError(f"temperature must be > 0, got {temperature!r}")


def _prompt(input_ids) -> np.ndarray:
    ids = np.asarray(input_ids.numpy() if isinstance(input_ids, Tensor) else input_ids)
    if ids.ndim == 1:
        ids = ids[None, :]
    if ids.size == 0:
        raise DataError("the prompt is empty; give at least one token to continue from")
    if ids.ndim != 2 or ids.dtype.kind not in "iu":
        raise DataError(f"input_ids must be integer token ids [batch, seq], got {ids.dtype} {list(ids.shape)}")
    if ids.min() < 0:
        raise DataError(f"input_ids hold a negative id {int(ids.min())}; token ids start at 0")
    return ids.astype(np.int64)


def _check_model(model, ids: np.ndarray, max_length: int, use_cache: bool) -> None:
    config = getattr(model, "config", None)
    vocab, positions = getattr(config, "vocab_size", None), getattr(config, "max_position_embeddings", None)
    if vocab is not None and ids.max() >= vocab:
        raise DataError(f"input_ids hold id {int(ids.max())}, the model's vocabulary has {vocab} tokens")
    if positions is not None and ids.shape[1] + max_length > positions:
        raise DataError(
            f"the prompt's {ids.shape[1]} tokens + max_length {max_length} exceed the model's {positions} positions; "
            f"lower max_length to at most {positions - ids.shape[1]} or shorten the prompt"
        )
    if use_cache and not isinstance(model, nn.Layer):
        raise ConfigError("use_cache needs the eager model (it feeds keys and values back); pass use_cache=False")


def _suppressed(tokens: Sequence[int], vocab: int) -> list[int]:
    ids = list(tokens)
    bad = [t for t in ids if isinstance(t, bool) or not isinstance(t, int | np.integer) or not 0 <= t < vocab]
    if bad:
        raise DataError(f"suppress_tokens holds {bad[0]!r}; token ids are integers in [0, {vocab})")
    return ids


class _Stepper:
    """The next-token logits ``[batch, vocab]`` for the sequence so far, with or without the cache."""

    def __init__(self, model, use_cache: bool) -> None:
        self.model, self.use_cache, self.cache = model, use_cache, None

    def __call__(self, ids: np.ndarray, new: int) -> np.ndarray:
        if not isinstance(self.model, nn.Layer):
            return np.asarray(self.model(ids))[:, -1].astype(np.float64)
        with no_grad():
            if self.use_cache:
                logits, self.cache = self.model(Tensor._wrap(ids[:, -new:]), cache=self.cache, use_cache=True)
            else:
                logits = self.model(Tensor._wrap(ids))
        return logits.numpy()[:, -1].astype(np.float64)


def generate(
    model: nn.Layer | Callable[[np.ndarray], np.ndarray],
    input_ids,
    max_length: int = 20,
    decode_strategy: str = "greedy_search",
    top_k: int = 0,
    top_p: float = 1.0,
    temperature: float = 1.0,
    eos_token_id: int | None = None,
    pad_token_id: int | None = None,
    use_cache: bool = True,
    seed: int | None = None,
    suppress_tokens: Sequence[int] = (),
) -> tuple[np.ndarray, np.ndarray]:
    """Up to ``max_length`` new tokens after ``input_ids`` ([batch, seq] or one sequence).

    Greedy search takes the most probable token; sampling draws from the logits divided by
    ``temperature``, after top-k then top-p filtering, with a NumPy generator seeded by ``seed``.
    A sequence that produced ``eos_token_id`` is finished: it gets ``pad_token_id`` (default the
    eos id) from then on and its score stops changing; generation stops when all are finished.
    Scores are the mean log-probability of each sequence's tokens under the distribution they were
    chosen from. ``suppress_tokens`` are never generated (a vocabulary's unknown-token id).
    """
    _check_options(max_length, decode_strategy, top_k, top_p, temperature)
    ids = _prompt(input_ids)
    _check_model(model, ids, max_length, use_cache)
    if isinstance(model, nn.Layer):
        was_training = model.training
        model.eval()
    rng = np.random.default_rng(seed)
    pad = eos_token_id if pad_token_id is None else pad_token_id
    step = _Stepper(model, use_cache)
    batch = ids.shape[0]
    done = np.zeros(batch, dtype=bool)
    total, count = np.zeros(batch), np.zeros(batch)
    generated = []
    try:
        for i in range(max_length):
            logits = step(ids, ids.shape[1] if i == 0 else 1)
            logits[:, _suppressed(suppress_tokens, logits.shape[-1])] = -np.inf
            if decode_strategy == "sampling":
                logits = top_p_filter(top_k_filter(logits / float(temperature), top_k), float(top_p))
            logp = _log_softmax(logits)
            if decode_strategy == "greedy_search":
                chosen = logp.argmax(axis=-1)
            else:
                chosen = np.array([rng.choice(len(row), p=np.exp(row) / np.exp(row).sum()) for row in logp])
            picked = logp[np.arange(batch), chosen]
            total, count = np.where(done, total, total + picked), np.where(done, count, count + 1)
            chosen = np.where(done, pad if pad is not None else chosen, chosen).astype(np.int64)
            generated.append(chosen)
            ids = np.concatenate([ids, chosen[:, None]], axis=1)
            if eos_token_id is not None:
                done |= chosen == eos_token_id
                if done.all():
                    break
    finally:
        if isinstance(model, nn.Layer) and was_training:
            model.train()
    return np.stack(generated, axis=1), (total / np.maximum(count, 1)).astype(np.float32)


__all__ = ["STRATEGIES", "generate", "top_k_filter", "top_p_filter"]
