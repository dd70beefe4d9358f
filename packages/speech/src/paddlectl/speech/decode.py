"""CTC decoding for speech: greedy, prefix beam search with an optional word list and word n-gram
language model, and word timings from the frame alignment.

Classes are characters; index 0 is the blank and ``" "`` separates words (PaddleSpeech's character
vocabularies, with ``<space>`` already mapped to ``" "``). The search keeps, per prefix, the CTC
probability of its alignments ending in a blank and ending in its last character, and apart from
that a language-model score: all alignments of a prefix share its words, so the LM multiplies the
sum and ranking by ``log P_ctc + weight * log P_lm + bonus * words`` is exact when nothing is pruned.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np

from paddlectl.framework.errors import DataError

from .errors import VocabularyError

NEG_INF = -math.inf


def check_log_probs(log_probs: np.ndarray, classes: Sequence[str]) -> np.ndarray:
    """A [T, C] float64 log-probability matrix whose C matches the vocabulary, or a VocabularyError."""
    array = np.asarray(log_probs, dtype="float64")
    if array.ndim != 2 or array.shape[1] != len(classes):
        raise VocabularyError(
            f"the model gives {array.shape[-1] if array.ndim else '?'} classes per frame but the vocabulary has "
            f"{len(classes)} (blank + characters); decode with the vocabulary the model was trained with"
        )
    return array


def log_softmax(logits: np.ndarray) -> np.ndarray:
    """Log probabilities over the last axis, computed stably in float64."""
    shifted = np.asarray(logits, dtype="float64")
    shifted = shifted - shifted.max(axis=-1, keepdims=True)
    return shifted - np.log(np.exp(shifted).sum(axis=-1, keepdims=True))


def collapse(path: Iterable[int]) -> tuple[int, ...]:
    """A frame path's label sequence: repeats merged, then blanks (0) dropped."""
    out, previous = [], None
    for label in path:
        if label != previous and label != 0:
            out.append(int(label))
        previous = label
    return tuple(out)


def greedy(log_probs: np.ndarray) -> tuple[int, ...]:
    """The label sequence of the best single path (argmax per frame)."""
    return collapse(np.asarray(log_probs).argmax(axis=1).tolist())


class Lexicon:
    """The allowed words, as the set of words and the set of their prefixes (a flat trie)."""

    def __init__(self, words: Iterable[str]) -> None:
        self.words = {w for w in (str(w).strip() for w in words) if w}
        if not self.words:
            raise DataError("the word list is empty; give at least one word")
        self.prefixes = {w[:i] for w in self.words for i in range(len(w) + 1)}

    def allows(self, text: str, complete: bool) -> bool:
        """Whether ``text`` can be (``complete``: is) a sequence of listed words."""
        *done, partial = text.split(" ")
        if any(w not in self.words for w in done if w):
            return False
        return (partial in self.words or partial == "") if complete else partial in self.prefixes


class WordNgram:
    """A word n-gram language model with add-k smoothing, counted from training transcripts.

    Small by design (the vocabulary of digits and commands is tens of words); ``</s>`` ends each
    sentence so a complete hypothesis is scored for stopping where it does.
    """

    def __init__(self, sentences: Iterable[str], order: int = 2, k: float = 0.1, check: bool = True) -> None:
        if not isinstance(order, int) or order < 1:
            raise DataError(f"n-gram order must be a positive integer, got {order!r}")
        if not k > 0:
            raise DataError(f"n-gram smoothing k must be positive, got {k!r}")
        self.order, self.k = order, float(k)
        self.counts: Counter = Counter()
        self.context_counts: Counter = Counter()
        self.vocab = {"</s>"}
        for sentence in sentences:
            words = sentence.split()
            self.vocab.update(words)
            history = ["<s>"] * (order - 1)
            for word in [*words, "</s>"]:
                context = tuple(history[len(history) - order + 1 :]) if order > 1 else ()
                self.counts[(*context, word)] += 1
                self.context_counts[context] += 1
                history.append(word)
        if check and len(self.vocab) == 1:
            raise DataError("the n-gram language model needs at least one non-empty training sentence")

    def config(self) -> dict:
        """JSON-able counts (an exported model carries its language model, not the training texts)."""
        return {
            "order": self.order,
            "k": self.k,
            "vocab": sorted(self.vocab),
            "counts": [[list(g), n] for g, n in sorted(self.counts.items())],
        }

    @classmethod
    def from_config(cls, config: dict) -> WordNgram:
        lm = cls([], order=int(config["order"]), k=float(config["k"]), check=False)
        lm.vocab = set(config["vocab"])
        for gram, count in config["counts"]:
            lm.counts[tuple(gram)] += int(count)
            lm.context_counts[tuple(gram[:-1])] += int(count)
        return lm

    def log_prob(self, history: Sequence[str], word: str) -> float:
        """log P(word | the last order-1 words of history); unseen words get the smoothing mass."""
        padded = ["<s>"] * (self.order - 1) + list(history)
        context = tuple(padded[len(padded) - self.order + 1 :]) if self.order > 1 else ()
        size = len(self.vocab) + 1  # + one unknown word
        return math.log((self.counts[(*context, word)] + self.k) / (self.context_counts[context] + self.k * size))

    def score(self, words: Sequence[str], complete: bool) -> float:
        """log P of the words (and of the sentence ending there when ``complete``)."""
        total = sum(self.log_prob(words[:i], w) for i, w in enumerate(words))
        return total + (self.log_prob(words, "</s>") if complete else 0.0)


