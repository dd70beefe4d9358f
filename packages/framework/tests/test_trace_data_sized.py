"""Ops whose output size is data (nonzero, masked_select, NMS) trace, save, load and run in the
predictor: a detector exports with its NMS inside, as PaddleDetection users ask."""

from __future__ import annotations

import numpy as np

import paddlectl.framework as paddle
from paddlectl.framework.static import InputSpec


def _detect(boxes, scores):
    out, counts, _ = paddle.vision.ops.multiclass_nms(
        boxes, scores, score_threshold=0.3, nms_top_k=-1, keep_top_k=10, nms_threshold=0.5
    )
    return out, counts, paddle.nonzero(scores > 0.5)


def _inputs(rng, n_boxes: int):
    corner = rng.uniform(0, 50, (1, n_boxes, 2))
    boxes = np.concatenate([corner, corner + rng.uniform(5, 30, (1, n_boxes, 2))], -1).astype("float32")
    return boxes, rng.uniform(0, 1, (1, 3, n_boxes)).astype("float32")


def test_nms_inside_an_exported_model_equals_eager(tmp_path):
    specs = [InputSpec([1, None, 4], "float32", "boxes"), InputSpec([1, 3, None], "float32", "scores")]
    paddle.jit.save(paddle.jit.to_static(_detect, input_spec=specs), str(tmp_path / "det"))
    loaded = paddle.jit.load(str(tmp_path / "det"))
    config = paddle.inference.Config(str(tmp_path / "det"))
    predictor = paddle.inference.create_predictor(config)
    rng = np.random.default_rng(0)
    for n_boxes in (7, 20):  # the kept count differs between calls, and from the trace's
        boxes, scores = _inputs(rng, n_boxes)
        want = [t.numpy() for t in _detect(paddle.to_tensor(boxes), paddle.to_tensor(scores))]
        got = [t.numpy() for t in loaded(paddle.to_tensor(boxes), paddle.to_tensor(scores))]
        ran = predictor.run([boxes, scores])
        for w, g, r in zip(want, got, ran, strict=True):
            np.testing.assert_array_equal(g, w)
            np.testing.assert_array_equal(r, w)
