"""Paddle 3.3.1 names the API replay found missing (issue 30), each against real Paddle: the
``paddle.tensor``/``paddle.base``/``paddle.framework`` namespaces, ``set_flags``/``get_flags``,
``Tensor.unfold``, ``paddle.view``/``view_as``, ``LazyGuard``, ``nn.SpectralNorm`` and
``nn.utils.spectral_norm`` (Paddle's power iteration, values and gradients), and ``paddle.jit``'s
switches."""

from __future__ import annotations

import numpy as np
import pytest
from _parity import compare

import paddlectl.framework as paddle
from paddlectl.framework.errors import ConfigError, ShapeError

# ----- namespaces --------------------------------------------------------------------------------


def test_namespaces_alias_the_top_level_without_copies():
    import paddlectl.framework.base as base  # importable as modules, as Paddle's are
    import paddlectl.framework.tensor as tensor_ns

    assert tensor_ns is paddle.tensor
    assert paddle.tensor.triu is paddle.triu
    assert paddle.tensor.math.frexp is paddle.frexp  # Paddle's submodules resolve to the same names
    assert paddle.tensor.search.argwhere is paddle.argwhere
    assert base.Program is paddle.static.Program and base.set_flags is paddle.set_flags
    assert paddle.framework.in_dynamic_mode is paddle.in_dynamic_mode
    with pytest.raises(AttributeError):
        paddle.tensor.no_such_function  # noqa: B018


def test_tensor_namespace_is_callable_like_paddles(real_paddle):
    for mod in (paddle, real_paddle):
        x = mod.tensor(1, requires_grad=True)
        assert x.shape == [] and str(x.dtype).endswith("int64") and not x.stop_gradient
        y = mod.tensor([[0.1, 0.2], [0.3, 0.4]], requires_grad=False)
        assert str(y.dtype).endswith("float32") and y.stop_gradient
        z = mod.tensor(x)
        assert z.stop_gradient  # a copy, with the default stop_gradient
    with pytest.raises(ConfigError):
        paddle.base(1)  # a namespace without a function refuses a call, typed


def test_dygraph_guard_runs_eagerly_and_resumes_static_mode():
    paddle.enable_static()
    try:
        with paddle.base.dygraph.guard():
            assert paddle.in_dynamic_mode()
            assert paddle.to_tensor([1.0, 2.0]).sum().item() == 3.0
        assert not paddle.in_dynamic_mode()
    finally:
        paddle.disable_static()


# ----- flags -------------------------------------------------------------------------------------


def test_flags_read_back_with_paddles_defaults_and_types(real_paddle):
    names = ["FLAGS_eager_delete_tensor_gb", "FLAGS_check_nan_inf", "FLAGS_use_stride_kernel", "FLAGS_call_stack_level"]
    assert paddle.get_flags(names) == pytest.approx(real_paddle.get_flags(names))
    paddle.set_flags({"FLAGS_eager_delete_tensor_gb": 1})
    try:
        assert paddle.get_flags("FLAGS_eager_delete_tensor_gb") == {"FLAGS_eager_delete_tensor_gb": 1.0}
    finally:
        paddle.set_flags({"FLAGS_eager_delete_tensor_gb": 0.0})
    for bad in ({"FLAGS_no_such_flag": 1}, {"FLAGS_check_nan_inf": "yes"}):
        with pytest.raises(ConfigError):
            paddle.set_flags(bad)
    with pytest.raises(ConfigError):
        paddle.get_flags(["FLAGS_no_such_flag"])


def test_check_nan_inf_flag_switches_the_checker_on_and_off():
    from paddlectl.framework.amp.debugging import NumericsError

    paddle.set_flags({"FLAGS_check_nan_inf": True})
    try:
        with pytest.raises(NumericsError):
            paddle.log(paddle.to_tensor([-1.0]))
    finally:
        paddle.set_flags({"FLAGS_check_nan_inf": False})
    assert np.isnan(paddle.log(paddle.to_tensor([-1.0])).numpy()).all()


# ----- Tensor.unfold, view, view_as ------------------------------------------------------------


