"""paddle.amp: auto_cast lists and policy, decorate O2 with master weights, GradScaler, NaN/Inf checker."""

from __future__ import annotations

import numpy as np
import pytest

import paddlectl.framework as paddle
from paddlectl.framework.amp import debugging
from paddlectl.framework.core import dispatch
from paddlectl.framework.errors import ConfigError

RNG = np.random.default_rng(0)
LIST_CASES = [
    (None, None, "O1", "float16"),
    (["softmax", "exp"], ["matmul_v2", "relu"], "O1", "float16"),
    (["layer_norm"], None, "O2", "bfloat16"),
    (None, ["conv2d"], "O2", "float16"),
    (["tanh"], None, "O0", "float16"),
]


@pytest.mark.parametrize(("white", "black", "level", "dtype"), LIST_CASES)
def test_auto_cast_lists_are_paddles(real_paddle, white, black, level, dtype):
    from paddle.amp.auto_cast import _update_list

    from paddlectl.framework.amp import lists

    assert lists.resolve(white, black, level, dtype) == _update_list(white, black, level, dtype)


def test_auto_cast_runs_white_ops_low_and_black_ops_in_float32():
    x = paddle.to_tensor(RNG.standard_normal((4, 8)).astype("float32"))
    w = paddle.to_tensor(RNG.standard_normal((8, 8)).astype("float32"))
    with paddle.amp.auto_cast(dtype="bfloat16"):
        assert paddle.amp.is_auto_cast_enabled() and paddle.amp.get_amp_dtype() == "bfloat16"
        h = paddle.matmul(x, w)  # white
        s = paddle.nn.functional.softmax(h)  # black
        t = paddle.tanh(h)  # neither: stays in its input's dtype
        mixed = h + x  # neither, float32 beside bfloat16: promoted
        linear = paddle.nn.Linear(8, 8)(x)  # but a bias add (a float32 parameter) stays bfloat16
        with paddle.amp.auto_cast(enable=False):
            plain = paddle.matmul(x, w)
    assert (h.dtype, s.dtype, t.dtype, mixed.dtype, plain.dtype, linear.dtype) == (
        paddle.bfloat16, paddle.float32, paddle.bfloat16, paddle.float32, paddle.float32, paddle.bfloat16,
    )  # fmt: skip
    assert dispatch.POLICY is None  # off again: the dispatch fast path is back
    with paddle.amp.auto_cast(custom_white_list=["softmax"], custom_black_list=["matmul_v2"]):
        assert paddle.matmul(x, w).dtype == paddle.float32
        assert paddle.nn.functional.softmax(x).dtype == paddle.float16


def test_auto_cast_gradients_reach_float32_parameters():
    layer = paddle.nn.Linear(8, 4)
    x = paddle.to_tensor(RNG.standard_normal((3, 8)).astype("float32"))
    with paddle.amp.auto_cast():
        loss = layer(x).mean()
    loss.backward()
    assert layer.weight.grad.dtype == paddle.float32
    want = np.repeat(x.numpy().mean(0, keepdims=True).T / 4, 4, axis=1)
    np.testing.assert_allclose(layer.weight.grad.numpy(), want, rtol=1e-2, atol=1e-3)


@pytest.mark.parametrize(
    ("kwargs", "word"),
    [({"level": "O3"}, "level"), ({"dtype": "int8"}, "dtype"), ({"enable": "yes"}, "enable"),
     ({"custom_white_list": ["exp"], "custom_black_list": ["exp"]}, "both"), ({"custom_white_list": "exp"}, "list")],
)  # fmt: skip
def test_auto_cast_bad_arguments(kwargs, word):
    with pytest.raises(ConfigError, match=word), paddle.amp.auto_cast(**kwargs):
        pass
    assert dispatch.POLICY is None


