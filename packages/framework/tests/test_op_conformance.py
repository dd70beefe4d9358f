"""The conformance sweep: every registered op against every check of ``testing.op_checks``.

One test per (op, check), id ``<op>-<check>``; a check the op's record exempts, or that does not
apply to it, is a skip whose reason says why (``pytest -rs``). A new op is swept by being
registered. ``test_exemptions_are_listed`` prints every exemption in the registry (``pytest -s``).
"""

from __future__ import annotations

import numpy as np
import pytest

import paddlectl.framework  # noqa: F401 - declares every op
from paddlectl.framework.core.op import ELEMENTWISE, OPAQUE, REGISTRY, OpDef, Sample, Spec
from paddlectl.framework.errors import ConfigError
from paddlectl.framework.testing.op_checks import CHECKS, check_op, default_samples, exemptions, skip_reason

SWEEP = [(name, check) for name in sorted(REGISTRY) for check in CHECKS]


@pytest.mark.parametrize(("name", "check"), SWEEP, ids=[f"{n}-{c}" for n, c in SWEEP])
def test_op_meets_check(name, check):
    op = REGISTRY[name]
    reason = skip_reason(op, check)
    if reason is not None:
        pytest.skip(reason)
    skipped = check_op(op, checks=(check,))
    if check in skipped:
        pytest.skip(skipped[check])


def test_exemptions_are_listed():
    """Every exemption names a known check and gives a reason; the table is printed for review."""
    rows = exemptions()
    for name, check, reason in rows:
        assert check in CHECKS, f"op {name} exempts unknown check {check!r}; the checks are {list(CHECKS)}"
        assert isinstance(reason, str) and reason.strip(), f"op {name} exempts {check!r} without a reason"
    width = max((len(n) for n, _, _ in rows), default=2)
    print(f"\n{len(rows)} exemption(s) in the registry of {len(REGISTRY)} ops:")
    for name, check, reason in rows:
        print(f"  {name:<{width}}  {check:<7}  {reason}")


def test_every_exemption_is_needed():
    """An exempted check the op passes is a stale exemption, or one no sample demonstrates: give
    the op a sample on which the check fails (that is the reason's evidence), or drop the exemption."""
    stale = []
    for name, check, reason in exemptions():
        try:
            check_op(name, checks=(check,), exempt=False)
        except AssertionError:
            continue
        stale.append(f"{name}-{check} ({reason})")
    assert not stale, f"exempted checks that pass; delete these exemptions from the records: {stale}"


# ----- the checks themselves fail on broken ops --------------------------------------------------
# Records made here must not stay registered: the sweep above would find them.


@pytest.fixture
def scratch_op():
    made = []

    def make(name, *args, **kwargs):
        op = OpDef(f"_conformance_{name}", *args, **kwargs)
        made.append(op.name)
        return op

    yield make
    for name in made:
        REGISTRY.pop(name, None)


def _same(x: Spec) -> Spec:
    return x


def test_a_wrong_vjp_fails_the_vjp_check(scratch_op):
    op = scratch_op("cube", lambda ctx, x: x**3, lambda ctx, g: g * ctx.input(0) * 2.0, _same, ELEMENTWISE,
                    )  # fmt: skip
    with pytest.raises(AssertionError, match=r"\[vjp\].*gradient of input 0 vs central finite differences"):
        check_op(op, checks=("vjp",))


def test_a_first_order_only_vjp_fails_the_vjp2_check(scratch_op):
    """The gradient of x**3 right to first order but computed from constants: its own gradient is 0."""
    op = scratch_op("cube2", lambda ctx, x: x**3,
                    lambda ctx, g: g * paddlectl.framework.to_tensor(3 * ctx.input(0).numpy() ** 2), _same,
                    ELEMENTWISE)  # fmt: skip
    assert check_op(op, checks=("vjp",)) == {}
    with pytest.raises(AssertionError, match=r"\[vjp2\].*Hessian-vector product"):
        check_op(op, checks=("vjp2",))


def test_a_wrong_shape_rule_fails_the_infer_check(scratch_op):
    op = scratch_op("rowsum", lambda ctx, x: x.sum(axis=1), None, _same, OPAQUE,
                    samples=lambda rng: [Sample((rng.standard_normal((2, 3)),))])  # fmt: skip
    with pytest.raises(AssertionError, match=r"\[infer\].*float64\[2, 3\] for output 0, forward produced float64\[2\]"):
        check_op(op, checks=("infer",))


def test_an_opaque_op_without_samples_fails_and_says_how_to_fix_it(scratch_op):
    op = scratch_op("bare", lambda ctx, x: x, None, _same, OPAQUE)
    assert default_samples(op, np.random.default_rng(0)) is None
    with pytest.raises(AssertionError, match="give it samples="):
        check_op(op, checks=("infer",))
    op.exempt.update({c: "a test record" for c in CHECKS})
    assert check_op(op) == {c: "a test record" for c in CHECKS}


def test_default_samples_follow_the_kind_and_signature(scratch_op):
    rng = np.random.default_rng(0)
    binary = scratch_op("bin", lambda ctx, a, b, alpha=2.0: a + alpha * b, None, _same, "broadcast")
    (sample,) = default_samples(binary, rng)
    assert [a.shape for a in sample.inputs] == [(3, 4), (4,)] and sample.attrs == {"alpha": 2.0}
    assert all(a.dtype == np.float64 and a.min() >= 0.5 and a.max() <= 2.0 for a in sample.inputs)
    ternary = scratch_op("ter", lambda ctx, a, b, c: a * b * c, None, _same, ELEMENTWISE)
    assert [a.shape for a in default_samples(ternary, rng)[0].inputs] == [(3, 4)] * 3


def test_check_op_refuses_unknown_checks_and_ops():
    with pytest.raises(ConfigError, match="unknown check"):
        check_op("add", checks=("vjpp",))
    with pytest.raises(ConfigError, match="no op named"):
        check_op("no_such_op")
    with pytest.raises(ConfigError, match="unknown check"):
        skip_reason(REGISTRY["add"], "onxx")


def test_exempt_checks_are_skipped_with_their_reason(scratch_op):
    op = scratch_op("doubled", lambda ctx, x: x * 2, lambda ctx, g: g * 2, _same, ELEMENTWISE,
                    exempt={"trace": "a test record"})  # fmt: skip
    assert skip_reason(op, "trace") == "a test record"
    assert skip_reason(op, "vjp") is None


def test_a_vjp_wrapping_a_saved_value_fails_the_trace_check(scratch_op):
    """Right eagerly, but a traced training step would keep the tracing example's x."""

    def forward(ctx, x):
        ctx.save(x)
        return x * x / 2

    op = scratch_op("half_square", forward, lambda ctx, g: g * paddlectl.framework.to_tensor(ctx.saved[0]), _same,
                    OPAQUE, samples=lambda rng: [Sample((rng.standard_normal((2, 3)),))])  # fmt: skip
    assert check_op(op, checks=("vjp", "infer")) == {}
    with pytest.raises(AssertionError, match=r"\[trace\].*forward and gradient traced and executed vs eager"):
        check_op(op, checks=("trace",))


def test_an_elementwise_op_the_compiler_cannot_fuse_fails_the_compile_check(scratch_op):
    op = scratch_op("cbrt", lambda ctx, x: np.cbrt(x), None, _same, ELEMENTWISE)
    with pytest.raises(AssertionError, match=r"\[compile\].*left it unfused in every sample.*expr="):
        check_op(op, checks=("compile",))