@pytest.mark.parametrize(
    "shape, axis, size, step",
    [((9,), 0, 2, 4), ((2, 7, 3), 1, 3, 3), ((2, 3, 4), -1, 2, 2), ((2, 3, 4), 1, 0, 1), ((5,), 0, 5, 1)],
)
def test_unfold_matches_paddle(real_paddle, shape, axis, size, step):
    x = np.random.default_rng(0).standard_normal(shape)
    compare(real_paddle, lambda mod: lambda t: mod.unfold(t, axis, size, step), x)


def test_unfold_gradient_sums_overlapping_windows(torch):
    """Windows that overlap each carry a gradient to the shared element. Paddle 3.3.1 keeps only
    the last window's ([1, 1, 1] for 3 elements, size 2, step 1); PyTorch and finite differences
    give the sum, which is what this returns."""
    x = np.random.default_rng(1).standard_normal((2, 7, 3))
    cot = np.random.default_rng(2).standard_normal((2, 3, 3, 3))
    t = paddle.to_tensor(x, stop_gradient=False)
    (t.unfold(1, 3, 2) * paddle.to_tensor(cot)).sum().backward()
    r = torch.tensor(x, requires_grad=True)
    (r.unfold(1, 3, 2) * torch.tensor(cot)).sum().backward()
    np.testing.assert_allclose(t.grad.numpy(), r.grad.numpy(), rtol=1e-12)


def test_unfold_refuses_bad_windows_typed():
    x = paddle.arange(6, dtype="float32")
    for args in ((0, 7, 1), (0, 2, 0), (1, 1, 1), (0, 2.0, 1)):
        with pytest.raises(ShapeError):
            x.unfold(*args)


def test_view_and_view_as_at_the_top_level(real_paddle):
    x = np.random.default_rng(3).random((2, 4, 6)).astype("float32")
    for shape in ([8, 6], [8, -1]):
        compare(real_paddle, lambda mod, s=shape: lambda t: mod.view(t, s), x)
    assert paddle.view(paddle.to_tensor(x), "uint8").shape == [2, 4, 24]
    np.testing.assert_array_equal(
        paddle.view(paddle.to_tensor(x), "uint8").numpy(), real_paddle.view(real_paddle.to_tensor(x), "uint8").numpy()
    )
    assert paddle.view_as(paddle.to_tensor(x), paddle.zeros([8, 6])).shape == [8, 6]


# ----- LazyGuard ---------------------------------------------------------------------------------


def test_lazy_parameters_draw_paddles_values_when_initialized(real_paddle):
    drawn = []
    for mod in (paddle, real_paddle):
        mod.seed(11)
        with mod.LazyGuard():
            net = mod.nn.Linear(4, 3)
        assert not net.weight._is_initialized()
        mod.randn([2])  # a draw in between: lazy values come from the stream as it is at initialize()
        for p in net.parameters():
            p.initialize()
        drawn.append((net.weight.numpy(), net.bias.numpy()))
    np.testing.assert_array_equal(drawn[0][0], drawn[1][0])
    np.testing.assert_array_equal(drawn[0][1], drawn[1][1])
    with pytest.raises(ConfigError):
        net_ours = paddle.nn.Linear(2, 2)
        net_ours.weight.initialize()


# ----- spectral norm -----------------------------------------------------------------------------


@pytest.mark.parametrize("shape, dim, iters", [((2, 8, 5, 5), 1, 2), ((6, 4), 0, 1), ((3, 4, 5), 1, 3)])
def test_spectral_norm_layer_matches_paddle(real_paddle, shape, dim, iters):
    x = np.random.default_rng(4).standard_normal(shape).astype("float32")
    layers = []
    for mod in (paddle, real_paddle):
        mod.seed(2023)
        layers.append(mod.nn.SpectralNorm(list(shape), dim=dim, power_iters=iters))
    np.testing.assert_array_equal(layers[0].weight_u.numpy(), layers[1].weight_u.numpy())
    np.testing.assert_array_equal(layers[0].weight_v.numpy(), layers[1].weight_v.numpy())
    compare(real_paddle, lambda mod: layers[0] if mod is paddle else layers[1], x, rtol=2e-5, atol=1e-6, grads=False)
    assert layers[0].weight_u.stop_gradient and layers[0].weight_v.stop_gradient  # constants, not trained
    u_before = layers[0].weight_u.numpy().copy()
    layers[0](paddle.to_tensor(x))
    np.testing.assert_array_equal(layers[0].weight_u.numpy(), u_before)  # Paddle's kernel writes nothing back


