"""paddle.vision.models against real Paddle 3.3.1: every constructor's state_dict (keys, order and
shapes), the eval-mode outputs of one model per family run from Paddle's weights, and a train-mode
backward. Structure checks build Paddle's models under ``LazyGuard`` and ours with zero-filled
parameters (values play no part there), which keeps the 150M-parameter variants cheap."""

from __future__ import annotations

import numpy as np
import pytest
from _parity import compare

import paddlectl.framework as ours
from paddlectl.framework.errors import CheckpointError, ConfigError, ShapeError
from paddlectl.framework.nn import initializer

M = ours.vision.models
FACTORIES = [name for name in M.__all__ if name[0].islower()]
STRUCTURES = [(name, {}) for name in FACTORIES] + [
    *[(f"vgg{d}", {"batch_norm": True}) for d in (11, 13, 16, 19)],
    ("resnet50", {"num_classes": 0, "with_pool": False}),
    ("mobilenet_v1", {"scale": 0.5}),
    ("mobilenet_v2", {"scale": 0.35, "num_classes": 7}),
    ("mobilenet_v3_large", {"scale": 0.75}),
    ("densenet121", {"bn_size": 2, "dropout": 0.1}),
    ("googlenet", {"num_classes": 0}),
    ("inception_v3", {"with_pool": False}),
    ("shufflenet_v2_x1_0", {"act": None}),
]
# (factory, kwargs, input side): one per family, at the smallest input each accepts (or near it).
FORWARDS = [
    ("resnext50_32x4d", {"num_classes": 10}, 32),
    ("resnet34", {"with_pool": False, "num_classes": 0}, 32),
    ("vgg11", {"batch_norm": True, "num_classes": 0}, 32),
    ("alexnet", {"num_classes": 10}, 224),
    ("googlenet", {"num_classes": 10}, 189),
    ("inception_v3", {"num_classes": 10}, 75),
    ("densenet121", {"num_classes": 10}, 32),
    ("mobilenet_v1", {"scale": 0.25, "num_classes": 10}, 32),
    ("mobilenet_v2", {"scale": 0.5, "num_classes": 10}, 32),
    ("mobilenet_v3_large", {"scale": 0.5, "num_classes": 10}, 32),
    ("shufflenet_v2_swish", {"num_classes": 10}, 32),
    ("squeezenet1_0", {"num_classes": 10}, 48),
    ("squeezenet1_1", {"num_classes": 10, "with_pool": False}, 32),
]


@pytest.fixture
def zero_init(monkeypatch):
    """Our parameters start as zeros instead of random draws: the structure is what is checked."""
    for cls in (initializer.Normal, initializer.Uniform, initializer.XavierUniform):
        monkeypatch.setattr(cls, "sample", lambda self, shape, dtype: np.zeros(shape, dtype))


def _shapes(model) -> list[tuple[str, list[int]]]:
    return [(key, list(value.shape)) for key, value in model.state_dict().items()]


def _varied(state: dict, rng) -> dict:
    """Paddle's weights with the 1-D ones (norm scales/shifts, running stats, biases) drawn at random,
    so batch norm in eval mode does more than divide by sqrt(1 + eps)."""
    out = {}
    for key, value in state.items():
        if value.ndim == 1:
            positive = key.endswith(("_variance", "weight"))
            value = rng.uniform(0.5, 1.5, value.shape) if positive else rng.normal(0.0, 0.1, value.shape)
        out[key] = value.astype("float32")
    return out


@pytest.mark.parametrize("name,kwargs", STRUCTURES, ids=[f"{n}-{sorted(k)}" for n, k in STRUCTURES])
def test_state_dict_matches_paddle(real_paddle, zero_init, name, kwargs):
    with real_paddle.LazyGuard():
        theirs = getattr(real_paddle.vision.models, name)(**kwargs)
    assert _shapes(getattr(M, name)(**kwargs)) == _shapes(theirs)


@pytest.mark.parametrize("name,kwargs,side", FORWARDS, ids=[f[0] for f in FORWARDS])
def test_eval_outputs_match_paddle(real_paddle, zero_init, name, kwargs, side):
    rng = np.random.default_rng(0)
    theirs, mine = getattr(real_paddle.vision.models, name)(**kwargs), getattr(M, name)(**kwargs)
    state = _varied({k: v.numpy() for k, v in theirs.state_dict().items()}, rng)
    theirs.set_state_dict(state)
    missing, unexpected = mine.set_state_dict(state)
    assert not missing and not unexpected
    theirs.eval()
    mine.eval()
    x = rng.standard_normal((1, 3, side, side)).astype("float32")
    with real_paddle.no_grad():
        expected = theirs(real_paddle.to_tensor(x))
    with ours.no_grad():
        got = mine(ours.to_tensor(x))
    expected, got = (
        tuple(out) if isinstance(out, tuple) else (out,) for out in (expected, got)
    )  # GoogLeNet: (out, aux1, aux2)
    assert len(got) == len(expected)
    for g, e in zip(got, expected, strict=True):
        e = e.numpy()
        np.testing.assert_allclose(g.numpy(), e, rtol=1e-4, atol=1e-4 * np.abs(e).max())


