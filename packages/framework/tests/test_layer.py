import numpy as np
import pytest

import paddlectl.framework as paddle
from paddlectl.framework.errors import DTypeError, ShapeError


class Block(paddle.nn.Layer):
    def __init__(self):
        super().__init__()
        self.fc = paddle.nn.Linear(3, 4)
        self.extra = self.create_parameter([4], is_bias=True)
        self.register_buffer("count", paddle.zeros([1]))
        self.register_buffer("scratch", paddle.zeros([2]), persistable=False)

    def forward(self, x):
        return self.fc(x) + self.extra


def test_registration_and_state_dict_names():
    net = paddle.nn.Sequential(Block(), paddle.nn.LayerList([paddle.nn.Linear(4, 2)]))
    assert list(net.state_dict()) == ["0.extra", "0.count", "0.fc.weight", "0.fc.bias", "1.0.weight", "1.0.bias"]
    assert len(net.parameters()) == 5 and len(net.buffers()) == 2
    assert [n for n, _ in net.named_sublayers()] == ["0", "0.fc", "1", "1.0"]


def test_set_state_dict_reports_and_refuses_before_changing_anything():
    a, b = Block(), Block()
    missing, unexpected = b.set_state_dict({**a.state_dict(), "bogus": np.zeros(1)})
    assert missing == [] and unexpected == ["bogus"]
    np.testing.assert_array_equal(b.fc.weight.numpy(), a.fc.weight.numpy())
    before = b.fc.bias.numpy().copy()
    bad = {"fc.bias": np.ones(4, "float32") * 7, "fc.weight": np.zeros((4, 3), "float32")}
    with pytest.raises(ShapeError, match=r"'fc.weight' has shape \[4, 3\] .* \[3, 4\]"):
        b.set_state_dict(bad)
    np.testing.assert_array_equal(b.fc.bias.numpy(), before)
    with pytest.raises(DTypeError, match="int64"):
        b.set_state_dict({"fc.bias": np.zeros(4, "int64")})
    missing, _ = b.set_state_dict({})
    assert set(missing) == set(a.state_dict())


def test_hooks_train_eval_to_and_apply():
    net = Block()
    calls = []
    pre = net.register_forward_pre_hook(lambda layer, inputs: (inputs[0] * 0,))
    post = net.register_forward_post_hook(lambda layer, inputs, out: calls.append(out.shape) or out * 2)
    out = net(paddle.ones([2, 3]))
    np.testing.assert_allclose(out.numpy(), 2 * (net.fc.bias.numpy() + net.extra.numpy()) * np.ones((2, 1)), rtol=1e-6)
    pre.remove()
    post.remove()
    net(paddle.ones([2, 3]))
    assert calls == [[2, 4]]
    net.eval()
    assert not net.training and not net.fc.training
    net.train()
    assert net.fc.training
    net.to(dtype="float64")
    assert net.fc.weight.dtype == paddle.float64 and net.count.dtype == paddle.float64
    seen = []
    net.apply(lambda layer: seen.append(type(layer).__name__))
    assert seen == ["Linear", "Block"]
    with pytest.raises(DTypeError):
        net.to(dtype="int32")


def test_containers():
    seq = paddle.nn.Sequential(("a", paddle.nn.Linear(2, 3)), ("b", paddle.nn.ReLU()))
    assert isinstance(seq["a"], paddle.nn.Linear) and len(seq[0:1]) == 1
    ld = paddle.nn.LayerDict({"x": paddle.nn.Linear(1, 1)})
    ld["y"] = paddle.nn.Linear(1, 2)
    assert list(ld.keys()) == ["x", "y"] and "y" in ld
    pl = paddle.nn.ParameterList([Block().extra])
    assert len(pl) == 1 and len(pl.parameters()) == 1
    ll = paddle.nn.LayerList([paddle.nn.Linear(1, 1)])
    ll.insert(0, paddle.nn.ReLU())
    assert isinstance(ll[0], paddle.nn.ReLU) and len(ll) == 2


def test_assigning_before_super_init_and_wrong_types():
    class Broken(paddle.nn.Layer):
        def __init__(self):
            self.fc = paddle.nn.Linear(1, 1)

    with pytest.raises(AttributeError, match="super"):
        Broken()
    net = Block()
    with pytest.raises(TypeError, match="parameter 'extra'"):
        net.extra = paddle.ones([4])


def _tensor_attribute_layer(nn, ones, zeros):
    class WithTensor(nn.Layer):
        def __init__(self):
            super().__init__()
            self.lin = nn.Linear(2, 2)
            self.mask = ones([2])
            self.register_buffer("count", zeros([1]))

    return WithTensor()


def test_a_tensor_attribute_is_a_non_persistable_buffer_as_in_paddle(real_paddle):
    layers = [_tensor_attribute_layer(p.nn, p.ones, p.zeros) for p in (paddle, real_paddle)]
    for layer in layers:
        layer.mask = layer.mask * 2  # reassigning keeps it a buffer
    ours, theirs = ([n for n, _ in layer.named_buffers()] for layer in layers)
    assert ours == theirs == ["mask", "count"]
    assert list(layers[0].state_dict()) == list(layers[1].state_dict()) == ["count", "lin.weight", "lin.bias"]
    for layer in layers:
        layer.mask = None
    assert [n for n, _ in layers[0].named_buffers()] == [n for n, _ in layers[1].named_buffers()] == ["count"]

    class Early(paddle.nn.Layer):
        def __init__(self):
            self.mask = paddle.ones([1])

    with pytest.raises(AttributeError, match="super"):
        Early()


def test_linear_matches_paddle(real_paddle):
    ours = paddle.nn.Linear(5, 3)
    theirs = real_paddle.nn.Linear(5, 3)
    theirs.set_state_dict({k: v.numpy() for k, v in ours.state_dict().items()})
    x = np.random.default_rng(0).standard_normal((4, 5)).astype("float32")
    xo, xt = paddle.to_tensor(x, stop_gradient=False), real_paddle.to_tensor(x, stop_gradient=False)
    ours(xo).sum().backward()
    theirs(xt).sum().backward()
    np.testing.assert_allclose(xo.grad.numpy(), xt.grad.numpy(), rtol=1e-5)
    np.testing.assert_allclose(ours.weight.grad.numpy(), theirs.weight.grad.numpy(), rtol=1e-5)
    assert ours.weight.shape == [5, 3]