def test_spectral_norm_layer_gradient_against_finite_differences():
    """With the power iteration converged, u and v are the top singular vectors and d sigma / dW is
    u v^T, so treating them as constants is the derivative: central differences agree."""
    shape = (4, 3, 2)
    x = np.random.default_rng(6).standard_normal(shape)
    layer = paddle.nn.SpectralNorm(list(shape), dim=1, power_iters=200, dtype="float64")
    cot = np.random.default_rng(7).standard_normal(shape)
    t = paddle.to_tensor(x, stop_gradient=False)
    (layer(t) * paddle.to_tensor(cot)).sum().backward()
    numeric = np.zeros(shape)
    for idx in np.ndindex(shape):
        plus, minus = x.copy(), x.copy()
        plus[idx] += 1e-6
        minus[idx] -= 1e-6
        f = lambda a: float((layer(paddle.to_tensor(a)).numpy() * cot).sum())  # noqa: E731
        numeric[idx] = (f(plus) - f(minus)) / 2e-6
    np.testing.assert_allclose(t.grad.numpy(), numeric, rtol=1e-5, atol=1e-7)


def test_spectral_norm_layer_refuses_a_weight_of_another_shape():
    with pytest.raises(ShapeError):
        paddle.nn.SpectralNorm([3, 4])(paddle.zeros([4, 3]))
    with pytest.raises(ShapeError):
        paddle.nn.SpectralNorm([3, 0])


@pytest.mark.parametrize("cls, args", [("Conv2D", (3, 2, 3)), ("Linear", (5, 4))])
def test_spectral_norm_hook_matches_paddle(real_paddle, cls, args):
    """Power iterations in training mode update u and v in place, in eval mode they are used as
    they are; the weight's gradient flows through weight_orig."""
    results = []
    for mod in (paddle, real_paddle):
        mod.seed(7)
        layer = mod.nn.utils.spectral_norm(getattr(mod.nn, cls)(*args), n_power_iterations=2)
        x = mod.to_tensor(np.random.default_rng(5).standard_normal((2, 3, 6, 6) if cls == "Conv2D" else (2, 5)))
        x = x.astype("float32")
        out = layer(x)
        out2 = layer(x)  # a second training step iterates from the updated u, v
        layer.eval()
        out3 = layer(x)
        (out2 * out2).sum().backward()
        results.append([t.numpy() for t in (layer.weight_u, layer.weight_v, out, out2, out3, layer.weight_orig.grad)])
    for got, expected in zip(*results, strict=True):
        np.testing.assert_allclose(got, expected, rtol=2e-5, atol=2e-6)


def test_spectral_norm_hook_refuses_twice_and_bad_iterations():
    layer = paddle.nn.utils.spectral_norm(paddle.nn.Linear(3, 3))
    with pytest.raises(ConfigError):
        paddle.nn.utils.spectral_norm(layer)
    with pytest.raises(ConfigError):
        paddle.nn.utils.spectral_norm(paddle.nn.Linear(3, 3), n_power_iterations=0)


# ----- paddle.jit switches -----------------------------------------------------------------------


def test_enable_to_static_false_runs_python_eagerly():
    calls = []

    @paddle.jit.to_static
    def func(x):
        calls.append(1)
        if paddle.mean(x) > 0:  # data-dependent Python control flow: only runs eagerly
            return x - 1
        return x + 1

    paddle.jit.enable_to_static(False)
    try:
        np.testing.assert_array_equal(func(paddle.ones([1, 2])).numpy(), [[0.0, 0.0]])
        np.testing.assert_array_equal(func(-paddle.ones([1, 2])).numpy(), [[0.0, 0.0]])
        assert len(calls) == 2
    finally:
        paddle.jit.enable_to_static(True)
    with pytest.raises(ConfigError):
        paddle.jit.enable_to_static(1)


def test_jit_translator_settings_are_checked_and_kept():
    import json

    from paddlectl.framework.jit import switches

    paddle.jit.ignore_module([json])
    paddle.jit.set_code_level(2)
    paddle.jit.set_verbosity(1)
    assert json in switches.settings()["ignored_modules"]
    assert switches.settings()["code_level"] == 2 and switches.settings()["verbosity"] == 1
    for call in (lambda: paddle.jit.ignore_module(["json"]), lambda: paddle.jit.set_verbosity("high")):
        with pytest.raises(ConfigError):
            call()