def test_train_mode_backward_matches_paddle(real_paddle):
    """ShuffleNetV2 x0.25 with Swish (split, channel shuffle, depthwise convs, batch norm on batch
    statistics), in float64 so the comparison is tight: in float32 the two frameworks' summation
    orders alone differ by ~5e-5 of the largest input gradient after 17 batch-normed blocks. Input
    and parameter gradients, then the running statistics the step left behind."""
    theirs = real_paddle.vision.models.ShuffleNetV2(scale=0.25, act="swish", num_classes=10)
    mine = M.ShuffleNetV2(scale=0.25, act="swish", num_classes=10)
    for model in (theirs, mine):
        model.to(dtype="float64")
    mine.set_state_dict({k: v.numpy() for k, v in theirs.state_dict().items()})
    x = np.random.default_rng(1).standard_normal((2, 3, 64, 64))
    compare(
        real_paddle,
        lambda mod: mine if mod is ours else theirs,
        x,
        rtol=1e-7,
        atol=1e-9,
        grad_atol=1e-7,
        layers=(mine, theirs),
    )
    # Paddle applies the 0.9 momentum in float32 (0.1 + 2.4e-7 of the batch statistic), hence 1e-6
    for key, value in theirs.state_dict().items():
        np.testing.assert_allclose(mine.state_dict()[key].numpy(), value.numpy(), rtol=1e-6, atol=1e-9, err_msg=key)


@pytest.mark.parametrize("name", FACTORIES)
def test_pretrained_is_refused_without_download(name):
    with pytest.raises(CheckpointError, match="downloads nothing.*set_state_dict"):
        getattr(M, name)(pretrained=True)


@pytest.mark.parametrize(
    "build",
    [
        lambda: M.resnext50_32x4d(groups=8),
        lambda: M.shufflenet_v2_swish(act="relu"),
        lambda: M.ResNet(M.BasicBlock, depth=20),
        lambda: M.ResNet("BasicBlock"),
        lambda: M.resnet.BasicBlock(64, 64, dilation=2),
        lambda: M.DenseNet(layers=100),
        lambda: M.ShuffleNetV2(scale=0.75),
        lambda: M.ShuffleNetV2(act="gelu"),
        lambda: M.SqueezeNet("1.2"),
        lambda: M.VGG([64, "M"]),
        lambda: M.mobilenetv2.InvertedResidual(8, 8, 3, 6),
    ],
)
def test_bad_configurations_raise_config_error(build):
    with pytest.raises(ConfigError):
        build()


@pytest.mark.parametrize("make", [M.googlenet, M.alexnet])
def test_fixed_size_heads_name_the_input_size_they_need(make):
    net = make(num_classes=4)
    net.eval()
    with pytest.raises(ShapeError, match="224x224"), ours.no_grad():
        net(ours.zeros([1, 3, 96, 96]))


def test_intermediate_layer_getter_matches_paddle(real_paddle):
    """LeNet's ``features`` map, then its Linear head, which needs the 4-D map flattened first."""
    theirs, mine = real_paddle.vision.models.LeNet(), M.LeNet()
    mine.set_state_dict({k: v.numpy() for k, v in theirs.state_dict().items()})
    wanted = {"features": "map", "fc": "logits"}
    x = np.random.default_rng(2).standard_normal((2, 1, 28, 28)).astype("float32")
    expected = real_paddle.vision.models._utils.IntermediateLayerGetter(theirs, wanted)(real_paddle.to_tensor(x))
    got = M._utils.IntermediateLayerGetter(mine, wanted)(ours.to_tensor(x))
    assert list(got) == list(expected) == ["map", "logits"]
    for key, value in expected.items():
        np.testing.assert_allclose(got[key].numpy(), value.numpy(), rtol=1e-5, atol=1e-5)
    with pytest.raises(ConfigError, match="direct sublayers"):
        M._utils.IntermediateLayerGetter(mine, {"features.0": "conv"})


@pytest.mark.parametrize(
    "name,kwargs,spec,shapes",
    [
        ("shufflenet_v2_x0_25", {"num_classes": 10}, [None, 3, None, None], [(2, 3, 32, 32), (1, 3, 48, 40)]),
        ("squeezenet1_1", {"num_classes": 10}, [None, 3, None, None], [(1, 3, 48, 48)]),
    ],
)
def test_exported_onnx_runs_in_onnxruntime(tmp_path, name, kwargs, spec, shapes):
    """The channel shuffle keeps H and W symbolic, and no op without an ONNX form (split, squeeze) is
    recorded: one export serves every input size."""
    ort = pytest.importorskip("onnxruntime")
    model = getattr(M, name)(**kwargs)
    model.eval()
    x0 = np.random.default_rng(3).standard_normal(shapes[0]).astype("float32")
    spec = [ours.jit.InputSpec(spec, "float32", "x")]
    ours.jit.save(model, tmp_path / name, input_spec=spec, verify_inputs=[x0], format="onnx")
    session = ort.InferenceSession(str(tmp_path / f"{name}.onnx"), providers=["CPUExecutionProvider"])
    for shape in shapes:
        x = np.random.default_rng(4).standard_normal(shape).astype("float32")
        with ours.no_grad():
            expected = model(ours.to_tensor(x)).numpy()
        np.testing.assert_allclose(session.run(None, {"x": x})[0], expected, rtol=1e-5, atol=1e-5)
