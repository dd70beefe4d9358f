"""CTC decoding against brute force: every alignment of a tiny vocabulary enumerated."""

import itertools
import math

import numpy as np
import pytest

from paddlectl.framework.errors import DataError
from paddlectl.speech.decode import (
    Lexicon,
    Scorer,
    WordNgram,
    collapse,
    greedy,
    labels_text,
    log_softmax,
    prefix_beam_search,
    viterbi_alignment,
    word_timings,
)
from paddlectl.speech.errors import VocabularyError

CLASSES = ["", "a", "b", " "]


def brute_force(log_probs, scorer=None):
    """log P(y) summed over every frame path, plus the scorer's terms, for every label sequence y."""
    totals: dict = {}
    for path in itertools.product(range(log_probs.shape[1]), repeat=len(log_probs)):
        labels = collapse(path)
        lp = sum(log_probs[t, c] for t, c in enumerate(path))
        totals[labels] = np.logaddexp(totals.get(labels, -math.inf), lp)
    if scorer is not None:
        totals = {y: v + scorer("".join(CLASSES[i] for i in y), True) for y, v in totals.items()}
    best = max(totals, key=totals.get)
    return best, totals[best]


def random_log_probs(seed, steps=5):
    return log_softmax(np.random.default_rng(seed).normal(size=(steps, len(CLASSES))) * 2.0)


@pytest.mark.parametrize("seed", range(6))
def test_prefix_beam_without_pruning_is_exact(seed):
    log_probs = random_log_probs(seed)
    labels, score = prefix_beam_search(log_probs, CLASSES, beam_width=10_000, prune=-math.inf)
    best, best_score = brute_force(log_probs)
    assert labels == best
    assert score == pytest.approx(best_score, abs=1e-9)


@pytest.mark.parametrize("seed", range(4))
def test_prefix_beam_with_language_model_and_word_list_is_exact(seed):
    lm = WordNgram(["ab a", "ab ab", "a"], order=2)
    scorer = Scorer(lm=lm, weight=0.7, bonus=0.3, lexicon=Lexicon(["a", "ab"]))
    log_probs = random_log_probs(100 + seed)
    labels, score = prefix_beam_search(log_probs, CLASSES, beam_width=10_000, scorer=scorer, prune=-math.inf)
    best, best_score = brute_force(log_probs, scorer)
    assert labels == best
    assert score == pytest.approx(best_score, abs=1e-9)
    assert all(w in ("a", "ab") for w in labels_text(labels, CLASSES).split())


def test_word_list_overrides_acoustics():
    # frames say "b" clearly; only "a" is a word, so the search must give "a"
    probs = np.full((3, 4), 0.01)
    probs[:, 2] = 0.6
    probs[1, 1] = 0.3
    log_probs = np.log(probs / probs.sum(axis=1, keepdims=True))
    assert labels_text(greedy(log_probs), CLASSES) == "b"
    labels, _ = prefix_beam_search(log_probs, CLASSES, beam_width=4, scorer=Scorer(lexicon=Lexicon(["a"])))
    assert labels_text(labels, CLASSES) == "a"


def test_ngram_probabilities_sum_to_one():
    lm = WordNgram(["one two", "two two three"], order=2, k=0.5)
    for history in ([], ["two"], ["nine"]):
        words = [*sorted(lm.vocab), "<unk-word>"]
        assert sum(math.exp(lm.log_prob(history, w)) for w in words) == pytest.approx(1.0)


def test_viterbi_alignment_collapses_to_the_labels_and_is_best():
    log_probs = random_log_probs(7, steps=6)
    for labels in [(1,), (1, 1), (2, 3, 1)]:
        path = viterbi_alignment(log_probs, labels)
        assert collapse(path.tolist()) == labels
        best = max(
            (p for p in itertools.product(range(4), repeat=6) if collapse(p) == labels),
            key=lambda p: sum(log_probs[t, c] for t, c in enumerate(p)),
        )
        assert sum(log_probs[t, c] for t, c in enumerate(path)) == pytest.approx(
            sum(log_probs[t, c] for t, c in enumerate(best))
        )


def test_word_timings_from_the_alignment():
    # frames: a a _ b _ ' ' b b  -> words "ab" (frames 0-3) and "b" (frames 6-7)
    path = [1, 1, 0, 2, 0, 3, 2, 2]
    probs = np.full((len(path), 4), 0.02)
    probs[np.arange(len(path)), path] = 0.94
    words = word_timings(np.log(probs), collapse(path), CLASSES, frame_seconds=0.04)
    assert [w["word"] for w in words] == ["ab", "b"]
    assert (words[0]["start"], words[0]["end"]) == (0.0, 0.16)
    assert (words[1]["start"], words[1]["end"]) == (0.24, 0.32)
    assert words[0]["score"] == pytest.approx(0.94)


def test_vocabulary_that_does_not_match_the_model_is_refused():
    with pytest.raises(VocabularyError, match="classes per frame but the vocabulary has 3"):
        prefix_beam_search(random_log_probs(0), CLASSES[:3])


def test_bad_settings_are_refused():
    with pytest.raises(DataError, match="beam_width"):
        prefix_beam_search(random_log_probs(0), CLASSES, beam_width=0)
    with pytest.raises(DataError, match="word list is empty"):
        Lexicon([" "])
    with pytest.raises(DataError, match="order"):
        WordNgram(["a"], order=0)