# ----- InputSpec ---------------------------------------------------------------------------------


def test_input_spec_batch_unbatch_and_repr_as_paddles(real_paddle):
    for make in (lambda mod: mod.static.InputSpec([64], "float32", "x").batch(4),
                 lambda mod: mod.static.InputSpec([4, 64], "float32", "x").unbatch(),
                 lambda mod: mod.static.InputSpec([None, 784], "int64", "label"),
                 lambda mod: mod.static.InputSpec([3], "float32").batch([5])):  # fmt: skip
        assert repr(make(paddle)) == repr(make(real_paddle))
    with pytest.raises(ShapeError):
        paddle.static.InputSpec([], "float32").unbatch()
    with pytest.raises(ConfigError):
        paddle.static.InputSpec([3], "float32").batch("a")


# ----- older spellings: gradient(), get_tensor(), inplace_version, split_with_sizes, ... ----------


def test_legacy_tensor_spellings_match_paddle(real_paddle):
    found = []
    for mod in (paddle, real_paddle):
        x = mod.to_tensor(np.arange(6, dtype="float32").reshape([2, 3]), stop_gradient=False)
        (x * x).sum().backward()
        table = mod.nn.Embedding(6, 4, sparse=True)
        table(mod.to_tensor([[1], [3], [1]])).sum().backward()
        values, rows = table.weight.gradient()
        var = mod.ones([3, 2])
        versions = [var.inplace_version]
        var[1] = 2.0
        var.scale_(2.0)
        versions.append(var.inplace_version)
        pieces = mod.Tensor.split_with_sizes(mod.to_tensor([[1, 2], [3, 4], [5, 6]]), [1, 2], dim=0)
        clone = mod.clone(x)
        held = mod.to_tensor([1.0, 2.5])  # Paddle's view needs its tensor alive (it crashes printing a freed one)
        found.append(
            (
                x.gradient(), values, rows, versions, [p.numpy() for p in pieces], mod.tolist(mod.to_tensor([1, 2])),
                str(held.get_tensor()), clone.numpy(), clone.stop_gradient,
                mod.asarray([1.5], requires_grad=True).stop_gradient, mod.get_cuda_rng_state(),
                [list(b) for b in mod.batch(lambda: iter(range(5)), 2)()],
            )
        )  # fmt: skip
    for got, expected in zip(*found, strict=True):
        if isinstance(got, list) and got and isinstance(got[0], np.ndarray):
            for g, e in zip(got, expected, strict=True):
                np.testing.assert_array_equal(g, e)
        elif isinstance(got, np.ndarray):
            np.testing.assert_array_equal(got, expected)
        else:
            assert got == expected
    paddle.disable_signal_handler()  # nothing to switch off, and no error
    with pytest.raises(ConfigError):
        paddle.set_cuda_rng_state([object()])


# ----- as_strided, set_, resize_ ----------------------------------------------------------------


@pytest.mark.parametrize(
    "shape, stride, offset", [([8, 6], [6, 1], 0), ([3, 4], [2, 3], 8), ([2, 2, 2], [12, 3, 1], 4)]
)
def test_as_strided_matches_paddle(real_paddle, shape, stride, offset):
    x = np.random.default_rng(8).standard_normal((2, 4, 6)).astype("float32")
    compare(real_paddle, lambda mod: lambda t: mod.as_strided(t, shape, stride, offset), x, grads=False)


def test_as_strided_gradient_adds_every_read(torch):
    """Windows that read an element twice give it both gradients (PyTorch's and the chain rule's)."""
    x = np.random.default_rng(9).standard_normal((2, 4, 6))
    cot = np.random.default_rng(10).standard_normal((5, 4))
    t = paddle.to_tensor(x, stop_gradient=False)
    (paddle.as_strided(t, [5, 4], [3, 2], 8) * paddle.to_tensor(cot)).sum().backward()  # offset 8 bytes = 1 float64
    r = torch.tensor(x, requires_grad=True)
    (torch.as_strided(r, (5, 4), (3, 2), 1) * torch.tensor(cot)).sum().backward()
    np.testing.assert_allclose(t.grad.numpy(), r.grad.numpy(), rtol=1e-12)
    with pytest.raises(ShapeError):
        paddle.as_strided(t, [5, 4], [30, 2])  # past the end: Paddle reads garbage, this refuses
    with pytest.raises(ShapeError):
        paddle.as_strided(t, [2], [1], 3)  # not a whole float64


