"""Optimizers against real PaddlePaddle: same initial weights, same gradients, parameters compared
after every step (rtol 1e-6 in float32); state round-trips; the errors Paddle raises."""

from __future__ import annotations

import numpy as np
import pytest

import paddlectl.framework as ours
from paddlectl.framework.errors import CheckpointError, ShapeError

SHAPES = [(4, 3), (3,), (1,)]
STEPS = 6


def _arrays(seed: int, scale: float = 1.0, dtype: str = "float32"):
    rng = np.random.default_rng(seed)
    return [(rng.standard_normal(s) * scale).astype(dtype) for s in SHAPES]


def _params(lib, arrays, need_clip=None):
    if lib is ours:
        params = [ours.Parameter(a.copy()) for a in arrays]
    else:
        init = lib.nn.initializer.Assign
        params = [lib.create_parameter(list(a.shape), str(a.dtype), default_initializer=init(a)) for a in arrays]
    if need_clip is not None:
        for p, flag in zip(params, need_clip, strict=True):
            p.need_clip = flag
    return params


def _backward(lib, params, grads) -> None:
    """Produce exactly ``grads`` as the parameters' gradients, through each library's autograd."""
    for p, g in zip(params, grads, strict=True):
        (p * lib.to_tensor(g)).sum().backward()


def _trajectory(lib, make, steps=STEPS, seed=0, grad_scale=1.0, need_clip=None, after_step=None, dtype="float32"):
    params = _params(lib, _arrays(seed, dtype=dtype), need_clip)
    opt = make(lib, params)
    out = []
    for t in range(steps):
        _backward(lib, params, _arrays(100 + t, grad_scale, dtype))
        opt.step()
        opt.clear_grad()
        if after_step is not None:
            after_step(opt, t)
        out.append([np.array(p.numpy()) for p in params])
    return out


def _assert_same(got, want, rtol=1e-6, atol=1e-7):
    for t, (g_step, w_step) in enumerate(zip(got, want, strict=True)):
        for i, (g, w) in enumerate(zip(g_step, w_step, strict=True)):
            np.testing.assert_allclose(g, w, rtol=rtol, atol=atol, err_msg=f"step {t}, parameter {i}")


def _l1(lib):
    return lib.regularizer.L1Decay(0.02)


