"""det.picodet: the loss falls over a few steps, the EMA is what evaluation sees, assignment
and post-processing on hand-made cases."""

import numpy as np
import pytest

import paddlectl.framework as paddle
from paddlectl.detection.picodet.assigner import TaskAlignedAssigner
from paddlectl.detection.picodet.backbone import LCNet
from paddlectl.detection.picodet.head import PicoHead
from paddlectl.detection.picodet.loss import PicoDetLoss
from paddlectl.detection.picodet.model import PicoDet
from paddlectl.detection.picodet.neck import LCPAN
from paddlectl.detection.picodet.postprocess import NMSParams, detections
from paddlectl.framework.errors import DataError


def tiny(ema_decay=None):
    backbone = LCNet(scale=0.25)
    neck = LCPAN(backbone.out_channels, 16)
    return PicoDet(backbone, neck, PicoHead(neck.out_channels, num_classes=2, num_convs=1), ema_decay)


def labels(batch):
    table = np.zeros((batch, 4, 6), np.float32)
    table[:, 1:, 0] = -1
    table[:, 0] = [64, 64, 1, 1, 1, 2]
    table[:, 1] = [0, 4, 6, 30, 34, 0]
    table[:, 2] = [1, 36, 30, 60, 58, 0]
    return paddle.to_tensor(table)


def test_a_few_steps_lower_the_loss():
    paddle.seed(0)
    model, loss_fn = tiny(), PicoDetLoss(num_classes=2)
    optimizer = paddle.optimizer.AdamW(learning_rate=0.01, parameters=model.parameters())
    rng = np.random.default_rng(0)
    images = rng.normal(0, 0.3, (4, 3, 64, 64)).astype(np.float32)
    images[:, :, 6:34, 4:30] += 1.5  # the objects' pixels
    images[:, 0, 30:58, 36:60] -= 1.5
    x, y = paddle.to_tensor(images), labels(4)

    def step() -> float:  # minimize applies what backward computed, then the gradients are cleared
        loss = loss_fn(model(x), y)
        loss.backward()
        optimizer.minimize(loss)
        model.clear_gradients()
        return float(loss)

    losses = [step() for _ in range(12)]
    assert np.isfinite(losses).all()
    assert np.mean(losses[-3:]) < 0.9 * np.mean(losses[:3]), losses


def test_evaluation_sees_the_weight_average_and_training_its_own_weights():
    model = tiny(ema_decay=0.5)
    weight = model.head.outputs[0].weight
    trained = weight.numpy().copy()
    assert any(k.startswith("ema.") for k in model.state_dict())
    model.ema.update(model._weights())  # the average now equals the weights
    weight.set_value(trained + 1.0)
    model.ema.update(model._weights())  # step 1: decay min(0.5, 2/11) -> mostly the new weights
    average = model.ema.state_dict()[model.ema.names["head.outputs.0.weight"]].numpy()
    np.testing.assert_allclose(average, trained + 9 / 11, rtol=1e-5)
    model.eval()
    np.testing.assert_allclose(weight.numpy(), average)
    model.train()
    np.testing.assert_allclose(weight.numpy(), trained + 1.0)


POINTS = np.array([[x + 4.0, y + 4.0] for y in range(0, 64, 8) for x in range(0, 64, 8)], np.float32)


def test_assigner_gives_each_object_points_inside_it_and_a_tiny_one_its_nearest():
    boxes = np.concatenate([POINTS - 6, POINTS + 6], 1)[None]
    scores = np.full((1, len(POINTS), 2), 0.1, np.float32)
    gt = np.array([[[0, 0, 24, 24], [40, 40, 42, 42]]], np.float32)
    result = TaskAlignedAssigner(topk=4)(scores, boxes, POINTS, gt, np.array([[0, 1]]))
    gt_index, score = result.gt_index[0], result.score[0]
    first = np.flatnonzero(gt_index == 0)
    assert 1 <= len(first) <= 4 and ((POINTS[first] > 0) & (POINTS[first] < 24)).all()
    second = np.flatnonzero(gt_index == 1)
    np.testing.assert_allclose(POINTS[second], [[44, 44]])
    assert (score[gt_index < 0] == 0).all() and score[first].max() > 0


