"""erfinv, i0/i0e/i1/i1e and gammainc/gammaincc (issue 30) against real Paddle 3.3.1, gradients
included (Paddle differentiates gammainc in its second argument only, as ours)."""

from __future__ import annotations

import numpy as np
import pytest
from _parity import compare

import paddlectl.framework as ours

RNG = np.random.default_rng(30)
WIDE = np.concatenate([RNG.uniform(-5, 5, 10), [0.0, 0.01, -35.0, 42.0]])


@pytest.mark.parametrize(
    ("name", "x"),
    [
        ("erfinv", np.concatenate([RNG.uniform(-0.999, 0.999, 12), [0.0]])),
        ("i0", WIDE),
        ("i0e", WIDE[WIDE != 0]),  # e^-|x| has a kink at 0: Paddle's gradient there is one side's, ours 0
        ("i1", WIDE),
        ("i1e", WIDE[WIDE != 0]),
    ],
)
def test_unary_special_functions_match_paddle(real_paddle, name, x):
    compare(real_paddle, lambda P: getattr(P, name), x, rtol=1e-6, atol=1e-9)


@pytest.mark.parametrize("name", ["gammainc", "gammaincc"])
def test_incomplete_gamma_matches_paddle(real_paddle, name):
    a = RNG.uniform(0.3, 8, 12)
    x = np.concatenate([RNG.uniform(0.05, 3, 6), RNG.uniform(5, 20, 6)])
    compare(real_paddle, lambda P: lambda s, t: getattr(P, name)(s.detach(), t), a, x, rtol=1e-6, atol=1e-9)


def test_edges_of_the_domains():
    """erfinv is +-inf at +-1 and NaN outside; the scaled Bessel functions stay finite where the
    unscaled overflow."""
    got = ours.erfinv(ours.to_tensor([-1.0, 1.0, 1.5])).numpy()
    assert got[0] == -np.inf and got[1] == np.inf and np.isnan(got[2])
    big = ours.to_tensor([800.0], dtype="float64")
    assert np.isfinite(ours.i0e(big).numpy()).all() and np.isinf(ours.i0(big).numpy()).all()
