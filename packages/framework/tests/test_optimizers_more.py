"""The optimizers beyond SGD/Momentum/Adam/RMSProp/Adagrad against real PaddlePaddle 3.3.1: the
same small model, data and initial weights trained a few steps; parameters after every step
(rtol 1e-5) and the state_dict keys (Paddle's accumulator names) must agree."""

from __future__ import annotations

import numpy as np
import pytest

import paddlectl.framework as ours

STEPS = 5
rng = np.random.default_rng(7)
W, B = rng.standard_normal((4, 3)).astype("float32"), rng.standard_normal(3).astype("float32")
XS = [rng.standard_normal((6, 4)).astype("float32") for _ in range(10)]
YS = [rng.standard_normal((6, 3)).astype("float32") for _ in range(10)]


def _sched(lib):
    return lib.optimizer.lr.StepDecay(0.05, step_size=2, gamma=0.5)


CASES = {
    "adadelta": lambda lib, ps: lib.optimizer.Adadelta(learning_rate=0.5, parameters=ps),
    "adadelta_l2_clip": lambda lib, ps: lib.optimizer.Adadelta(
        learning_rate=1.0,
        rho=0.9,
        epsilon=1e-5,
        parameters=ps,
        weight_decay=0.05,
        grad_clip=lib.nn.ClipGradByGlobalNorm(0.5),
    ),
    "adamax": lambda lib, ps: lib.optimizer.Adamax(learning_rate=0.05, parameters=ps),
    "adamax_sched_l2": lambda lib, ps: lib.optimizer.Adamax(
        learning_rate=_sched(lib), beta1=0.8, beta2=0.99, parameters=ps, weight_decay=0.01
    ),
    "asgd": lambda lib, ps: lib.optimizer.ASGD(learning_rate=0.05, parameters=ps),
    "asgd_batches_l2": lambda lib, ps: lib.optimizer.ASGD(
        learning_rate=0.1, batch_num=3, parameters=ps, weight_decay=0.02
    ),
    "nadam": lambda lib, ps: lib.optimizer.NAdam(learning_rate=0.05, parameters=ps),
    "nadam_sched_clip": lambda lib, ps: lib.optimizer.NAdam(
        learning_rate=_sched(lib),
        beta1=0.85,
        momentum_decay=0.01,
        parameters=ps,
        grad_clip=lib.nn.ClipGradByValue(0.3),
    ),
    "radam": lambda lib, ps: lib.optimizer.RAdam(learning_rate=0.05, parameters=ps),
    # beta2 = 0.8: rho_t exceeds 5 from step 7 on (LONG_RUNS), so the rectified branch runs too
    "radam_rectified_l2": lambda lib, ps: lib.optimizer.RAdam(
        learning_rate=0.05, beta2=0.8, parameters=ps, weight_decay=0.01
    ),
    "rprop": lambda lib, ps: lib.optimizer.Rprop(learning_rate=0.05, parameters=ps),
    "rprop_range_etas": lambda lib, ps: lib.optimizer.Rprop(
        learning_rate=0.05, learning_rate_range=(0.01, 0.07), etas=(0.3, 1.5), parameters=ps
    ),
    "lamb": lambda lib, ps: lib.optimizer.Lamb(learning_rate=0.05, parameters=ps),
    "lamb_exclude_clip": lambda lib, ps: lib.optimizer.Lamb(
        learning_rate=0.05,
        lamb_weight_decay=0.1,
        parameters=ps,
        grad_clip=lib.nn.ClipGradByNorm(0.5),
        exclude_from_weight_decay_fn=lambda p: p.name.endswith("b_0"),
    ),
    "lamb_always_adapt_groups": lambda lib, ps: lib.optimizer.Lamb(
        learning_rate=0.05,
        lamb_weight_decay=0.0,
        always_adapt=True,
        parameters=[{"params": ps[:1], "learning_rate": 0.5}, {"params": ps[1:], "beta1": 0.7}],
    ),
}


LONG_RUNS = {"radam_rectified_l2": 10}