def _real_scaler(real_paddle, **kwargs):
    """Real Paddle's GradScaler with its arithmetic on: on a CPU it switches itself off, so the check
    for a GPU place is answered yes and the scale kept 0-d (its log line calls float() on it)."""
    import paddle.amp.grad_scaler as gs
    from paddle.amp.auto_cast import amp_global_state

    class _Place:
        def is_gpu_place(self):
            return True

    class _Tracer:
        _expected_place = _Place()

    real_tracer, gs._dygraph_tracer = gs._dygraph_tracer, _Tracer
    try:
        scaler = real_paddle.amp.GradScaler(**kwargs)
    finally:
        gs._dygraph_tracer = real_tracer
    amp_global_state().amp_dtype = "float16"
    scaler._scale = real_paddle.to_tensor(np.float32(kwargs["init_loss_scaling"]))
    return scaler


def _scaler_run(mod, scaler, steps=6, bad=(1, 2, 4)):
    mod.seed(0)
    layer = mod.nn.Linear(3, 2)
    layer.weight.set_value(np.arange(6, dtype="float32").reshape(3, 2) / 10)
    opt = mod.optimizer.SGD(0.1, parameters=layer.parameters())
    x = mod.to_tensor(np.ones((4, 3), "float32"))
    trace = []
    for step in range(steps):
        loss = layer(x).mean()
        if step in bad:
            loss = loss * float("inf")
        scaler.scale(loss).backward()
        scaler.step(opt)
        scaler.update()
        opt.clear_grad()
        state = scaler.state_dict()
        trace.append((float(np.asarray(state["scale"]).reshape(-1)[0]), state["incr_count"], state["decr_count"]))
    return trace, layer.weight.numpy()


def test_grad_scaler_matches_paddle_on_injected_inf(real_paddle, capsys):
    kwargs = {"init_loss_scaling": 1024.0, "incr_every_n_steps": 2, "decr_every_n_nan_or_inf": 2}
    ours = _scaler_run(paddle, paddle.amp.GradScaler(**kwargs))
    theirs = _scaler_run(real_paddle, _real_scaler(real_paddle, **kwargs))
    assert ours[0] == theirs[0]
    np.testing.assert_allclose(ours[1], theirs[1], rtol=1e-6)


def test_grad_scaler_skips_the_step_and_round_trips_its_state():
    scaler = paddle.amp.GradScaler()
    assert scaler.get_loss_scaling() == 65536.0
    layer = paddle.nn.Linear(2, 1)
    opt = paddle.optimizer.SGD(0.1, parameters=layer.parameters())
    before = layer.weight.numpy().copy()
    scaler.scale(layer(paddle.to_tensor([[np.inf, 1.0]])).mean()).backward()
    scaler.unscale_(opt)
    with pytest.raises(RuntimeError, match="already been called"):
        scaler.unscale_(opt)
    scaler.step(opt)
    scaler.update()
    np.testing.assert_array_equal(layer.weight.numpy(), before)
    assert scaler.get_loss_scaling() == 32768.0
    other = paddle.amp.GradScaler(init_loss_scaling=8.0)
    other.load_state_dict(scaler.state_dict())
    assert other.state_dict()["scale"] == scaler.state_dict()["scale"] and other._decr_count == 0
    with pytest.raises(ConfigError, match="missing keys"):
        other.load_state_dict({"scale": np.array([2.0])})
    with pytest.raises(ConfigError, match="decr_ratio"):
        paddle.amp.GradScaler(decr_ratio=1.5)


def test_decorate_o2_keeps_float32_master_weights():
    model = paddle.nn.Sequential(paddle.nn.Linear(1, 1, bias_attr=False), paddle.nn.BatchNorm1D(1))
    model[0].weight.set_value(np.ones((1, 1), "float32"))
    opt = paddle.optimizer.SGD(1e-4, parameters=model.parameters())
    model, opt = paddle.amp.decorate(model, opt, level="O2", dtype="bfloat16")
    assert model[0].weight.dtype == paddle.bfloat16 and model[1].weight.dtype == paddle.float32
    for _ in range(100):  # each step adds 1e-4: lost in bfloat16 (spacing 2**-7 at 1.0), kept by the master
        model[0].weight.grad = paddle.to_tensor([[-1.0]]).astype("bfloat16")
        opt.step()
    master = opt.state_dict()["master_weights"][model[0].weight.name]
    assert master.dtype == paddle.float32
    np.testing.assert_allclose(master.numpy(), [[1.01]], rtol=1e-5)
    assert model[0].weight.astype("float32").numpy()[0, 0] == np.float32(1.01).astype(paddle.bfloat16)
    with pytest.raises(ConfigError, match="level"):
        paddle.amp.decorate(model, level="O3")


