"""Linear-chain CRF ops: Paddle's ``viterbi_decode`` and the classic ``linear_chain_crf`` /
``crf_decoding`` pair (transition ``[N + 2, N]``: row 0 start weights, row 1 stop weights, then
``[N, N]`` tag-to-tag weights), on the Numba kernels of ``kernels.crf``.

The negative log-likelihood's gradient is the forward-backward marginals minus the gold counts,
made by one backward op; it has no derivative of its own. Lengths and labels are data, checked
every time the ops run (eager or inside a traced program).
"""

from __future__ import annotations

import numpy as np

from ..core.autograd import is_grad_enabled
from ..core.op import OPAQUE, OpDef, Sample, Spec
from ..errors import ShapeError
from ..kernels import crf as crf_kernels
from .loss_checks import check_float, check_int
from .reduce import sum
from .shape import reshape

_LENGTHS_FIX = "cast it with .astype('int64')"


def _check_values(op, steps, tags, lengths, labels=None) -> None:
    if lengths.size and (lengths.min() < 1 or lengths.max() > steps):
        raise ValueError(f"{op}: lengths must lie in [1, {steps}] (the padded sequence length), got {lengths.tolist()}")
    if labels is None:
        return
    valid = labels[np.arange(steps)[None, :] < lengths[:, None]]
    if valid.size and (valid.min() < 0 or valid.max() >= tags):
        bad = int(valid[(valid < 0) | (valid >= tags)][0])
        raise ValueError(f"{op}: label {bad} is outside [0, {tags}) for {tags} tags; fix the labels or the tag count")


def _split(transition):
    """The classic layout's start, stop and tag-to-tag parts as contiguous float64 arrays."""
    weights = np.ascontiguousarray(transition, dtype=np.float64)
    return weights[0], weights[1], weights[2:]


def _crf_run(emission, transition, label, length, want_grad):
    batch, steps, tags = emission.shape
    _check_values("linear_chain_crf", steps, tags, length, label)
    loss = np.empty(batch)
    g_emission = np.zeros((batch, steps, tags) if want_grad else (0, 0, 0))
    g_weights = np.zeros((batch, tags + 2, tags) if want_grad else (0, 0, 0))
    crf_kernels.crf_nll(
        np.ascontiguousarray(emission, dtype=np.float64),
        *_split(transition),
        np.ascontiguousarray(label, dtype=np.int64),
        length.astype(np.int64),
        want_grad,
        loss,
        g_emission,
        g_weights,
    )
    return loss.astype(emission.dtype), g_emission.astype(emission.dtype), g_weights.astype(transition.dtype)


def _crf_forward(ctx, emission, transition, label, length):
    return _crf_run(emission, transition, label, length, False)[0]


def _crf_grad_forward(ctx, emission, transition, label, length):
    return _crf_run(emission, transition, label, length, True)[1:]


def _crf_vjp(ctx, g):
    """Marginals minus gold counts (one kernel pass, recomputed from the inputs), scaled per sequence."""
    if is_grad_enabled():
        raise RuntimeError(
            "paddle.grad(create_graph=True): linear_chain_crf's gradient comes from a forward-backward "
            "kernel and cannot be differentiated again; differentiate it once"
        )
    g_emission, g_weights = crf_grad_op(*(ctx.input(i) for i in range(4)))
    scale = reshape(g, [-1, 1, 1])
    return g_emission * scale, sum(g_weights * scale, axis=0), None, None


def _crf_samples(rng):
    labels = np.array([[0, 2, 1, 1], [2, 0, 0, 0], [1, 1, 0, 2]])
    lengths = np.array([4, 1, 3])
    return [Sample((rng.standard_normal((3, 4, 3)), rng.standard_normal((5, 3)), labels, lengths))]


crf_grad_op = OpDef(
    "linear_chain_crf_grad",
    _crf_grad_forward,
    None,
    lambda emission, transition, label, length: (
        Spec(tuple(emission.shape), emission.dtype),
        Spec((emission.shape[0], *transition.shape), transition.dtype),
    ),
    OPAQUE,
    samples=_crf_samples,
)
crf_op = OpDef(
    "linear_chain_crf",
    _crf_forward,
    _crf_vjp,
    lambda emission, transition, label, length: Spec((emission.shape[0],), emission.dtype),
    OPAQUE,
    samples=_crf_samples,
    exempt={"vjp2": "the gradient comes from a forward-backward kernel (linear_chain_crf_grad) with no derivative"},
)