def test_a_batch_is_assigned_as_its_images_alone_padding_and_crowd_rows_ignored():
    rng = np.random.default_rng(0)
    scores = rng.random((3, len(POINTS), 2)).astype(np.float32)
    boxes = np.concatenate([POINTS - 10, POINTS + 10], 1) + rng.normal(0, 3, (3, len(POINTS), 4)).astype(np.float32)
    objects = [
        np.array([[2, 2, 30, 26], [20, 10, 60, 50], [50, 2, 52, 4]], np.float32),
        np.array([[8, 30, 40, 62]], np.float32),
        np.array([[0, 0, 64, 64], [16, 16, 48, 48]], np.float32),
    ]
    classes = [np.array([0, 1, 1]), np.array([1]), np.array([1, 0])]
    gt, gt_classes, valid = np.zeros((3, 4, 4), np.float32), np.zeros((3, 4), np.int64), np.zeros((3, 4), bool)
    for i, (o, c) in enumerate(zip(objects, classes, strict=True)):
        gt[i, : len(o)], gt_classes[i, : len(o)], valid[i, : len(o)] = o, c, True
    gt[1, 1], valid[1, 1] = [0, 0, 64, 64], False  # a crowd object: listed, not assigned
    assigner = TaskAlignedAssigner(topk=5)
    batch = assigner(scores, boxes, POINTS, gt, gt_classes, valid)
    for i, (o, c) in enumerate(zip(objects, classes, strict=True)):
        alone = assigner(scores[i : i + 1], boxes[i : i + 1], POINTS, o[None], c[None])
        np.testing.assert_array_equal(batch.gt_index[i], alone.gt_index[0])
        np.testing.assert_allclose(batch.score[i], alone.score[0], rtol=1e-6)
        assert set(np.unique(batch.gt_index[i])) == {-1, *range(len(o))}  # every object learns


def test_postprocess_runs_nms_on_exported_outputs_splits_nms_rows_and_refuses_other_shapes():
    params = NMSParams(score_threshold=0.3, nms_threshold=0.5, keep_top_k=10)
    boxes = np.array([[[0, 0, 10, 10], [1, 1, 11, 11], [20, 20, 30, 30]]], np.float32)
    scores = np.array(
        [
            [[0.9, 0.8, 0.1]],
        ],
        np.float32,
    )  # one class: the overlapping box is suppressed
    (found,) = detections([boxes, scores], params, 1, 7, [8, 16, 32])
    np.testing.assert_allclose(found, [[0, 0.9, 0, 0, 10, 10]])
    rows = np.arange(18, dtype=np.float32).reshape(3, 6)  # NMS inside the model: rows and per-image counts
    first, second = detections([rows, np.array([1, 2])], params, 1, 7, [8, 16, 32])
    np.testing.assert_array_equal(first, rows[:1])
    np.testing.assert_array_equal(second, rows[1:])
    with pytest.raises(DataError, match="raw"):
        detections([np.zeros((3, 5), np.float32), np.array([3])], params, 1, 7, [8, 16, 32])


def test_served_forward_decodes_boxes_in_source_pixels():
    model = tiny().eval()
    image = paddle.to_tensor(np.zeros((1, 3, 64, 64), np.float32))
    boxes, scores = model(image, paddle.to_tensor(np.array([[0.5, 0.25]], np.float32)))
    half, quarter = model(image, paddle.to_tensor(np.array([[1.0, 1.0]], np.float32)))[0].numpy(), boxes.numpy()
    assert boxes.shape == [1, 84, 4] and scores.shape == [1, 2, 84]
    np.testing.assert_allclose(quarter[..., [0, 2]], half[..., [0, 2]] * 4, rtol=1e-5)
    np.testing.assert_allclose(quarter[..., [1, 3]], half[..., [1, 3]] * 2, rtol=1e-5)
