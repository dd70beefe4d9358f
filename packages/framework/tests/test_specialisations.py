"""A model fed many shapes compiles its kernels once per kind of input, not once per shape.

Numba compiles a kernel per signature (dtypes, ranks, layouts), never per size, and the fusion
pass keys its generated kernels by body, dtypes and broadcast pattern: a recogniser fed text
lines of every width must reach a fixed set of compiled specialisations after its first few
lines, not compile again for each new width (issue 31: fewer specialisations, a cold start paid once).
"""

from __future__ import annotations

import gc

import numpy as np
import pytest
from numba.core.dispatcher import Dispatcher

import paddlectl.framework as paddle
from paddlectl.framework import inference, jit, nn
from paddlectl.framework.jit import InputSpec


class _LineNet(nn.Layer):
    """A small CRNN-like net: 3x3 conv + batch norm + hardswish, a depthwise 5x5, a 1x1 conv, a
    pool over the height, and a softmax over the classes per column."""

    def __init__(self) -> None:
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2D(3, 16, 3, stride=2, padding=1), nn.BatchNorm2D(16), nn.Hardswish())
        self.depthwise = nn.Conv2D(16, 16, 5, padding=2, groups=16)
        self.pointwise = nn.Conv2D(16, 24, 1)
        self.eval()

    def forward(self, x):
        y = self.pointwise(nn.functional.relu(self.depthwise(self.stem(x))))
        return nn.functional.softmax(y.mean(axis=2).transpose([0, 2, 1]), axis=-1)


def _specialisations() -> int:
    """Every compiled Numba specialisation in this process (kernels, their variants, fused groups);
    by type, since ``isinstance`` on a dead weak proxy among the objects raises."""
    return sum(len(d.overloads) for d in gc.get_objects() if issubclass(type(d), Dispatcher))


@pytest.fixture(scope="module")
def line_model(tmp_path_factory):
    paddle.seed(5)
    path = tmp_path_factory.mktemp("lines") / "m"
    jit.save(_LineNet(), path, input_spec=[InputSpec([None, 3, 32, None], "float32", "x")])
    return path


@pytest.mark.parametrize("threads", [1, 2])
def test_new_widths_and_batches_compile_nothing_new(line_model, threads):
    config = inference.Config(str(line_model))
    config.set_cpu_math_library_num_threads(threads)
    config.switch_optim_cache(False)
    predictor = inference.create_predictor(config)
    rng = np.random.default_rng(0)

    def feed(batch, width):
        out = predictor.run([rng.standard_normal((batch, 3, 32, width)).astype(np.float32)])[0]
        assert out.shape == (batch, -(-width // 2), 24)

    for width in range(64, 257, 16):  # every kind of input once: batch 1 and 3, narrow to wide lines
        feed(1, width)
        feed(3, width)
    warm = _specialisations()
    for width in range(72, 249, 16):  # widths (and a batch) never seen, within the same range
        feed(1, width)
        feed(2, width)
    assert _specialisations() == warm