def _decode(emission, start, stop, trans, lengths, width):
    """Best scores and int64 paths ``[B, width]``, zero past each length."""
    scores = np.empty(emission.shape[0])
    paths = np.zeros((emission.shape[0], width), dtype=np.int64)
    crf_kernels.viterbi(np.ascontiguousarray(emission, dtype=np.float64), start, stop, trans, lengths, scores, paths)
    return scores, paths


def _crf_decoding_forward(ctx, emission, transition, length):
    _check_values("crf_decoding", emission.shape[1], emission.shape[2], length)
    return _decode(emission, *_split(transition), length.astype(np.int64), emission.shape[1])[1]


crf_decoding_op = OpDef(
    "crf_decoding",
    _crf_decoding_forward,
    None,
    lambda emission, transition, length: Spec(tuple(emission.shape[:2]), np.dtype(np.int64)),
    OPAQUE,
    samples=lambda rng: [Sample((rng.standard_normal((3, 4, 3)), rng.standard_normal((5, 3)), np.array([4, 1, 3])))],
)


def _viterbi_forward(ctx, potentials, transition_params, lengths, *, include_bos_eos_tag):
    """Paddle's layout: with BOS/EOS the last tag's row starts a path and the second to last tag's
    row ends it (both rows, as Paddle reads them); every tag may appear inside a path."""
    _check_values("viterbi_decode", potentials.shape[1], potentials.shape[2], lengths)
    weights = np.ascontiguousarray(transition_params, dtype=np.float64)
    tags = weights.shape[0]
    start, stop = (weights[-1], weights[-2]) if include_bos_eos_tag else (np.zeros(tags), np.zeros(tags))
    steps = lengths.astype(np.int64)
    scores, paths = _decode(potentials, start, stop, weights, steps, int(steps.max(initial=0)))
    return scores.astype(potentials.dtype), paths


viterbi_decode_op = OpDef(
    "viterbi_decode",
    _viterbi_forward,
    None,
    lambda potentials, transition_params, lengths, include_bos_eos_tag: (
        Spec((potentials.shape[0],), potentials.dtype),
        Spec((potentials.shape[0], "max_length"), np.dtype(np.int64)),
    ),
    OPAQUE,
    samples=lambda rng: [
        Sample(
            (rng.standard_normal((3, 4, 5)), rng.standard_normal((5, 5)), np.array([4, 2, 3])),
            {"include_bos_eos_tag": bos},
        )
        for bos in (True, False)
    ],
)


def _check_emission(op, emission, lengths, transition_rows, transition):
    check_float(op, "emission", emission)
    check_float(op, "transition", transition)
    check_int(op, "lengths", lengths, _LENGTHS_FIX)
    if emission.ndim != 3:
        raise ShapeError(f"{op}: emission must be [batch_size, seq_len, num_tags], got {emission.shape}")
    batch, _, tags = emission.shape
    if transition.shape != [transition_rows(tags), tags]:
        raise ShapeError(f"{op}: transition must be [{transition_rows(tags)}, {tags}], got {transition.shape}")
    if lengths.shape != [batch]:
        raise ShapeError(f"{op}: lengths must have shape [{batch}], got {lengths.shape}")


def linear_chain_crf(emission, transition, label, length):
    """Each sequence's negative log-likelihood ``log Z - score(label)`` [B] under a linear-chain CRF
    (``transition`` [N + 2, N]: start row, stop row, tag-to-tag); positions past ``length`` are padding."""
    _check_emission("linear_chain_crf", emission, length, lambda n: n + 2, transition)
    check_int("linear_chain_crf", "label", label, _LENGTHS_FIX)
    if label.shape != emission.shape[:2]:
        raise ShapeError(
            f"linear_chain_crf: label must be [batch_size, seq_len] = {emission.shape[:2]}, got {label.shape}"
        )
    return crf_op(emission, transition, label, length)


def crf_decoding(emission, transition, length):
    """The highest-scoring tag path [B, T] (int64, 0 past each length) under ``linear_chain_crf``'s model."""
    _check_emission("crf_decoding", emission, length, lambda n: n + 2, transition)
    return crf_decoding_op(emission, transition, length)


def viterbi_decode(potentials, transition_params, lengths, include_bos_eos_tag=True, name=None):
    """Paddle's ``paddle.text.viterbi_decode``: (best scores [B], paths [B, max(lengths)] int64)."""
    _check_emission("viterbi_decode", potentials, lengths, lambda n: n, transition_params)
    return viterbi_decode_op(potentials, transition_params, lengths, include_bos_eos_tag=bool(include_bos_eos_tag))