def _train(lib, make, steps=STEPS, start=0, state=None):
    layer = lib.nn.Linear(4, 3)
    layer.weight.set_value(W)
    layer.bias.set_value(B)
    opt = make(lib, layer.parameters())
    if state is not None:
        layer.weight.set_value(state.pop("W"))
        layer.bias.set_value(state.pop("B"))
        opt.set_state_dict(
            {k.replace("W_", layer.weight.name + "_").replace("B_", layer.bias.name + "_"): v for k, v in state.items()}
        )
    trajectory = []
    for x, y in zip(XS[start:steps], YS[start:steps], strict=True):
        loss = ((layer(lib.to_tensor(x)) - lib.to_tensor(y)) ** 2).mean()
        loss.backward()
        opt.step()
        opt.clear_grad()
        if isinstance(opt._learning_rate, lib.optimizer.lr.LRScheduler):
            opt._learning_rate.step()
        trajectory.append([np.array(layer.weight.numpy()), np.array(layer.bias.numpy())])
    names = {layer.weight.name: "W", layer.bias.name: "B"}
    state = {_rename(k, names): v if k == "LR_Scheduler" else np.array(v.numpy()) for k, v in opt.state_dict().items()}
    state.update(W=np.array(layer.weight.numpy()), B=np.array(layer.bias.numpy()))
    return trajectory, sorted(k for k in state if k not in "WB"), state


def _rename(key: str, names: dict) -> str:
    for name, short in names.items():
        if key.startswith(name):
            return short + key[len(name) :]
    return key


@pytest.mark.parametrize("case", sorted(CASES))
def test_training_matches_paddle(case, real_paddle):
    steps = LONG_RUNS.get(case, STEPS)
    got, got_keys, _ = _train(ours, CASES[case], steps)
    want, want_keys, _ = _train(real_paddle, CASES[case], steps)
    assert got_keys == want_keys
    _assert_same(case, got, want)


@pytest.mark.parametrize("case", ["adadelta", "adamax_sched_l2", "asgd_batches_l2", "nadam", "radam", "rprop", "lamb"])
def test_resumes_from_paddle_state(case, real_paddle):
    """Paddle's state_dict after 3 steps, loaded into ours, continues as Paddle does: the
    accumulators mean the same thing, not only carry the same names."""
    _, _, state = _train(real_paddle, CASES[case], 3)
    want, _, _ = _train(real_paddle, CASES[case], STEPS, start=3, state=dict(state))
    got, _, _ = _train(ours, CASES[case], STEPS, start=3, state=dict(state))
    _assert_same(case, got, want)


def _assert_same(case, got, want):
    for t, (g_step, w_step) in enumerate(zip(got, want, strict=True)):
        for name, g, w in zip(("weight", "bias"), g_step, w_step, strict=True):
            np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-6, err_msg=f"{case}: step {t}, {name}")


@pytest.mark.parametrize(
    "make",
    [
        lambda lib, ps: lib.optimizer.ASGD(0.1, batch_num=0, parameters=ps),
        lambda lib, ps: lib.optimizer.Rprop(0.1, learning_rate_range=(0.2, 1.0), parameters=ps),
        lambda lib, ps: lib.optimizer.Rprop(0.1, etas=(1.1, 1.2), parameters=ps),
        lambda lib, ps: lib.optimizer.NAdam(0.1, momentum_decay=-1.0, parameters=ps),
        lambda lib, ps: lib.optimizer.RAdam(0.1, beta1=1.0, parameters=ps),
        lambda lib, ps: lib.optimizer.Adamax(0.1, beta2=-0.5, parameters=ps),
        lambda lib, ps: lib.optimizer.Adadelta(0.1, rho=None, parameters=ps),
    ],
)
def test_invalid_hyperparameters_raise_like_paddle(make, real_paddle):
    for lib in (ours, real_paddle):
        with pytest.raises(ValueError):
            make(lib, lib.nn.Linear(2, 2).parameters())


