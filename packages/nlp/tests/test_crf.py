"""PaddleNLP-style CRF layers (paddlectl.nlp.crf): log Z and the best path by enumerating every
path, the decoder agreeing with the CRF it decodes, gradients reaching the transitions."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

import paddlectl.framework as paddle
from paddlectl.framework.errors import ConfigError
from paddlectl.nlp.crf import LinearChainCrf, LinearChainCrfLoss, ViterbiDecoder

RNG = np.random.default_rng(3)
LENGTHS = np.array([3, 1, 2])
LABELS = np.array([[0, 3, 1], [2, 0, 0], [4, 1, 0]])


def _crf(with_start_stop_tag):
    paddle.seed(0)
    crf = LinearChainCrf(3, with_start_stop_tag=with_start_stop_tag)
    crf.transitions.set_value(RNG.standard_normal(crf.transitions.shape).astype("float32"))
    return crf


def _scores(crf, emission, b):
    """Every path's score for sequence b (the CRF's own definition, start/stop rows included)."""
    trans = crf.transitions.numpy().astype(np.float64)
    start = trans[-1] if crf.with_start_stop_tag else np.zeros(crf.num_tags)
    stop = trans[-2] if crf.with_start_stop_tag else np.zeros(crf.num_tags)
    paths = list(itertools.product(range(crf.num_tags), repeat=int(LENGTHS[b])))
    scores = [
        start[p[0]]
        + stop[p[-1]]
        + sum(emission[b, t, y] for t, y in enumerate(p))
        + sum(trans[a, c] for a, c in itertools.pairwise(p))
        for p in paths
    ]
    return paths, np.array(scores)


@pytest.mark.parametrize("with_start_stop_tag", [True, False])
def test_log_partition_gold_score_and_decoder_agree_with_enumeration(with_start_stop_tag):
    crf = _crf(with_start_stop_tag)
    emission = RNG.standard_normal((3, 3, crf.num_tags)).astype("float32")
    labels = LABELS % crf.num_tags
    x, lengths, y = paddle.to_tensor(emission), paddle.to_tensor(LENGTHS), paddle.to_tensor(labels)
    log_z, gold = crf(x, lengths).numpy(), crf.gold_score(x, y, lengths).numpy()
    best_scores, best_paths = ViterbiDecoder(crf.transitions, with_start_stop_tag)(x, lengths)
    for b in range(3):
        paths, scores = _scores(crf, emission, b)
        np.testing.assert_allclose(log_z[b], np.log(np.exp(scores).sum()), rtol=1e-5)
        np.testing.assert_allclose(gold[b], scores[paths.index(tuple(labels[b, : LENGTHS[b]]))], rtol=1e-5)
        np.testing.assert_allclose(best_scores.numpy()[b], scores.max(), rtol=1e-5)
        assert tuple(best_paths.numpy()[b, : LENGTHS[b]]) == paths[int(np.argmax(scores))]


def test_loss_is_the_negative_log_likelihood_and_trains_the_transitions():
    crf = _crf(True)
    emission = paddle.to_tensor(RNG.standard_normal((3, 3, crf.num_tags)).astype("float32"))
    lengths, labels = paddle.to_tensor(LENGTHS), paddle.to_tensor(LABELS)
    loss = LinearChainCrfLoss(crf)(emission, lengths, labels)
    np.testing.assert_allclose(
        loss.numpy(), (crf(emission, lengths) - crf.gold_score(emission, labels, lengths)).numpy(), rtol=1e-5
    )
    assert (loss.numpy() > 0).all()
    loss.sum().backward()
    assert crf.transitions.grad is not None and np.abs(crf.transitions.grad.numpy()).sum() > 0


def test_bad_arguments_are_named():
    with pytest.raises(ConfigError, match="num_labels"):
        LinearChainCrf(0)
    with pytest.raises(ConfigError, match="not `crf.transitions`"):
        LinearChainCrfLoss(_crf(True).transitions)
