"""Learning-rate schedulers against real PaddlePaddle: the same value, exactly, at every step."""

from __future__ import annotations

import numpy as np
import pytest

import paddlectl.framework as ours

STEPS = 40

SCHEDULERS = {
    "noam": lambda lr: lr.NoamDecay(d_model=64, warmup_steps=10, learning_rate=2.0),
    "piecewise": lambda lr: lr.PiecewiseDecay(boundaries=[3, 9, 20], values=[0.1, 0.05, 0.01, 0.001]),
    "natural_exp": lambda lr: lr.NaturalExpDecay(0.5, gamma=0.1),
    "inverse_time": lambda lr: lr.InverseTimeDecay(0.5, gamma=0.2),
    "polynomial": lambda lr: lr.PolynomialDecay(0.1, decay_steps=15, end_lr=0.001, power=2.0),
    "polynomial_cycle": lambda lr: lr.PolynomialDecay(0.1, decay_steps=7, end_lr=0.01, power=1.5, cycle=True),
    "linear_warmup_float": lambda lr: lr.LinearWarmup(0.1, warmup_steps=5, start_lr=0.0, end_lr=0.1),
    "linear_warmup_scheduler": lambda lr: lr.LinearWarmup(
        lr.CosineAnnealingDecay(0.1, T_max=10), warmup_steps=4, start_lr=0.01, end_lr=0.1
    ),
    "exponential": lambda lr: lr.ExponentialDecay(0.3, gamma=0.9),
    "multistep": lambda lr: lr.MultiStepDecay(0.2, milestones=[4, 10, 25], gamma=0.5),
    "step": lambda lr: lr.StepDecay(0.2, step_size=6, gamma=0.3),
    "lambda": lambda lr: lr.LambdaDecay(0.1, lr_lambda=lambda e: 0.95**e),
    "multiplicative": lambda lr: lr.MultiplicativeDecay(0.1, lr_lambda=lambda e: 0.9 if e % 2 else 0.99),
    "cosine": lambda lr: lr.CosineAnnealingDecay(0.1, T_max=8, eta_min=0.001),
    "onecycle": lambda lr: lr.OneCycleLR(0.1, total_steps=STEPS + 1),
    "onecycle_three_phase_linear": lambda lr: lr.OneCycleLR(
        0.5, total_steps=STEPS + 1, divide_factor=10.0, phase_pct=0.2, anneal_strategy="linear", three_phase=True
    ),
    "linear_lr": lambda lr: lr.LinearLR(0.1, total_steps=12, start_factor=0.25, end_factor=0.9),
    "cyclic_triangular2": lambda lr: lr.CyclicLR(0.01, 0.1, step_size_up=4, step_size_down=6, mode="triangular2"),
    "cyclic_exp_range": lambda lr: lr.CyclicLR(0.01, 0.1, step_size_up=5, mode="exp_range", exp_gamma=0.95),
    "cosine_warm_restarts": lambda lr: lr.CosineAnnealingWarmRestarts(0.1, T_0=5, T_mult=2, eta_min=0.01),
}


def _values(lr_module, make, steps=STEPS):
    sched = make(lr_module)
    values = [sched()]
    for _ in range(steps):
        sched.step()
        values.append(sched())
    return values, sched


@pytest.mark.parametrize("name", sorted(SCHEDULERS))
def test_matches_paddle_exactly(name, real_paddle):
    got, sched = _values(ours.optimizer.lr, SCHEDULERS[name])
    want, ref = _values(real_paddle.optimizer.lr, SCHEDULERS[name])
    assert got == want
    assert sched.last_epoch == ref.last_epoch
    assert sched.state_dict() == ref.state_dict()


@pytest.mark.parametrize("name", ["cosine", "step", "polynomial", "cosine_warm_restarts", "linear_warmup_scheduler"])
def test_step_to_explicit_epoch_matches_paddle(name, real_paddle):
    def run(lr_module):
        sched = SCHEDULERS[name](lr_module)
        out = []
        for epoch in (3, 7, 2, 15, 30):
            sched.step(epoch)
            out.append((sched.last_epoch, sched()))
        return out

    assert run(ours.optimizer.lr) == run(real_paddle.optimizer.lr)


def _plateau(lr_module, mode, threshold_mode):
    return lr_module.ReduceOnPlateau(
        1.0, mode=mode, factor=0.5, patience=2, threshold=0.05, threshold_mode=threshold_mode, cooldown=1, min_lr=0.1
    )