# ----- LBFGS --------------------------------------------------------------------------------------
def _lbfgs_run(lib, steps=3, state=None, **kwargs):
    """Least squares on a Linear layer: well conditioned, so float32 rounding stays at its own scale."""
    layer = lib.nn.Linear(4, 3)
    layer.weight.set_value(W)
    layer.bias.set_value(B)
    opt = lib.optimizer.LBFGS(parameters=layer.parameters(), **kwargs)
    if state is not None:
        layer.weight.set_value(state["W"])
        layer.bias.set_value(state["B"])
        opt.set_state_dict(state["opt"])
    x, y = lib.to_tensor(np.concatenate(XS[:3])), lib.to_tensor(np.concatenate(YS[:3]))

    def closure():
        opt.clear_grad()
        loss = ((layer(x) - y) ** 2).mean()
        loss.backward()
        return loss

    trajectory = []
    for _ in range(steps):
        loss = opt.step(closure)
        trajectory.append((float(loss), opt.state["func_evals"], opt.state["n_iter"], np.array(layer.weight.numpy())))
    saved = {"W": np.array(layer.weight.numpy()), "B": np.array(layer.bias.numpy()), "opt": opt.state_dict()}
    return trajectory, saved


@pytest.mark.parametrize(
    "kwargs",
    [{"learning_rate": 0.1, "max_iter": 4}, {"line_search_fn": "strong_wolfe", "max_iter": 2, "history_size": 3}],
    ids=["fixed_step", "strong_wolfe"],
)
def test_lbfgs_matches_paddle(kwargs, real_paddle):
    """Iterates, counters and state keys as Paddle's. The runs stop short of the optimum: there
    the stopping tests (a loss change under 1e-9) are decided by float32 rounding in either library."""
    steps = 3 if "line_search_fn" not in kwargs else 2
    got, got_state = _lbfgs_run(ours, steps, **kwargs)
    want, want_state = _lbfgs_run(real_paddle, steps, **kwargs)
    for t, ((gl, ge, gn, gw), (wl, we, wn, ww)) in enumerate(zip(got, want, strict=True)):
        assert (ge, gn) == (we, wn), f"step {t}: function evaluations / iterations"
        np.testing.assert_allclose(gl, wl, rtol=1e-5, err_msg=f"step {t}: loss")
        np.testing.assert_allclose(gw, ww, rtol=1e-5, atol=1e-5, err_msg=f"step {t}: weight")
    assert sorted(got_state["opt"]["state"]) == sorted(want_state["opt"]["state"])


def test_lbfgs_state_dict_resumes_identically():
    kwargs = {"line_search_fn": "strong_wolfe", "max_iter": 3, "history_size": 4}
    whole, _ = _lbfgs_run(ours, steps=4, **kwargs)
    _, saved = _lbfgs_run(ours, steps=2, **kwargs)
    resumed, _ = _lbfgs_run(ours, steps=2, state=saved, **kwargs)
    for (_, _, _, a), (_, _, _, b) in zip(whole[2:], resumed, strict=True):
        np.testing.assert_array_equal(a, b)


def test_lbfgs_usage_errors():
    params = ours.nn.Linear(2, 2).parameters()
    opt = ours.optimizer.LBFGS(parameters=params)
    with pytest.raises(NotImplementedError, match="step\\(closure\\)"):
        opt.minimize(None)
    with pytest.raises(TypeError, match="closure"):
        opt.step()
    with pytest.raises(RuntimeError, match="strong_wolfe"):
        ours.optimizer.LBFGS(parameters=params, line_search_fn="backtracking")


def test_adam_takes_betas_as_one_element_tensors_as_paddle_does():
    def trained(beta1):
        ours.seed(0)
        lin = ours.nn.Linear(2, 2)
        opt = ours.optimizer.Adam(learning_rate=0.1, parameters=lin.parameters(), beta1=beta1)
        lin(ours.ones([1, 2])).sum().backward()
        opt.step()
        return lin.weight.numpy()

    np.testing.assert_array_equal(trained(ours.to_tensor([0.8], dtype="float32")), trained(0.8))