@dataclass
class Scorer:
    """How a hypothesis' text is scored beside its CTC probability: ``weight * log P_lm + bonus * words``,
    and which texts the word list allows."""

    lm: WordNgram | None = None
    weight: float = 0.5
    bonus: float = 0.0
    lexicon: Lexicon | None = None

    def __call__(self, text: str, complete: bool) -> float:
        if self.lexicon is not None and not self.lexicon.allows(text, complete):
            return NEG_INF
        words = text.split(" ")
        finished = [w for w in (words if complete else words[:-1]) if w]
        lm = self.weight * self.lm.score(finished, complete) if self.lm is not None else 0.0
        return lm + self.bonus * len(finished)


def _logaddexp(a: float, b: float) -> float:
    if a == NEG_INF:
        return b
    if b == NEG_INF:
        return a
    return max(a, b) + math.log1p(math.exp(-abs(a - b)))


def prefix_beam_search(
    log_probs: np.ndarray,
    classes: Sequence[str],
    beam_width: int = 8,
    scorer: Scorer | None = None,
    prune: float = math.log(1e-3),
) -> tuple[tuple[int, ...], float]:
    """``(labels, score)``: the best label sequence of a [T, C] log-probability matrix and its score
    (log of its summed alignment probability, plus the scorer's terms).

    A frame extends prefixes only by characters whose log probability is at least ``prune``
    (PaddleSpeech's ``cutoff_prob``; speech frames are mostly blank, so this is most of the speed).
    With ``prune=-inf`` and ``beam_width`` at least the number of prefixes alive the search is
    exact. The scorer's word list holds every kept prefix to listed words (``(), -inf`` when no
    listed text fits).
    """
    log_probs = check_log_probs(log_probs, classes)
    if not isinstance(beam_width, int) or beam_width < 1:
        raise DataError(f"beam_width must be a positive integer, got {beam_width!r}")
    scorer = scorer or Scorer()
    text_of: dict[tuple[int, ...], str] = {(): ""}
    bonus: dict[tuple[int, ...], float] = {(): scorer("", False)}
    # prefix -> [log P(alignments ending in blank), log P(alignments ending in the last label)]
    beams: dict[tuple[int, ...], list[float]] = {(): [0.0, NEG_INF]}
    for frame in log_probs.tolist():
        grown: dict[tuple[int, ...], list[float]] = {}
        candidates = [c for c in range(1, len(classes)) if frame[c] >= prune]
        for prefix, (p_blank, p_label) in beams.items():
            p_any = _logaddexp(p_blank, p_label)
            entry = grown.setdefault(prefix, [NEG_INF, NEG_INF])
            entry[0] = _logaddexp(entry[0], p_any + frame[0])
            if prefix:  # the last label repeated without a blank between merges into it
                entry[1] = _logaddexp(entry[1], p_label + frame[prefix[-1]])
            for c in candidates:
                longer = (*prefix, c)
                if longer not in bonus:
                    text_of[longer] = text_of[prefix] + classes[c]
                    bonus[longer] = scorer(text_of[longer], False)
                if bonus[longer] == NEG_INF:
                    continue
                # a repeated label starts anew only after a blank
                start = p_blank if prefix and prefix[-1] == c else p_any
                entry = grown.setdefault(longer, [NEG_INF, NEG_INF])
                entry[1] = _logaddexp(entry[1], start + frame[c])
        ranked = sorted(grown.items(), key=lambda kv: -(_logaddexp(*kv[1]) + bonus[kv[0]]))
        beams = dict(ranked[:beam_width])
    finals = [(prefix, _logaddexp(*p) + scorer(text_of[prefix], True)) for prefix, p in beams.items()]
    finals = [f for f in finals if f[1] > NEG_INF]
    if not finals:
        return (), NEG_INF
    return max(finals, key=lambda f: f[1])


