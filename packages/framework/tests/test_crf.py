"""Linear-chain CRF ops (ops/crf.py, paddle.text): brute-force enumeration of every tag path on short
sequences (log-partition, best path), gradients against finite differences, and real Paddle's
``viterbi_decode``/``ViterbiDecoder``/``crf_decoding``."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

import paddlectl.framework as ours
from paddlectl.framework.errors import DTypeError, ShapeError

RNG = np.random.default_rng(7)
B, T, N = 3, 4, 3
EMISSION = RNG.standard_normal((B, T, N))
WEIGHTS = RNG.standard_normal((N + 2, N))  # start row, stop row, tag-to-tag
LABELS = np.array([[0, 2, 1, 1], [2, 0, 0, 0], [1, 1, 0, 2]])
LENGTHS = np.array([4, 1, 3])


def _path_score(em, start, stop, trans, path):
    return (
        start[path[0]]
        + stop[path[-1]]
        + sum(em[t, y] for t, y in enumerate(path))
        + sum(trans[a, b] for a, b in itertools.pairwise(path))
    )


def _all_scores(b, start, stop, trans, em=EMISSION, lengths=LENGTHS, tags=N):
    paths = list(itertools.product(range(tags), repeat=int(lengths[b])))
    return paths, np.array([_path_score(em[b], start, stop, trans, p) for p in paths])


def _t(a):
    return ours.to_tensor(a)


def test_nll_is_log_partition_minus_gold_score_by_enumeration():
    start, stop, trans = WEIGHTS[0], WEIGHTS[1], WEIGHTS[2:]
    got = ours.text.linear_chain_crf(_t(EMISSION), _t(WEIGHTS), _t(LABELS), _t(LENGTHS)).numpy()
    for b in range(B):
        _, scores = _all_scores(b, start, stop, trans)
        log_z = np.log(np.exp(scores).sum())
        gold = _path_score(EMISSION[b], start, stop, trans, LABELS[b, : LENGTHS[b]])
        np.testing.assert_allclose(got[b], log_z - gold, rtol=1e-12)


def test_crf_decoding_finds_the_enumerated_best_path_and_pads_with_zero():
    start, stop, trans = WEIGHTS[0], WEIGHTS[1], WEIGHTS[2:]
    got = ours.text.crf_decoding(_t(EMISSION), _t(WEIGHTS), _t(LENGTHS)).numpy()
    assert got.dtype == np.int64 and got.shape == (B, T)
    for b in range(B):
        paths, scores = _all_scores(b, start, stop, trans)
        assert tuple(got[b, : LENGTHS[b]]) == paths[int(np.argmax(scores))]
        assert not got[b, LENGTHS[b] :].any()


@pytest.mark.parametrize("bos", [True, False])
def test_viterbi_decode_matches_enumeration_in_paddles_layout(bos):
    tags = 5
    pot, trans = RNG.standard_normal((B, T, tags)), RNG.standard_normal((tags, tags))
    lengths = np.array([4, 2, 3])
    start, stop = (trans[-1], trans[-2]) if bos else (np.zeros(tags), np.zeros(tags))
    scores, paths = ours.text.viterbi_decode(_t(pot), _t(trans), _t(lengths), bos)
    assert paths.shape == [B, 4]
    for b in range(B):
        every, all_scores = _all_scores(b, start, stop, trans, pot, lengths, tags)
        np.testing.assert_allclose(scores.numpy()[b], all_scores.max(), rtol=1e-12)
        assert tuple(paths.numpy()[b, : lengths[b]]) == every[int(np.argmax(all_scores))]


def test_nll_gradients_match_finite_differences():
    em, w = _t(EMISSION), _t(WEIGHTS)
    em.stop_gradient = w.stop_gradient = False
    cot = RNG.standard_normal(B)
    (ours.text.linear_chain_crf(em, w, _t(LABELS), _t(LENGTHS)) * _t(cot)).sum().backward()

    def objective(e, ww):
        out = ours.text.linear_chain_crf(_t(e), _t(ww), _t(LABELS), _t(LENGTHS)).numpy()
        return float(out @ cot)

    for base, got, other in ((EMISSION, em.grad.numpy(), None), (WEIGHTS, w.grad.numpy(), EMISSION)):
        want = np.zeros_like(base)
        for i in range(base.size):
            plus, minus = base.copy(), base.copy()
            plus.flat[i] += 1e-6
            minus.flat[i] -= 1e-6
            args = ((plus, WEIGHTS), (minus, WEIGHTS)) if other is None else ((other, plus), (other, minus))
            want.flat[i] = (objective(*args[0]) - objective(*args[1])) / 2e-6
        np.testing.assert_allclose(got, want, atol=1e-6)
    assert not em.grad.numpy()[1, 1:].any()  # padding gets no gradient


def test_nll_training_makes_the_gold_path_the_best_path():
    """Gradient descent on the NLL alone (no features) makes crf_decoding return the labels."""
    em, w = _t(np.zeros((B, T, N))), _t(np.zeros((N + 2, N)))
    em.stop_gradient = w.stop_gradient = False
    opt = ours.optimizer.SGD(learning_rate=0.5, parameters=[em, w])
    for _ in range(60):
        ours.text.linear_chain_crf(em, w, _t(LABELS), _t(LENGTHS)).sum().backward()
        opt.step()
        opt.clear_grad()
    decoded = ours.text.crf_decoding(em, w, _t(LENGTHS)).numpy()
    mask = np.arange(T)[None, :] < LENGTHS[:, None]
    np.testing.assert_array_equal(decoded[mask], LABELS[mask])


@pytest.mark.parametrize(
    ("call", "error", "message"),
    [
        (lambda: ours.text.crf_decoding(_t(EMISSION), _t(WEIGHTS), _t(np.array([4, 0, 3]))), ValueError, r"\[1, 4\]"),
        (lambda: ours.text.crf_decoding(_t(EMISSION), _t(WEIGHTS[2:]), _t(LENGTHS)), ShapeError, r"\[5, 3\]"),
        (lambda: ours.text.crf_decoding(_t(EMISSION), _t(WEIGHTS), _t(LENGTHS * 1.0)), DTypeError, "int64"),
        (
            lambda: ours.text.linear_chain_crf(_t(EMISSION), _t(WEIGHTS), _t(LABELS + 1), _t(LENGTHS)),
            ValueError,
            "label 3 is outside",
        ),
        (lambda: ours.text.ViterbiDecoder(WEIGHTS), DTypeError, "Tensor"),
    ],
)
def test_bad_input_is_named(call, error, message):
    with pytest.raises(error, match=message):
        call()


# ----- real Paddle -------------------------------------------------------------------------------


@pytest.mark.parametrize("bos", [True, False])
def test_viterbi_decode_and_decoder_match_paddle(real_paddle, bos):
    pot = RNG.standard_normal((4, 6, 5)).astype("float32")
    trans = RNG.standard_normal((5, 5)).astype("float32")
    lengths = np.array([6, 2, 5, 1])
    for fw in (ours, real_paddle):
        decoder = fw.text.ViterbiDecoder(fw.to_tensor(trans), include_bos_eos_tag=bos)
        scores, paths = decoder(fw.to_tensor(pot), fw.to_tensor(lengths))
        if fw is ours:
            got = scores.numpy(), paths.numpy()
        else:
            np.testing.assert_allclose(got[0], scores.numpy(), rtol=1e-5)
            assert got[0].dtype == scores.numpy().dtype
            np.testing.assert_array_equal(got[1], paths.numpy())


def test_crf_decoding_matches_paddles_kernel(real_paddle):
    em = RNG.standard_normal((3, 5, 4)).astype("float32")
    w = RNG.standard_normal((6, 4)).astype("float32")
    lengths = np.array([5, 3, 1])
    theirs = real_paddle._C_ops.crf_decoding(
        real_paddle.to_tensor(em), real_paddle.to_tensor(w), None, real_paddle.to_tensor(lengths)
    )
    got = ours.text.crf_decoding(_t(em), _t(w), _t(lengths)).numpy()
    np.testing.assert_array_equal(got, theirs.numpy().reshape(got.shape))


def test_parallel_kernels_equal_the_serial_ones_on_a_large_batch():
    """Regression: the parallel Viterbi shared a hoisted scratch row between threads (paths were
    wrong for about 40% of the entries of a large evaluation batch)."""
    from paddlectl.framework.kernels import PARALLEL_MIN_SIZE
    from paddlectl.framework.kernels import crf as kernels

    tags, steps = 9, 64
    batch = PARALLEL_MIN_SIZE // (steps * tags) + 8
    rng = np.random.default_rng(0)
    em, w = rng.standard_normal((batch, steps, tags)), rng.standard_normal((tags + 2, tags))
    lengths, labels = rng.integers(1, steps + 1, batch), rng.integers(0, tags, (batch, steps))
    decoded, nll = [], []
    for variant in ("serial", "parallel"):
        scores, paths = np.empty(batch), np.zeros((batch, steps), np.int64)
        getattr(kernels.viterbi, variant)(em, w[0], w[1], w[2:], lengths, scores, paths)
        decoded.append((scores, paths))
        out = (np.empty(batch), np.zeros((batch, steps, tags)), np.zeros((batch, tags + 2, tags)))
        getattr(kernels.crf_nll, variant)(em, w[0], w[1], w[2:], labels, lengths, True, *out)
        nll.append(out)
    np.testing.assert_array_equal(decoded[0][1], decoded[1][1])
    np.testing.assert_allclose(decoded[0][0], decoded[1][0], rtol=1e-12)
    for serial, parallel in zip(*nll, strict=True):
        np.testing.assert_allclose(serial, parallel, rtol=1e-12)
