"""Gradient clipping objects called directly, against real PaddlePaddle."""

from __future__ import annotations

import numpy as np
import pytest

import paddlectl.framework as ours

SHAPES = [(4, 3), (5,), (1,), (0,)]


def _pairs(lib, dtype="float32", scale=1.0, need_clip=None, seed=0):
    rng = np.random.default_rng(seed)
    pairs = []
    for i, shape in enumerate(SHAPES):
        value = rng.standard_normal(shape).astype(dtype)
        grad = (rng.standard_normal(shape) * scale).astype(dtype)
        if lib is ours:
            param = ours.Parameter(value)
        else:
            param = lib.create_parameter(list(shape), dtype, default_initializer=lib.nn.initializer.Assign(value))
        if need_clip is not None:
            param.need_clip = need_clip[i]
        pairs.append((param, lib.to_tensor(grad, dtype=dtype)))
    return pairs


CLIPS = {
    "global_norm_clips": lambda lib: lib.nn.ClipGradByGlobalNorm(1.0),
    "global_norm_no_clip": lambda lib: lib.nn.ClipGradByGlobalNorm(1e3),
    "global_norm_auto_skip_clips": lambda lib: lib.nn.ClipGradByGlobalNorm(1.0, auto_skip_clip=True),
    "global_norm_auto_skip_skips": lambda lib: lib.nn.ClipGradByGlobalNorm(1e3, auto_skip_clip=True),
    "norm": lambda lib: lib.nn.ClipGradByNorm(1.0),
    "norm_loose": lambda lib: lib.nn.ClipGradByNorm(100.0),
    "value": lambda lib: lib.nn.ClipGradByValue(0.5),
    "value_asymmetric": lambda lib: lib.nn.ClipGradByValue(max=1.0, min=-0.2),
}


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("need_clip", [None, (False, True, True, True)])
@pytest.mark.parametrize("name", sorted(CLIPS))
def test_clip_matches_paddle(name, need_clip, dtype, real_paddle):
    if name.startswith("norm") and dtype == "float64":
        pytest.skip("Paddle's CPU clip_by_norm has no float64 kernel; test_clip_by_norm_float64 covers ours")
    got = CLIPS[name](ours)(_pairs(ours, dtype, scale=2.0, need_clip=need_clip))
    want = CLIPS[name](real_paddle)(_pairs(real_paddle, dtype, scale=2.0, need_clip=need_clip))
    assert len(got) == len(want)
    for (gp, gg), (wp, wg) in zip(got, want, strict=True):
        assert gp.shape == list(wp.shape)
        assert gg.numpy().dtype == wg.numpy().dtype
        np.testing.assert_allclose(gg.numpy(), wg.numpy(), rtol=1e-6 if dtype == "float32" else 1e-12)


def test_global_norm_ignores_missing_gradients():
    pairs = _pairs(ours)
    pairs[1] = (pairs[1][0], None)
    out = ours.nn.ClipGradByGlobalNorm(0.1)(pairs)
    assert [p for p, _ in out] == [pairs[0][0], pairs[2][0], pairs[3][0]]
    kept = [g.numpy() for _, g in pairs if g is not None]
    norm = np.sqrt(sum(float(np.sum(g.astype(np.float64) ** 2)) for g in kept))
    for (_, g), original in zip(out, kept, strict=True):
        np.testing.assert_allclose(g.numpy(), original * (0.1 / norm), rtol=1e-5)


def test_global_norm_with_nothing_to_clip_returns_input():
    pairs = _pairs(ours, need_clip=(False, False, False, False))
    out = ours.nn.ClipGradByGlobalNorm(0.1)(pairs)
    assert all(g is og for (_, g), (_, og) in zip(out, pairs, strict=True))


def test_clip_arguments_are_checked():
    with pytest.raises(ValueError, match="max must be positive"):
        ours.nn.ClipGradByValue(-1.0)
    with pytest.raises(TypeError, match="auto_skip_clip"):
        ours.nn.ClipGradByGlobalNorm(1.0, auto_skip_clip=1)


def test_clip_by_norm_float64():
    out = ours.nn.ClipGradByNorm(1.0)(_pairs(ours, "float64", scale=2.0))
    for (_, got), (_, grad) in zip(out, _pairs(ours, "float64", scale=2.0), strict=True):
        g = grad.numpy()
        norm = np.sqrt(np.sum(g * g))
        np.testing.assert_allclose(got.numpy(), g / norm if norm > 1.0 else g, rtol=1e-12)


def test_str_follows_paddle(real_paddle):
    for make in CLIPS.values():
        assert str(make(ours)) == str(make(real_paddle))