def test_set_and_resize_match_paddle(real_paddle):
    found = []
    for mod in (paddle, real_paddle):
        src, src2 = mod.to_tensor([[11.0, 22.0, 33.0]]), mod.to_tensor([11.0, 22.0, 33.0, 44.0, 55.0, 66.0])
        results = []
        for kwargs in ({}, {"source": src}, {"source": src, "shape": [2, 1]},
                       {"source": src2, "shape": [3], "stride": [2]}, {"source": src2, "shape": [5], "offset": 4}):  # fmt: skip
            x = mod.to_tensor([1.0, 2.0, 3.0, 4.0, 5.0])
            x.set_(**kwargs)
            results.append(x.numpy().copy())
        x = mod.to_tensor([1.0, 2.0, 3.0, 4.0, 5.0])
        x.set_(src)
        results.append(x._is_shared_buffer_with(src))
        for shape in ([2, 1], [2, 3]):
            y = mod.to_tensor([1.0, 2.0, 3.0])
            y.resize_(shape, fill_zero=True)
            results.append(y.numpy().copy())
        found.append(results)
    for got, expected in zip(*found, strict=True):
        np.testing.assert_array_equal(got, expected)


# ----- in-place random fills ---------------------------------------------------------------------


@pytest.mark.parametrize(
    "dtype, args", [("int64", (0, 10)), ("int32", ()), ("float32", ()), ("int64", (-5, 5)), ("int64", (0, 2**40))]
)
def test_random_fill_draws_paddles_numbers(real_paddle, dtype, args):
    drawn = []
    for mod in (paddle, real_paddle):
        mod.seed(5)
        x = mod.zeros([7], dtype=dtype)
        x.random_(*args)
        drawn.append(x.numpy())
    np.testing.assert_array_equal(*drawn)


def test_bernoulli_and_log_normal_fills_draw_paddles_numbers(real_paddle):
    drawn = []
    for mod in (paddle, real_paddle):
        mod.seed(200)
        x = mod.randn([3, 4])
        x.bernoulli_()
        y = mod.randn([3, 4])
        y.bernoulli_(0.3)
        z = mod.randn([3, 4])
        z.log_normal_()
        drawn.append((x.numpy(), y.numpy(), z.numpy()))
    for got, expected in zip(*drawn, strict=True):
        np.testing.assert_allclose(got, expected, rtol=1e-5)  # log_normal_: exp in float32 there
    with pytest.raises(ConfigError):
        paddle.zeros([2], dtype="int64").random_(5, 5)


def test_objects_saved_into_one_stream_load_one_by_one(real_paddle):
    """Paddle's paddle.load example: a state dict and then a tensor saved into one BytesIO."""
    import io

    found = []
    for mod in (paddle, real_paddle):
        stream = io.BytesIO()
        mod.save({"w": mod.to_tensor([1.0, 2.0])}, stream)
        mod.save(mod.to_tensor([[3.0]]), stream)
        stream.seek(0)
        first, second = mod.load(stream), mod.load(stream)
        found.append((sorted(first), first["w"].numpy(), second.numpy()))
    assert found[0][0] == found[1][0]
    np.testing.assert_array_equal(found[0][1], found[1][1])
    np.testing.assert_array_equal(found[0][2], found[1][2])


# ----- DLPack ------------------------------------------------------------------------------------


def test_dlpack_shares_memory_both_ways(torch):
    array = np.arange(6.0).reshape(2, 3)
    assert np.shares_memory(paddle.from_dlpack(array).numpy(), array)
    t = torch.arange(4.0)
    shared = paddle.from_dlpack(t)
    t[0] = 9.0  # a write on the producer's side shows through
    np.testing.assert_array_equal(shared.numpy(), [9.0, 1.0, 2.0, 3.0])
    ours = paddle.to_tensor([5.0, 6.0])
    np.testing.assert_array_equal(torch.from_dlpack(ours).numpy(), [5.0, 6.0])
    np.testing.assert_array_equal(paddle.from_dlpack(paddle.to_dlpack(ours)).numpy(), [5.0, 6.0])
    from paddlectl.framework.errors import DTypeError

    with pytest.raises(DTypeError):
        paddle.from_dlpack("not a tensor")
