"""paddle.vision.ops.nms and PaddleDetection's multiclass_nms: against a brute-force reference written
from the definition, and against real Paddle 3.3.1's kernels."""

from __future__ import annotations

import numpy as np
import pytest

import paddlectl.framework as ours
from paddlectl.framework.errors import DTypeError, ShapeError
from paddlectl.framework.vision import ops as vops


def _boxes(rng, n, spread=10.0):
    corner = rng.uniform(0, spread, (n, 2))
    return np.concatenate([corner, corner + rng.uniform(1, spread / 2, (n, 2))], axis=1).astype("float32")


def _iou(a, b, plus=0.0):
    """IoU of two (valid) boxes; disjoint boxes 0 (Paddle's test, before ``plus`` widens pixel boxes)."""
    if b[0] > a[2] or b[2] < a[0] or b[1] > a[3] or b[3] < a[1]:
        return 0.0
    iw = min(a[2], b[2]) - max(a[0], b[0]) + plus
    ih = min(a[3], b[3]) - max(a[1], b[1]) + plus
    area = [(x[2] - x[0] + plus) * (x[3] - x[1] + plus) for x in (a, b)]
    return iw * ih / (area[0] + area[1] - iw * ih)


def _brute_nms(boxes, order, classes, threshold, plus=0.0, eta=1.0):
    """Greedy: walk ``order``, keep a box unless a kept box of its class overlaps it by IoU > threshold."""
    kept, thr = [], threshold
    for i in order:
        if all(classes[k] != classes[i] or _iou(boxes[i], boxes[k], plus) <= thr for k in kept):
            kept.append(i)
            if eta < 1.0 and thr > 0.5:
                thr *= eta
    return kept


def _brute_multiclass(bboxes, scores, score_thr, nms_top_k, keep_top_k, thr, normalized, eta, background):
    rows, index, counts = [], [], []
    plus = 0.0 if normalized else 1.0
    for b in range(bboxes.shape[0]):
        picked = []  # (class, idx)
        for c in range(scores.shape[1]):
            if c == background:
                continue
            cand = sorted(
                (i for i in range(bboxes.shape[1]) if scores[b, c, i] > score_thr), key=lambda i: -scores[b, c, i]
            )
            cand = cand if nms_top_k < 0 else cand[:nms_top_k]
            picked += [(c, i) for i in _brute_nms(bboxes[b], cand, np.zeros(len(scores[b, c]), int), thr, plus, eta)]
        if -1 < keep_top_k < len(picked):
            picked = sorted(picked, key=lambda p: -scores[b, p[0], p[1]])[:keep_top_k]
            picked = sorted(picked, key=lambda p: (p[0], -scores[b, p[0], p[1]]))
        rows += [[c, scores[b, c, i], *bboxes[b, i]] for c, i in picked]
        index += [b * bboxes.shape[1] + i for _, i in picked]
        counts.append(len(picked))
    return np.array(rows, "float32").reshape(-1, 6), np.array(index).reshape(-1, 1), np.array(counts)


@pytest.mark.parametrize("seed", range(6))
def test_nms_matches_the_brute_force_reference(seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 60))
    boxes, scores, cats = _boxes(rng, n), rng.permutation(n).astype("float32") / n, rng.integers(0, 4, n)
    thr = float(rng.uniform(0.1, 0.9))
    b = ours.to_tensor(boxes)
    assert vops.nms(b, thr).tolist() == _brute_nms(boxes, range(n), np.zeros(n), thr)
    order = np.argsort(-scores)
    assert vops.nms(b, thr, ours.to_tensor(scores)).tolist() == _brute_nms(boxes, order, np.zeros(n), thr)
    want = [i for i in _brute_nms(boxes, order, cats, thr) if cats[i] in (0, 1, 3)][:5]
    got = vops.nms(b, thr, ours.to_tensor(scores), ours.to_tensor(cats), categories=[0, 1, 3], top_k=min(5, n))
    assert got.tolist() == want


@pytest.mark.parametrize("seed", range(4))
def test_multiclass_nms_matches_the_brute_force_reference(seed):
    rng = np.random.default_rng(10 + seed)
    m = int(rng.integers(1, 40))
    bboxes = np.stack([_boxes(rng, m) for _ in range(2)])
    scores = rng.uniform(0, 1, (2, 3, m)).astype("float32")
    args = (0.3, int(rng.integers(-1, 8)), int(rng.integers(-1, 10)), 0.45, bool(seed % 2), 0.9 if seed > 1 else 1.0)
    background = -1 if seed < 2 else 1
    out, num, index = vops.multiclass_nms(
        ours.to_tensor(bboxes), ours.to_tensor(scores), *args, background_label=background, return_index=True
    )
    rows, want_index, counts = _brute_multiclass(bboxes, scores, *args, background)
    np.testing.assert_allclose(out.numpy(), rows, rtol=1e-6)
    assert index.numpy().tolist() == want_index.tolist() and num.numpy().tolist() == counts.tolist()
    assert out.dtype == ours.float32 and index.dtype == ours.int32 and num.dtype == ours.int32