class Decoder:
    """Logits of one utterance -> ``(text, words)``, as an exported model's post-processing config says:
    greedy when ``beam_width`` is 1, else prefix beam search with the optional word list and LM."""

    def __init__(self, config: dict) -> None:
        self.classes = list(config["classes"])
        self.frame_seconds = float(config["frame_seconds"])
        self.beam_width = int(config.get("beam_width", 1))
        lm = WordNgram.from_config(config["lm"]) if config.get("lm") else None
        lexicon = Lexicon(config["words"]) if config.get("words") else None
        self.scorer = Scorer(lm, float(config.get("lm_weight", 0.5)), float(config.get("word_bonus", 0.0)), lexicon)

    def __call__(self, logits: np.ndarray) -> tuple[str, list[dict]]:
        log_probs = check_log_probs(log_softmax(logits), self.classes)
        if self.beam_width > 1:
            # () when no kept prefix ends in listed words: nothing the word list allows was heard
            labels, _ = prefix_beam_search(log_probs, self.classes, self.beam_width, self.scorer)
        else:
            labels = greedy(log_probs)
        return labels_text(labels, self.classes), word_timings(log_probs, labels, self.classes, self.frame_seconds)


def viterbi_alignment(log_probs: np.ndarray, labels: Sequence[int]) -> np.ndarray:
    """The most probable frame path (a class per frame) that collapses to ``labels``: forced CTC
    alignment over the blank-interleaved label sequence (an empty one aligns to all blanks)."""
    log_probs = np.asarray(log_probs, dtype="float64")
    steps = len(log_probs)
    if steps == 0 or not len(labels):
        return np.zeros(steps, dtype="int64")
    states = np.zeros(2 * len(labels) + 1, dtype="int64")
    states[1::2] = labels
    n = len(states)
    # a state may be entered from two back only when it is a label differing from that one
    skip = np.zeros(n, dtype=bool)
    skip[2:] = (states[2:] != 0) & (states[2:] != states[:-2])
    score = np.full(n, NEG_INF)
    score[:2] = log_probs[0, states[:2]]
    back = np.zeros((steps, n), dtype="int64")
    for t in range(1, steps):
        candidates = np.full((3, n), NEG_INF)
        candidates[0] = score
        candidates[1, 1:] = score[:-1]
        candidates[2, 2:] = np.where(skip[2:], score[:-2], NEG_INF)
        choice = candidates.argmax(axis=0)
        back[t] = np.arange(n) - choice
        score = candidates[choice, np.arange(n)] + log_probs[t, states]
    s = n - 1 if score[n - 1] >= score[n - 2] else n - 2
    path = np.zeros(steps, dtype="int64")
    for t in range(steps - 1, -1, -1):
        path[t] = states[s]
        s = back[t, s]
    return path


def word_timings(
    log_probs: np.ndarray, labels: Sequence[int], classes: Sequence[str], frame_seconds: float
) -> list[dict]:
    """``[{word, start, end, score}]`` from the forced alignment of ``labels``: a word spans the frames
    its characters are emitted on (start of the first, end of the last), in seconds; its score is
    the mean posterior of those frames' aligned characters."""
    log_probs = np.asarray(log_probs, dtype="float64")
    path = viterbi_alignment(log_probs, labels).tolist()
    words: list[dict] = []
    word, first, last, posteriors = "", 0, 0, []
    for t, label in enumerate(path):
        if label == 0:
            continue
        if classes[label] == " ":
            if word:
                words.append(_word(word, first, last, posteriors, frame_seconds))
            word, posteriors = "", []
            continue
        if not word:
            first = t
        if t == 0 or path[t - 1] != label:  # a new emission, not the same character held
            word += classes[label]
        last = t
        posteriors.append(math.exp(log_probs[t, label]))
    if word:
        words.append(_word(word, first, last, posteriors, frame_seconds))
    return words


def _word(word: str, first: int, last: int, posteriors: list[float], frame_seconds: float) -> dict:
    return {
        "word": word,
        "start": round(first * frame_seconds, 3),
        "end": round((last + 1) * frame_seconds, 3),
        "score": round(float(np.mean(posteriors)), 4),
    }


def labels_text(labels: Sequence[int], classes: Sequence[str]) -> str:
    """The text of a label sequence, with runs of spaces squeezed and the ends trimmed."""
    return " ".join("".join(classes[i] for i in labels).split())


__all__ = [
    "Decoder",
    "Lexicon",
    "Scorer",
    "WordNgram",
    "check_log_probs",
    "collapse",
    "greedy",
    "labels_text",
    "log_softmax",
    "prefix_beam_search",
    "viterbi_alignment",
    "word_timings",
]
