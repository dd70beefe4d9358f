"""Serving a recogniser or line classifier that already ends in a softmax (PaddleOCR's exported
models) reports its own probabilities, not a softmax of them; our models' logits get one."""

import numpy as np

from paddlectl.ocr.cls.task import ClsTask
from paddlectl.ocr.rec.labels import probabilities, softmax
from paddlectl.ocr.rec.task import RecTask


def _rec_post(characters):
    return {"character": characters, "use_space_char": False, "beam_width": 1}


def test_probabilities_keep_a_softmax_output_and_turn_logits_into_one():
    logits = np.array([[2.0, 0.5, -1.0], [0.1, 0.2, 0.3]], np.float32)
    probs = softmax(logits)
    np.testing.assert_allclose(probabilities(probs), probs, rtol=1e-6)
    np.testing.assert_allclose(probabilities(logits), probs, rtol=1e-6)


def test_rec_scores_a_softmax_model_by_its_own_probabilities():
    post = _rec_post(["a", "b"])
    steps = np.full((1, 4, 3), 0.05, np.float32)  # blank, a, b per step
    for t, k in enumerate([1, 0, 2, 0]):  # "a" then "b", blanks between
        steps[0, t, k] = 0.9
    [record] = RecTask().postprocess(post, [steps])
    assert record["label"] == "ab"
    np.testing.assert_allclose(record["score"], 0.9, rtol=1e-5)
    [from_logits] = RecTask().postprocess(post, [np.log(steps)])  # the same model returning logits
    assert from_logits["label"] == "ab"
    np.testing.assert_allclose(from_logits["score"], 0.9, rtol=1e-5)


def test_cls_scores_a_softmax_model_by_its_own_probabilities():
    probs = np.array([[0.2, 0.8]], np.float32)
    [record] = ClsTask().postprocess({"label_list": ["0", "180"]}, [probs])
    assert record["label"] == "180"
    np.testing.assert_allclose(record["score"], 0.8, rtol=1e-6)