def _as(mod, value):
    return mod.to_tensor(value) if isinstance(value, np.ndarray) else value


@pytest.mark.parametrize(
    "mode",
    [{}, {"scores": True}, {"scores": True, "cats": [0, 1, 2], "top_k": 7}, {"scores": True, "cats": [0, 2]}],
)
def test_nms_against_real_paddle(real_paddle, mode):
    rng = np.random.default_rng(3)
    boxes, scores, cats = (
        _boxes(rng, 50, spread=20.0),
        rng.permutation(50).astype("float32") / 50,
        rng.integers(0, 3, 50),
    )
    kwargs = {}
    if mode.get("scores"):
        kwargs["scores"] = scores
    if "cats" in mode:
        kwargs.update(category_idxs=cats, categories=mode["cats"], top_k=mode.get("top_k"))
    want = real_paddle.vision.ops.nms(
        real_paddle.to_tensor(boxes), 0.4, **{k: _as(real_paddle, v) for k, v in kwargs.items()}
    )
    got = vops.nms(ours.to_tensor(boxes), 0.4, **{k: _as(ours, v) for k, v in kwargs.items()})
    assert got.numpy().tolist() == want.numpy().tolist() and got.dtype == ours.int64


@pytest.mark.parametrize(
    "attrs",
    [
        (0.3, 10, 8, 0.4, True, 1.0, -1),
        (0.3, -1, -1, 0.4, False, 0.8, 0),
        (0.99, 10, 8, 0.4, True, 1.0, -1),
        (2.0, 10, 8, 0.4, True, 1.0, -1),  # nothing over the threshold: [0, 6] rows
    ],
)
def test_multiclass_nms_against_real_paddle(real_paddle, attrs):
    rng = np.random.default_rng(4)
    bboxes = np.stack([_boxes(rng, 30), _boxes(rng, 30)])
    scores = rng.uniform(0, 1, (2, 4, 30)).astype("float32")
    want_out, want_index, want_num = real_paddle._C_ops.multiclass_nms3(
        real_paddle.to_tensor(bboxes), real_paddle.to_tensor(scores), None, *attrs
    )
    out, num, index = vops.multiclass_nms(
        ours.to_tensor(bboxes), ours.to_tensor(scores), *attrs[:6], background_label=attrs[6], return_index=True
    )
    assert out.shape == list(want_out.shape)
    np.testing.assert_array_equal(out.numpy(), want_out.numpy())
    np.testing.assert_array_equal(index.numpy(), want_index.numpy())
    np.testing.assert_array_equal(num.numpy(), want_num.numpy())


def test_bad_arguments_are_named():
    b = ours.to_tensor(_boxes(np.random.default_rng(0), 4))
    with pytest.raises(ShapeError, match=r"boxes must be a \[N, 4\]"):
        vops.nms(ours.ones([4, 3]))
    with pytest.raises(DTypeError, match="boxes must be a float tensor"):
        vops.nms(ours.ones([4, 4], "int64"))
    with pytest.raises(ValueError, match="iou_threshold must lie in"):
        vops.nms(b, 1.5)
    with pytest.raises(ShapeError, match=r"scores must be a \[4\] tensor"):
        vops.nms(b, 0.5, ours.ones([3]))
    with pytest.raises(ValueError, match="needs categories"):
        vops.nms(b, 0.5, ours.ones([4]), ours.zeros([4], "int64"))
    with pytest.raises(ShapeError, match=r"scores must be a \[N, C, M\]"):
        vops.multiclass_nms(ours.unsqueeze(b, 0), ours.ones([1, 2, 5]), 0.1, 10, 10)
    with pytest.raises(ValueError, match="keep_top_k must be -1"):
        vops.multiclass_nms(ours.unsqueeze(b, 0), ours.ones([1, 2, 4]), 0.1, 10, -3)


def test_onnx_nonmaxsuppression_passes_onnx_node_cases():
    pytest.importorskip("onnx", reason="ONNX's node cases come with the onnx package")
    from paddlectl.framework.onnx import conformance

    cases = conformance.node_cases("nonmaxsuppression", modules=("nonmaxsuppression",))  # others may be loaded
    assert len(cases) == 10
    results = conformance.run_suite(cases, conformance.paddlectl_prepare)
    assert all(outcome == "pass" for outcome, _ in results.values()), results


