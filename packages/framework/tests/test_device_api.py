"""Device/mode helpers, tensor facts, finfo/iinfo, summary and flops against real Paddle."""

from __future__ import annotations

import numpy as np
import pytest

import paddlectl.framework as ours
from paddlectl.framework.errors import DTypeError, ShapeError


def test_set_device_cpu_and_accelerators_raise_with_fix():
    assert str(ours.set_device("cpu")) == "Place(cpu)"
    assert ours.get_device() == "cpu" and ours.device.get_device() == "cpu"
    assert ours.set_device(ours.CPUPlace()) == ours.CPUPlace()
    for name in ("gpu", "gpu:0", "xpu", "cuda:1", "npu"):
        with pytest.raises(ValueError, match="CPU only.*set_device\\('cpu'\\)"):
            ours.set_device(name)
    with pytest.raises(ValueError, match="unknown device"):
        ours.device.set_device("tpu")
    with pytest.raises(ValueError, match="CPU only"):
        ours.CUDAPlace(0)
    assert ours.device.cuda.device_count() == 0
    assert not ours.is_compiled_with_cuda() and not ours.is_compiled_with_xpu() and not ours.is_compiled_with_rocm()


def test_modes():
    assert ours.in_dynamic_mode()
    ours.enable_static()  # static mode itself: tests/test_static_mode.py
    assert not ours.in_dynamic_mode()
    ours.disable_static("cpu")
    assert ours.in_dynamic_mode()


def test_tensor_device_methods():
    x = ours.rand([2, 3])
    assert x.cpu() is x and x.to("cpu") is x
    assert x.to("float64").dtype == np.float64 and x.to(ours.float64).dtype == np.float64
    assert x.to("cpu", "float16").dtype == np.float16 and x.to(dtype="int32").dtype == np.int32
    assert x.to(ours.zeros([1], dtype="int64")).dtype == np.int64
    with pytest.raises(ValueError, match="CPU only"):
        x.cuda()
    with pytest.raises(ValueError, match="CPU only"):
        x.to("gpu")


def test_tensor_facts_match_paddle(real_paddle):
    a = np.arange(6, dtype="float32").reshape(2, 3)
    for mod in (ours, real_paddle):
        x = mod.to_tensor(a)
        assert mod.is_tensor(x) and not mod.is_tensor(a)
    np.testing.assert_array_equal(ours.shape(ours.to_tensor(a)).numpy(), real_paddle.shape(real_paddle.to_tensor(a)))
    assert ours.shape(ours.to_tensor(a)).dtype == np.int64
    n = ours.numel(ours.to_tensor(a))
    assert n.shape == [] and n.item() == 6 and n.dtype == np.int64


def test_assign_copies_and_is_differentiable(real_paddle):
    from _parity import compare

    a = np.random.default_rng(0).standard_normal((2, 3)).astype("float32")
    compare(real_paddle, lambda P: lambda x: P.assign(x) * 2, a)
    y = ours.assign(np.array([1, 2], dtype="int32"))
    assert y.dtype == np.int32 and y.tolist() == [1, 2]
    out = ours.zeros([2, 3])
    assert ours.assign(ours.to_tensor(a), output=out) is out
    np.testing.assert_array_equal(out.numpy(), a)
    w = ours.nn.Linear(3, 2).weight
    ours.assign(np.ones((3, 2), "float32"), output=w)
    assert not w.stop_gradient and isinstance(w, ours.Parameter) and w.numpy().sum() == 6
    with pytest.raises(ShapeError, match="output has shape"):
        ours.assign(ours.to_tensor(a), output=ours.zeros([3]))


def test_create_parameter():
    p = ours.create_parameter([2, 3], "float32")
    assert isinstance(p, ours.Parameter) and p.shape == [2, 3] and not p.stop_gradient
    b = ours.create_parameter([4], "float64", is_bias=True, name="my_bias")
    assert b.dtype == np.float64 and not np.any(b.numpy()) and b.name == "my_bias"
    c = ours.create_parameter([3], "float32", default_initializer=ours.nn.initializer.Constant(2.0))
    np.testing.assert_array_equal(c.numpy(), [2, 2, 2])