def test_tensor_checker_names_the_op_and_the_layer():
    model = paddle.nn.Sequential(paddle.nn.Linear(2, 3), paddle.nn.ReLU(), paddle.nn.Linear(3, 1))
    model[2].weight.set_value(np.full((3, 1), np.inf, "float32"))
    x = paddle.to_tensor([[1.0, 2.0]])
    debugging.enable_tensor_checker(debugging.TensorCheckerConfig(True))
    try:
        with pytest.raises(debugging.NumericsError, match=r"op 'matmul'.*layer '2' of Sequential \(Linear\)"):
            model(x)
        mode = debugging.DebugMode.CHECK_NAN_INF
        debugging.enable_tensor_checker(debugging.TensorCheckerConfig(True, debug_mode=mode))
        with pytest.warns(RuntimeWarning, match="first appear in the output of op 'matmul'"):
            model(x)
    finally:
        debugging.disable_tensor_checker()
    assert dispatch.POLICY is None


def test_grad_scaler_minimize_skips_then_steps():
    layer = paddle.nn.Linear(2, 1)
    opt = paddle.optimizer.SGD(0.1, parameters=layer.parameters())
    scaler = paddle.amp.GradScaler(init_loss_scaling=4.0, incr_every_n_steps=1)
    before = layer.weight.numpy().copy()
    scaled = scaler.scale(layer(paddle.to_tensor([[np.nan, 1.0]])).mean())
    scaled.backward()
    assert scaler.minimize(opt, scaled) == (None, [])
    np.testing.assert_array_equal(layer.weight.numpy(), before)
    opt.clear_grad()
    scaled = scaler.scale(layer(paddle.to_tensor([[1.0, 1.0]])).mean())
    scaled.backward()
    scaler.minimize(opt, scaled)
    np.testing.assert_allclose(layer.weight.numpy(), before - 0.1, rtol=1e-6)  # the unscaled gradient, 1
    assert scaler.get_loss_scaling() == 4.0  # halved, then doubled


def test_decorate_float16_keeps_layer_norm_float32_and_excluded_layers():
    model = paddle.nn.Sequential(paddle.nn.Linear(4, 4), paddle.nn.LayerNorm(4), paddle.nn.Linear(4, 2))
    paddle.amp.decorate(model, level="O2", dtype="float16", excluded_layers=model[2])
    assert [p.dtype.name for p in model.parameters()] == [
        "float16",
        "float16",
        "float32",
        "float32",
        "float32",
        "float32",
    ]


def test_overflow_mode_warns_where_float16_would_overflow():
    mode = debugging.DebugMode.CHECK_ALL_FOR_OVERFLOW
    debugging.enable_tensor_checker(debugging.TensorCheckerConfig(True, debug_mode=mode))
    try:
        with pytest.warns(RuntimeWarning, match="past float16's 65504"):
            paddle.to_tensor([300.0]) * paddle.to_tensor([300.0])
    finally:
        debugging.disable_tensor_checker()


def test_to_static_under_auto_cast_records_the_casts():
    paddle.seed(0)
    model = paddle.nn.Sequential(paddle.nn.Linear(8, 8), paddle.nn.ReLU(), paddle.nn.Linear(8, 3))
    x = paddle.to_tensor(RNG.standard_normal((4, 8)).astype("float32"))
    with paddle.amp.auto_cast():
        eager = model(x)
        traced = paddle.jit.to_static(model)(x)
    assert traced.dtype == eager.dtype == paddle.float16
    np.testing.assert_array_equal(traced.numpy(), eager.numpy())