@pytest.mark.parametrize("center", [0, 1])
def test_onnx_nonmaxsuppression_matches_onnxruntime(tmp_path, center):
    onnx = pytest.importorskip("onnx", reason="the model is built with the onnx package")
    ort = pytest.importorskip("onnxruntime", reason="onnxruntime is the reference")
    from onnx import TensorProto, helper

    from paddlectl.framework.onnx.backend import PaddlectlBackend

    rng = np.random.default_rng(center)
    boxes = np.stack([_boxes(rng, 60, spread=30.0) for _ in range(2)])
    boxes = boxes[..., [1, 2, 3, 0]] if center == 0 else np.concatenate([boxes[..., :2], boxes[..., 2:] / 2], -1)
    scores = rng.uniform(0, 1, (2, 3, 60)).astype("float32")
    consts = [
        helper.make_tensor("max", TensorProto.INT64, [1], [7]),
        helper.make_tensor("iou", TensorProto.FLOAT, [1], [0.35]),
        helper.make_tensor("thr", TensorProto.FLOAT, [1], [0.25]),
    ]
    node = helper.make_node(
        "NonMaxSuppression", ["boxes", "scores", "max", "iou", "thr"], ["sel"], center_point_box=center
    )
    graph = helper.make_graph(
        [node],
        "nms",
        [
            helper.make_tensor_value_info(n, TensorProto.FLOAT, s)
            for n, s in (("boxes", [2, 60, 4]), ("scores", [2, 3, 60]))
        ],
        [helper.make_tensor_value_info("sel", TensorProto.INT64, [None, 3])],
        initializer=consts,
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    path = tmp_path / "nms.onnx"
    onnx.save(model, path)
    want = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"]).run(
        None, {"boxes": boxes, "scores": scores}
    )[0]
    # through the ONNX backend (the Executor): the Predictor's memory planner cannot size a data-dependent result yet
    (got,) = PaddlectlBackend.prepare(model).run([boxes, scores])
    assert len(want) > 10
    np.testing.assert_array_equal(np.asarray(got), want)


BOX_CODER_CASES = [
    ("encode_center_size", True, "tensor", 0),
    ("encode_center_size", False, "list", 0),
    ("decode_center_size", True, "tensor", 0),
    ("decode_center_size", False, "list", 0),
    ("decode_center_size", True, "tensor", 1),
    ("decode_center_size", False, "list", 1),
]


@pytest.mark.parametrize(("code", "normalized", "var", "axis"), BOX_CODER_CASES)
def test_box_coder_against_real_paddle(real_paddle, code, normalized, var, axis):
    from _parity import compare

    rng = np.random.default_rng(5)
    priors = _boxes(rng, 5)
    variances = rng.uniform(0.1, 0.3, (5, 4)).astype("float32")
    target = _boxes(rng, 3) if code == "encode_center_size" else rng.normal(0, 0.5, (3, 5, 4)).astype("float32")
    if axis == 1:
        priors, variances = priors[:3], variances[:3]
    inputs = (priors, target) + ((variances,) if var == "tensor" else ())

    def build(mod):
        coder = mod.vision.ops.box_coder
        if var == "tensor":
            return lambda p, t, v: coder(p, v, t, code, normalized, axis)
        return lambda p, t: coder(p, [0.1, 0.1, 0.2, 0.2], t, code, normalized, axis)

    compare(real_paddle, build, *inputs, rtol=1e-5, atol=1e-5, grads=False)


def test_box_coder_round_trips_and_is_differentiable():
    rng = np.random.default_rng(6)
    priors, target = ours.to_tensor(_boxes(rng, 4)), ours.to_tensor(_boxes(rng, 2))
    target.stop_gradient = False
    # normalized boxes: Paddle's pixel-box encode takes the target centre without the +1 its decode
    # adds, so pixel boxes come back half a pixel off (its kernel's, matched above)
    codes = vops.box_coder(priors, [0.1, 0.1, 0.2, 0.2], target)
    back = vops.box_coder(priors, [0.1, 0.1, 0.2, 0.2], codes, "decode_center_size")
    np.testing.assert_allclose(back.numpy(), np.broadcast_to(target.numpy()[:, None], (2, 4, 4)), rtol=1e-5, atol=1e-4)
    back.sum().backward()
    np.testing.assert_allclose(target.grad.numpy(), np.full((2, 4), 4.0), rtol=1e-4)  # each box decoded 4 times
    with pytest.raises(ValueError, match="code_type must be"):
        vops.box_coder(priors, [0.1] * 4, target, "corner")
    with pytest.raises(TypeError, match="list of 4 floats"):
        vops.box_coder(priors, None, target)