@pytest.mark.parametrize("dtype", ["float16", "float32", "float64"])
def test_finfo_matches_paddle(real_paddle, dtype):
    a, b = ours.finfo(dtype), real_paddle.finfo(getattr(real_paddle, dtype))
    for field in ("bits", "eps", "min", "max", "tiny", "smallest_normal", "resolution"):
        assert getattr(a, field) == pytest.approx(getattr(b, field), rel=1e-6), field
    assert a.dtype == dtype


@pytest.mark.parametrize("dtype", ["int8", "int16", "int32", "int64", "uint8"])
def test_iinfo_matches_paddle(real_paddle, dtype):
    a, b = ours.iinfo(dtype), real_paddle.iinfo(getattr(real_paddle, dtype))
    assert (a.bits, a.min, a.max) == (b.bits, b.min, b.max)


def test_info_rejects_wrong_kind():
    with pytest.raises(DTypeError, match="iinfo"):
        ours.finfo("int32")
    with pytest.raises(DTypeError, match="finfo"):
        ours.iinfo("float32")


def _lenet(mod):
    nn = mod.nn
    return nn.Sequential(
        nn.Conv2D(1, 6, 3, padding=1), nn.ReLU(), nn.MaxPool2D(2), nn.Conv2D(6, 4, 3, bias_attr=False), nn.Flatten(),
        nn.Linear(4 * 4 * 4, 10),
    )  # fmt: skip


def _table_body(text: str) -> list[str]:
    """The table's cells without the per-process layer indices ('Conv2D-3' -> 'Conv2D'), which also
    shift the centred columns."""
    import re

    return [re.sub(r"(\w)-\d+ ", r"\1 ", line).split() for line in text.splitlines() if not set(line) <= {"-", "="}]


def test_summary_matches_paddle(real_paddle, capsys):
    from paddle.hapi.model_summary import summary_string

    from paddlectl.framework.hapi.model_summary import summary_string as ours_summary

    theirs, their_params = summary_string(_lenet(real_paddle), (1, 1, 12, 12))
    mine, my_params = ours_summary(_lenet(ours), (1, 1, 12, 12))
    assert my_params == {k: int(v) for k, v in their_params.items()}
    assert _table_body(mine) == _table_body(theirs)
    net = _lenet(ours)
    net[0].weight.stop_gradient = True
    result = ours.summary(net, (1, 1, 12, 12))
    assert result == {"total_params": my_params["total_params"], "trainable_params": my_params["total_params"] - 54}
    assert "Non-trainable params: 54" in capsys.readouterr().out


def test_summary_with_input_tensors_and_requires_size():
    net = ours.nn.Linear(3, 2)
    text, params = ours.hapi.model_summary.summary_string(net, input=ours.rand([4, 3]))
    assert params["total_params"] == 8 and "[4, 2]" in text
    with pytest.raises(ValueError, match="input_size"):
        ours.summary(net)


def test_flops_follow_paddle_rules(capsys):
    net = _lenet(ours)
    # conv1: 6*12*12*(1*9+1); conv2 (no bias): 4*4*4*(6*9); linear: 64 * 10
    expected = 6 * 144 * 10 + 4 * 16 * 54 + 64 * 10
    assert ours.flops(net, [1, 1, 12, 12]) == expected
    assert ours.flops(net, [1, 1, 12, 12], print_detail=True) == expected
    assert f"Total Flops: {expected}" in capsys.readouterr().out

    def count_relu(layer, inputs, output):
        layer.total_ops += int(output.size)

    relu_elems = 6 * 144
    assert ours.flops(net, [1, 1, 12, 12], custom_ops={ours.nn.ReLU: count_relu}) == expected + relu_elems