@pytest.mark.parametrize("mode", ["min", "max"])
@pytest.mark.parametrize("threshold_mode", ["rel", "abs"])
def test_reduce_on_plateau_matches_paddle(mode, threshold_mode, real_paddle):
    metrics = [1.0, 0.9, 0.89, 0.88, 0.95, 0.87, 0.86, 0.85, 1.2, 0.5, 0.5, 0.5, 0.5, 0.49, 0.48, 0.6, 0.7, 0.8]
    got, want = [], []
    ours_sched = _plateau(ours.optimizer.lr, mode, threshold_mode)
    ref = _plateau(real_paddle.optimizer.lr, mode, threshold_mode)
    for i, m in enumerate(metrics):
        # every accepted metric type: float, 1-element ndarray, tensor
        ours_metric = [m, np.array([m], "float32"), ours.to_tensor([m], dtype="float32")][i % 3]
        ref_metric = [m, np.array([m], "float32"), real_paddle.to_tensor([m], dtype="float32")][i % 3]
        ours_sched.step(ours_metric)
        ref.step(ref_metric)
        got.append(ours_sched())
        want.append(ref())
    assert got == want
    assert ours_sched.last_epoch == ref.last_epoch
    assert ours_sched.num_bad_epochs == ref.num_bad_epochs
    assert ours_sched.cooldown_counter == ref.cooldown_counter


def test_reduce_on_plateau_refuses_bad_metrics():
    sched = ours.optimizer.lr.ReduceOnPlateau(0.1)
    with pytest.raises(ValueError, match="size of metrics must be 1"):
        sched.step(np.ones(3))
    with pytest.raises(TypeError, match="metrics must be"):
        sched.step("0.5")


@pytest.mark.parametrize("name", ["cosine", "linear_warmup_scheduler", "onecycle", "cosine_warm_restarts"])
def test_state_dict_round_trip_resumes_identically(name):
    make = SCHEDULERS[name]
    full, _ = _values(ours.optimizer.lr, make, steps=20)
    first, sched = _values(ours.optimizer.lr, make, steps=8)
    state = sched.state_dict()
    resumed = make(ours.optimizer.lr)
    resumed.set_state_dict(state)
    if name == "cosine_warm_restarts":  # Paddle saves only last_epoch/last_lr; its restart phase is recomputed
        resumed.step(resumed.last_epoch)
    rest = [resumed()]
    for _ in range(12):
        resumed.step()
        rest.append(resumed())
    assert first + rest[1:] == full


def test_set_state_dict_names_the_missing_key():
    sched = ours.optimizer.lr.StepDecay(0.1, 2)
    with pytest.raises(RuntimeError, match="last_lr"):
        sched.set_state_dict({"last_epoch": 3})


def test_verbose_prints_each_change(capsys):
    sched = ours.optimizer.lr.StepDecay(0.1, 1, gamma=0.5, verbose=True)
    sched.step()
    assert capsys.readouterr().out.splitlines() == [
        "Epoch 0: StepDecay set learning rate to 0.1.",
        "Epoch 1: StepDecay set learning rate to 0.05.",
    ]


@pytest.mark.parametrize(
    ("make", "error", "match"),
    [
        (lambda lr: lr.StepDecay(0.1, step_size=2.0), TypeError, "step_size"),
        (lambda lr: lr.StepDecay(0.1, step_size=2, gamma=1.5), ValueError, "gamma"),
        (lambda lr: lr.MultiStepDecay(0.1, milestones=[5, 3]), ValueError, "incremented"),
        (lambda lr: lr.PiecewiseDecay([1, 2], [0.1, 0.2]), ValueError, "one more element"),
        (lambda lr: lr.CosineAnnealingDecay(0.1, T_max=2.5), TypeError, "T_max"),
        (lambda lr: lr.LinearWarmup(0.1, warmup_steps=0, start_lr=0.0, end_lr=0.1), ValueError, "warmup_steps"),
        (lambda lr: lr.OneCycleLR(0.1, total_steps=0), ValueError, "total_step"),
        (lambda lr: lr.ReduceOnPlateau(0.1, mode="middle"), ValueError, "unknown"),
        (lambda lr: lr.LambdaDecay(0.1, lr_lambda=0.5), TypeError, "lr_lambda"),
        (lambda lr: lr.ExponentialDecay("0.1", gamma=0.5), TypeError, "learning rate must be float"),
    ],
)
def test_bad_arguments_raise_paddles_errors(make, error, match):
    with pytest.raises(error, match=match):
        make(ours.optimizer.lr)


def test_onecycle_refuses_stepping_past_total_steps():
    sched = ours.optimizer.lr.OneCycleLR(0.1, total_steps=3)
    for _ in range(3):
        sched.step()
    with pytest.raises(ValueError, match="Tried to step 4 times"):
        sched.step()
