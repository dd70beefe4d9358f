"""PP-LiteSeg / U-Net shapes, and test_config inference (sliding window, multi-scale, flip)."""

import numpy as np
import pytest

import paddlectl.framework as paddle
from paddlectl.framework.errors import ConfigError
from paddlectl.seg.infer import SegInference, window_starts
from paddlectl.seg.models import PPLiteSeg, UNet

SMALL_LITESEG = {"backbone": {"base": 8, "layers": [1, 1, 1]}, "cm_out_ch": 16, "arm_out_chs": [8, 12, 16],
                 "seg_head_inter_chs": [8, 8, 8]}  # fmt: skip


def _x(height=32, width=48):
    return paddle.to_tensor(np.random.default_rng(0).normal(size=(2, 3, height, width)).astype(np.float32))


def test_pp_liteseg_trains_three_heads_and_serves_one_at_input_size():
    model = PPLiteSeg(5, **SMALL_LITESEG)
    outputs = model(_x())
    assert [o.shape for o in outputs] == [[2, 5, 32, 48]] * 3
    model.eval()
    assert model(_x()).shape == [2, 5, 32, 48]


def test_unet_output_and_its_size_rule():
    model = UNet(4, base=4, depth=2)
    model.eval()
    assert model(_x()).shape == [2, 4, 32, 48]
    with pytest.raises(ConfigError, match="depth 1..5"):
        UNet(4, depth=7)


def test_windows_cover_the_side_and_the_last_one_is_flush():
    assert window_starts(320, 256, 64) == [(0, 256), (64, 320)]
    assert window_starts(100, 64, 30) == [(0, 64), (30, 94), (36, 100)]
    assert window_starts(50, 64, 32) == [(0, 50)]


def test_a_window_as_large_as_the_image_is_the_plain_forward():
    net = UNet(3, base=4, depth=2)
    net.eval()
    slide = SegInference(net, is_slide=True, crop_size=[48, 32], stride=[16, 16])
    slide.eval()
    np.testing.assert_allclose(slide(_x()).numpy(), net(_x()).numpy(), rtol=1e-5, atol=1e-5)


def test_sliding_windows_average_the_overlaps():
    net = UNet(3, base=4, depth=2)
    net.eval()
    slide = SegInference(net, is_slide=True, crop_size=[32, 32], stride=[16, 16])
    slide.eval()
    x = _x()
    expected = np.zeros((2, 3, 32, 48), np.float32)
    for left in (0, 16):
        expected[..., left : left + 32] += net(x[:, :, :, left : left + 32]).numpy()
    expected[..., 16:32] /= 2
    np.testing.assert_allclose(slide(x).numpy(), expected, rtol=1e-4, atol=1e-5)


def test_flip_and_scales_add_probabilities():
    net = UNet(3, base=4, depth=2)
    net.eval()
    aug = SegInference(net, aug_eval=True, scales=[1.0], flip_horizontal=True)
    aug.eval()
    x = _x()
    prob = paddle.nn.functional.softmax
    expected = prob(net(x), axis=1).numpy() + paddle.flip(prob(net(paddle.flip(x, axis=[3])), axis=1), axis=[3]).numpy()
    np.testing.assert_allclose(aug(x).numpy(), expected, rtol=1e-5, atol=1e-6)
    scaled = SegInference(net, aug_eval=True, scales=[0.5, 1.0])
    scaled.eval()
    assert np.allclose(scaled(x).numpy().sum(axis=1), 2.0, atol=1e-5)  # two probability maps summed
    with pytest.raises(ConfigError, match="crop_size"):
        SegInference(net, is_slide=True)