CASES = {
    "sgd": lambda lib, ps: lib.optimizer.SGD(learning_rate=0.1, parameters=ps),
    "sgd_l2": lambda lib, ps: lib.optimizer.SGD(learning_rate=0.1, parameters=ps, weight_decay=0.05),
    "sgd_l1": lambda lib, ps: lib.optimizer.SGD(learning_rate=0.1, parameters=ps, weight_decay=_l1(lib)),
    "momentum": lambda lib, ps: lib.optimizer.Momentum(learning_rate=0.05, parameters=ps),
    "momentum_nesterov_l2": lambda lib, ps: lib.optimizer.Momentum(
        learning_rate=0.05, momentum=0.8, use_nesterov=True, parameters=ps, weight_decay=0.01
    ),
    "adam": lambda lib, ps: lib.optimizer.Adam(learning_rate=0.01, parameters=ps),
    "adam_l2_betas": lambda lib, ps: lib.optimizer.Adam(
        learning_rate=0.02, beta1=0.8, beta2=0.95, epsilon=1e-6, parameters=ps, weight_decay=0.1
    ),
    "adam_amsgrad": lambda lib, ps: lib.optimizer.Adam(learning_rate=0.01, parameters=ps, amsgrad=True),
    "adamw": lambda lib, ps: lib.optimizer.AdamW(learning_rate=0.01, parameters=ps),
    "adamw_decayfun": lambda lib, ps: lib.optimizer.AdamW(
        learning_rate=0.01, parameters=ps, weight_decay=0.3, apply_decay_param_fun=lambda name: name == ps[0].name
    ),
    "rmsprop": lambda lib, ps: lib.optimizer.RMSProp(learning_rate=0.01, parameters=ps),
    "rmsprop_centered_momentum": lambda lib, ps: lib.optimizer.RMSProp(
        learning_rate=0.01, rho=0.9, momentum=0.9, centered=True, parameters=ps, weight_decay=0.01
    ),
    "adagrad": lambda lib, ps: lib.optimizer.Adagrad(learning_rate=0.1, parameters=ps),
    "adagrad_initial": lambda lib, ps: lib.optimizer.Adagrad(
        learning_rate=0.1, epsilon=1e-5, initial_accumulator_value=0.1, parameters=ps
    ),
    "adam_param_groups": lambda lib, ps: lib.optimizer.Adam(
        learning_rate=0.01,
        parameters=[
            {"params": [ps[0]], "learning_rate": 0.5, "beta1": 0.7},
            {"params": ps[1:], "weight_decay": 0.2},
        ],
    ),
    "momentum_param_groups": lambda lib, ps: lib.optimizer.Momentum(
        learning_rate=0.05,
        parameters=[{"params": ps[:2], "momentum": 0.5, "weight_decay": 0.1}, {"params": ps[2:]}],
    ),
    "adamw_param_groups": lambda lib, ps: lib.optimizer.AdamW(
        learning_rate=0.01,
        parameters=[{"params": ps[:1], "weight_decay": 0.5, "learning_rate": 2.0}, {"params": ps[1:]}],
    ),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_matches_paddle_step_by_step(case, real_paddle):
    make = CASES[case]
    _assert_same(_trajectory(ours, make), _trajectory(real_paddle, make))


@pytest.mark.parametrize("case", ["sgd_l2", "momentum_nesterov_l2", "adam", "adamw", "rmsprop_centered_momentum"])
def test_float64_parameters_match_paddle(case, real_paddle):
    make = CASES[case]
    got = _trajectory(ours, make, dtype="float64")
    assert got[-1][0].dtype == np.float64
    _assert_same(got, _trajectory(real_paddle, make, dtype="float64"), rtol=1e-12, atol=1e-14)


def test_non_contiguous_gradients_are_used_correctly(real_paddle):
    """A gradient that arrives transposed (a strided view) updates the parameter like a dense one."""

    def run(lib):
        rng = np.random.default_rng(5)
        param = _params(lib, [rng.standard_normal((3, 4)).astype("float32")])[0]
        opt = lib.optimizer.Adam(0.1, parameters=[param])
        g = lib.to_tensor(rng.standard_normal((4, 3)).astype("float32"))
        (param * lib.transpose(g, [1, 0])).sum().backward()
        opt.step()
        return [[np.array(param.numpy())]]

    _assert_same(run(ours), run(real_paddle))


CLIPS = {
    "global_norm": lambda lib: lib.nn.ClipGradByGlobalNorm(1.0),
    "global_norm_loose": lambda lib: lib.nn.ClipGradByGlobalNorm(100.0),
    "global_norm_auto_skip": lambda lib: lib.nn.ClipGradByGlobalNorm(1.0, auto_skip_clip=True),
    "norm": lambda lib: lib.nn.ClipGradByNorm(0.5),
    "value": lambda lib: lib.nn.ClipGradByValue(0.3),
    "value_min_max": lambda lib: lib.nn.ClipGradByValue(max=0.5, min=-0.1),
}


@pytest.mark.parametrize("clip", sorted(CLIPS))
@pytest.mark.parametrize("need_clip", [None, (True, False, True)])
def test_grad_clip_matches_paddle(clip, need_clip, real_paddle):
    def make(lib, ps):
        return lib.optimizer.SGD(learning_rate=0.1, parameters=ps, grad_clip=CLIPS[clip](lib))

    got = _trajectory(ours, make, grad_scale=2.0, need_clip=need_clip)
    _assert_same(got, _trajectory(real_paddle, make, grad_scale=2.0, need_clip=need_clip))


def test_adamw_lr_ratio_scales_step_and_decay(real_paddle):
    """Paddle implements ``lr_ratio`` only on GPU; a ratio of 0.5 must equal halving the rate there."""

    def ours_make(lib, ps):
        return lib.optimizer.AdamW(0.02, parameters=ps, weight_decay=0.3, lr_ratio=lambda p: 0.5)

    def paddle_make(lib, ps):
        return lib.optimizer.AdamW(0.01, parameters=ps, weight_decay=0.3)

    _assert_same(_trajectory(ours, ours_make), _trajectory(real_paddle, paddle_make))


def test_clip_with_adam_and_weight_decay_matches_paddle(real_paddle):
    """Paddle clips first, then adds weight decay: the order matters for the result."""

    def make(lib, ps):
        return lib.optimizer.Adam(0.01, parameters=ps, weight_decay=0.5, grad_clip=lib.nn.ClipGradByGlobalNorm(0.5))

    _assert_same(_trajectory(ours, make, grad_scale=3.0), _trajectory(real_paddle, make, grad_scale=3.0))


def test_scheduler_drives_the_optimizer_like_paddle(real_paddle):
    def make(lib, ps):
        sched = lib.optimizer.lr.LinearWarmup(lib.optimizer.lr.StepDecay(0.1, step_size=2), 3, 0.0, 0.1)
        return lib.optimizer.Momentum(learning_rate=sched, parameters=ps)

    def after(opt, t):
        opt._learning_rate.step()

    _assert_same(_trajectory(ours, make, after_step=after), _trajectory(real_paddle, make, after_step=after))


def test_per_parameter_learning_rate_attr_matches_paddle(real_paddle):
    def make(lib, ps):
        ps[0].optimize_attr["learning_rate"] = 0.3
        return lib.optimizer.Adam(0.05, parameters=ps)

    _assert_same(_trajectory(ours, make), _trajectory(real_paddle, make))


def test_set_lr_between_steps_matches_paddle(real_paddle):
    def make(lib, ps):
        return lib.optimizer.AdamW(0.05, parameters=ps)

    def after(opt, t):
        opt.set_lr(0.05 / (t + 2))

    _assert_same(_trajectory(ours, make, after_step=after), _trajectory(real_paddle, make, after_step=after))


def test_linear_model_training_matches_paddle(real_paddle):
    """A real model end to end: MSE on a Linear layer, gradients from each library's own autograd."""
    rng = np.random.default_rng(3)
    w, b = rng.standard_normal((5, 2)).astype("float32"), rng.standard_normal(2).astype("float32")
    xs = [rng.standard_normal((8, 5)).astype("float32") for _ in range(5)]
    ys = [rng.standard_normal((8, 2)).astype("float32") for _ in range(5)]

    def train(lib):
        layer = lib.nn.Linear(5, 2)
        layer.weight.set_value(w)
        layer.bias.set_value(b)
        opt = lib.optimizer.AdamW(0.01, parameters=layer.parameters(), grad_clip=lib.nn.ClipGradByGlobalNorm(1.0))
        out = []
        for x, y in zip(xs, ys, strict=True):
            loss = ((layer(lib.to_tensor(x)) - lib.to_tensor(y)) ** 2).mean()
            loss.backward()
            opt.step()
            opt.clear_grad()
            out.append([np.array(layer.weight.numpy()), np.array(layer.bias.numpy())])
        return out

    _assert_same(train(ours), train(real_paddle), rtol=1e-5, atol=1e-6)


# ----- state -------------------------------------------------------------------------------------
def _snapshot(state):
    return {k: (v if k == "LR_Scheduler" else np.array(v.numpy())) for k, v in state.items()}


@pytest.mark.parametrize("case", ["momentum", "adam_amsgrad", "adamw", "rmsprop_centered_momentum", "adagrad_initial"])
def test_state_dict_round_trip_resumes_identically(case):
    make = CASES[case]
    grads = [_arrays(200 + t) for t in range(6)]

    def run(params, opt, steps):
        for g in steps:
            _backward(ours, params, g)
            opt.step()
            opt.clear_grad()

    params = _params(ours, _arrays(0))
    opt = make(ours, params)
    run(params, opt, grads)
    reference = [np.array(p.numpy()) for p in params]

    params = _params(ours, _arrays(0))
    opt = make(ours, params)
    run(params, opt, grads[:3])
    saved_state = _snapshot(opt.state_dict())
    saved_params = [np.array(p.numpy()) for p in params]

    params = [ours.Parameter(a, name=p.name) for a, p in zip(saved_params, params, strict=True)]
    fresh = make(ours, params)
    fresh.set_state_dict(saved_state)  # before the first step: kept until accumulators exist
    run(params, fresh, grads[3:])
    for got, want in zip(params, reference, strict=True):
        np.testing.assert_array_equal(got.numpy(), want)


def test_state_dict_uses_paddle_accumulator_names(real_paddle):
    def names(lib):
        params = _params(lib, _arrays(0))
        sched = lib.optimizer.lr.ExponentialDecay(0.01, gamma=0.9)
        opt = lib.optimizer.Adam(sched, parameters=params)
        _backward(lib, params, _arrays(1))
        opt.step()
        state = opt.state_dict()
        keys = sorted(
            k.replace(params[i].name, f"P{i}") for i in range(3) for k in state if k.startswith(params[i].name)
        )
        return keys, state["LR_Scheduler"]

    assert names(ours) == names(real_paddle)


def test_state_dict_is_empty_before_first_step_and_lists_accumulators_after():
    params = _params(ours, _arrays(0))
    opt = ours.optimizer.Momentum(0.1, parameters=params)
    assert opt.state_dict() == {}
    _backward(ours, params, _arrays(1))
    opt.step()
    assert sorted(opt.state_dict()) == sorted(f"{p.name}_velocity_0" for p in params)


def test_set_state_dict_refuses_missing_and_misshaped_state():
    params = _params(ours, _arrays(0))
    opt = ours.optimizer.Adam(0.1, parameters=params)
    _backward(ours, params, _arrays(1))
    opt.step()
    state = _snapshot(opt.state_dict())
    missing = dict(state)
    missing.pop(f"{params[0].name}_moment1_0")
    with pytest.raises(CheckpointError, match="moment1_0 not found"):
        opt.set_state_dict(missing)
    bad = dict(state)
    bad[f"{params[0].name}_moment1_0"] = np.zeros((2, 2), "float32")
    with pytest.raises(ShapeError, match="saved shape"):
        opt.set_state_dict(bad)


def test_scheduler_state_is_required_when_a_scheduler_is_attached():
    params = _params(ours, _arrays(0))
    opt = ours.optimizer.SGD(ours.optimizer.lr.StepDecay(0.1, 2), parameters=params)
    with pytest.raises(CheckpointError, match="LR_Scheduler"):
        opt.set_state_dict({})


# ----- learning rate and API behaviour -----------------------------------------------------------
def test_get_lr_set_lr_and_scheduler_refusal():
    params = _params(ours, _arrays(0))
    opt = ours.optimizer.SGD(0.1, parameters=params)
    assert opt.get_lr() == 0.1
    opt.set_lr(0.5)
    assert opt.get_lr() == 0.5
    with pytest.raises(TypeError, match="must be float"):
        opt.set_lr("0.1")
    sched = ours.optimizer.lr.StepDecay(0.2, 1, gamma=0.5)
    opt = ours.optimizer.SGD(sched, parameters=params)
    sched.step()
    assert opt.get_lr() == 0.1
    with pytest.raises(RuntimeError, match="LRScheduler"):
        opt.set_lr(0.3)


def test_constructor_errors_follow_paddle():
    params = _params(ours, _arrays(0))
    with pytest.raises(TypeError, match="learning rate should be float or LRScheduler"):
        ours.optimizer.SGD(1, parameters=params)
    with pytest.raises(AttributeError, match="should not be None"):
        ours.optimizer.SGD(0.1)
    with pytest.raises(TypeError, match="iterable of paddle Tensors"):
        ours.optimizer.SGD(0.1, parameters=params[0])
    with pytest.raises(TypeError, match="GradientClipBase"):
        ours.optimizer.SGD(0.1, parameters=params, grad_clip=1.0)
    with pytest.raises(ValueError, match="more than one parameter group"):
        ours.optimizer.SGD(0.1, parameters=[{"params": params}, {"params": params[:1]}])
    with pytest.raises(ValueError, match="beta1"):
        ours.optimizer.Adam(0.1, beta1=1.5, parameters=params)


def test_clear_grad_and_minimize():
    params = _params(ours, _arrays(0))
    opt = ours.optimizer.SGD(0.1, parameters=params)
    _backward(ours, params, _arrays(1))
    before = [np.array(p.numpy()) for p in params]
    _, used = opt.minimize(None, parameters=params[:2], no_grad_set={params[1].name})
    assert [p is params[0] for p, _ in used] == [True]
    np.testing.assert_allclose(params[0].numpy(), before[0] - np.float32(0.1) * _arrays(1)[0], rtol=1e-6)
    np.testing.assert_array_equal(params[1].numpy(), before[1])
    opt.clear_grad()
    assert all(not np.any(p.grad.numpy()) for p in params)
    opt.clear_grad(set_to_zero=False)
    assert all(p.grad is None for p in params)


def test_frozen_and_gradless_parameters_are_left_alone():
    params = _params(ours, _arrays(0))
    params[1].stop_gradient = True
    opt = ours.optimizer.Adam(0.1, parameters=params)
    (params[0] * 2.0).sum().backward()
    before = [np.array(p.numpy()) for p in params]
    opt.step()
    assert not np.array_equal(params[0].numpy(), before[0])
    np.testing.assert_array_equal(params[1].numpy(), before[1])
    np.testing.assert_array_equal(params[2].numpy(), before[2])


def test_checkpoint_through_save_and_load_resumes_with_scheduler(tmp_path):
    """paddle.save(opt.state_dict()) then set_state_dict on a fresh optimizer: the scheduler's epoch
    and every accumulator come back, so the next steps equal those of an uninterrupted run."""

    def make(params):
        return ours.optimizer.Adam(ours.optimizer.lr.StepDecay(0.1, step_size=2, gamma=0.5), parameters=params)

    def run(params, opt, steps):
        for t in steps:
            _backward(ours, params, _arrays(300 + t))
            opt.step()
            opt.clear_grad()
            opt._learning_rate.step()

    params = _params(ours, _arrays(0))
    run(params, make(params), range(6))
    reference = [np.array(p.numpy()) for p in params]

    params = _params(ours, _arrays(0))
    opt = make(params)
    run(params, opt, range(3))
    ours.save(opt.state_dict(), str(tmp_path / "opt.pdopt"))
    resumed = make(params)
    resumed.set_state_dict(ours.load(str(tmp_path / "opt.pdopt")))
    assert resumed.get_lr() == opt.get_lr()
    run(params, resumed, range(3, 6))
    for got, want in zip(params, reference, strict=True):
        np.testing.assert_array_equal(got.numpy(), want)
