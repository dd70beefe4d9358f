"""CTC decoding (greedy and prefix beam search) and the recogniser's label encoding/decoding."""

import itertools

import numpy as np
import pytest

from paddlectl.framework.errors import ConfigError, DataError
from paddlectl.ocr.ctc import ctc_beam_decode, ctc_classes, ctc_greedy_decode, read_dictionary
from paddlectl.ocr.rec.labels import CTCLabelDecode, CTCLabelEncode


def _brute_force(probs: np.ndarray, classes: list[str]) -> dict[str, float]:
    """Every text's probability: the sum over all alignments (paths) that collapse to it."""
    texts: dict[str, float] = {}
    steps, n = probs.shape
    for path in itertools.product(range(n), repeat=steps):
        collapsed = [c for i, c in enumerate(path) if c and (i == 0 or c != path[i - 1])]
        text = "".join(classes[c] for c in collapsed)
        texts[text] = texts.get(text, 0.0) + float(np.prod(probs[np.arange(steps), path]))
    return texts


def test_beam_search_finds_the_text_greedy_misses():
    # best path: blank, blank -> "" (0.6 * 0.6 = 0.36); but "a" has 0.4*0.6 + 0.6*0.4 + 0.4*0.4 = 0.64
    classes = ctc_classes(["a"], use_space_char=False)
    probs = np.array([[[0.6, 0.4], [0.6, 0.4]]])
    assert ctc_greedy_decode(probs, classes) == [("", 0.0)]
    ((text, score),) = ctc_beam_decode(probs, classes, beam_width=4)
    assert text == "a" and score == pytest.approx(0.64)


@pytest.mark.parametrize("seed", range(4))
def test_beam_search_matches_brute_force(seed):
    rng = np.random.default_rng(seed)
    classes = ctc_classes(["a", "b"], use_space_char=False)
    probs = rng.dirichlet(np.full(3, 0.5), size=(1, 5))
    truth = _brute_force(probs[0], classes)
    best = max(truth, key=truth.get)
    ((text, score),) = ctc_beam_decode(probs, classes, beam_width=64)
    assert text == best and score == pytest.approx(truth[best], rel=1e-9)


def test_greedy_merges_repeats_but_keeps_blank_separated_ones():
    classes = ctc_classes(["a", "b"], use_space_char=True)
    steps = [1, 1, 0, 1, 2, 3, 3]
    probs = np.full((1, len(steps), 4), 0.1)
    probs[0, np.arange(len(steps)), steps] = 0.7
    assert ctc_greedy_decode(probs, classes)[0][0] == "aab "
    assert ctc_beam_decode(probs, classes, beam_width=8)[0][0] == "aab "


def test_decoders_refuse_a_dictionary_of_another_size():
    probs = np.full((1, 3, 5), 0.2)
    for decode in (ctc_greedy_decode, ctc_beam_decode):
        with pytest.raises(DataError, match="5 classes but the dictionary has 4"):
            decode(probs, ctc_classes(["a", "b", "c"], use_space_char=False))


def test_label_round_trip_with_space_and_unknown_characters(tmp_path):
    path = tmp_path / "dict.txt"
    path.write_text("a\nb\nc\n", encoding="utf-8")
    encode = CTCLabelEncode(max_text_length=6, character_dict_path=str(path), use_space_char=True)
    decode = CTCLabelDecode(character_dict_path=str(path), use_space_char=True)
    data = encode({"label": "ab xc"})  # x is not in the dictionary: dropped, as PaddleOCR does
    assert data["label"].tolist() == [1, 2, 4, 3, 0, 0] and data["length"] == 4
    assert decode.labels(data["label"][None]) == ["ab c"]
    assert decode.classes == ["", "a", "b", "c", " "]


def test_label_encode_drops_what_cannot_be_learned(tmp_path):
    encode = CTCLabelEncode(max_text_length=4)  # no dictionary: digits and lower-case letters
    assert encode({"label": "toolong"}) is None
    assert encode({"label": "@#"}) is None
    assert encode({"label": "AB"})["label"].tolist() == [11, 12, 0, 0]  # lower-cased
    with pytest.raises(ConfigError, match="max_text_length"):
        CTCLabelEncode(max_text_length=0)


def test_dictionary_files_are_checked(tmp_path):
    (tmp_path / "ok.txt").write_text("a\n \nb\r\n", encoding="utf-8")
    assert read_dictionary(tmp_path / "ok.txt") == ["a", " ", "b"]
    (tmp_path / "gap.txt").write_text("a\n\nb\n", encoding="utf-8")
    with pytest.raises(DataError, match="empty line 2"):
        read_dictionary(tmp_path / "gap.txt")
    with pytest.raises(DataError, match="does not exist"):
        read_dictionary(tmp_path / "missing.txt")
    (tmp_path / "bin.txt").write_bytes(b"\xff\xfe\x00")
    with pytest.raises(DataError, match="UTF-8"):
        read_dictionary(tmp_path / "bin.txt")
