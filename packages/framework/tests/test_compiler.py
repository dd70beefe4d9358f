"""The compiler: the ops' scalar expressions, generated kernels (broadcasting, reductions,
epilogues), the fusion pass's groups, the on-disk kernel cache and the compile report."""

from __future__ import annotations

import json
import math
import string
import subprocess
import sys

import numpy as np
import pytest

import paddlectl.framework as paddle
from paddlectl.framework.compiler.fused_op import fused_elementwise_op
from paddlectl.framework.core.op import REDUCE, REGISTRY, Context
from paddlectl.framework.jit import InputSpec
from paddlectl.framework.kernels import kernel_cache
from paddlectl.framework.kernels.codegen import KernelSourceError, check_body, expression, kernel_source, template
from paddlectl.framework.kernels.launch import launch
from paddlectl.framework.static import parse_program, print_program
from paddlectl.framework.static.executor import Executor
from paddlectl.framework.static.input_spec import signatures
from paddlectl.framework.static.passes import PassManager, optimize
from paddlectl.framework.static.trace import trace
from paddlectl.framework.vision.models import LeNet

RNG = np.random.default_rng(0)
FUSED = fused_elementwise_op.forward


def _trace(fn, *specs):
    program, _ = trace(fn, signatures([InputSpec(s, "float32", f"x{i}") for i, s in enumerate(specs)]))
    return program


def _fused_ops(program):
    return [op for op in program.walk() if op.name == "fused_elementwise"]


ATTRS = {
    "leaky_relu": {"negative_slope": 0.1},
    "elu": {"alpha": 0.7},
    "celu": {"alpha": 0.6},
    "hardsigmoid": {"slope": 0.2, "offset": 0.4},
    "scale": {"scale": 1.5, "bias": -0.25, "bias_after_scale": False},
    "clip": {"min": -0.5, "max": 0.75},
    "gelu": {"approximate": True},
    "softplus": {"beta": 2.0, "threshold": 3.0},
    "softshrink": {"threshold": 0.3},
    "thresholded_relu": {"threshold": 0.5, "value": -1.0},
}
POSITIVE_ONLY = {"log", "log1p", "sqrt", "rsqrt", "reciprocal"}
EXPRESSED = sorted(name for name, op in REGISTRY.items() if op.expr is not None and op.kind != REDUCE)


def _expr(name: str, attrs: dict, operands: list[str]) -> str:
    return expression(template(REGISTRY[name].expr, attrs), operands)


def _arity(text: str) -> int:
    return len({f for _, f, _, _ in string.Formatter().parse(text) if f})


def test_every_scalar_expression_matches_its_op_in_one_generated_kernel():
    """Every record's ``expr`` (with its attrs: gradient ops and gelu's two forms too) summed in one
    kernel: any expression off by more than rounding from its op's forward shows in the sum."""
    assert {"relu", "relu_grad", "sigmoid", "gelu_grad", "add", "scale", "clip", "hardshrink"} <= set(EXPRESSED)
    x = RNG.uniform(-3, 3, 257).astype("float32")
    pos = RNG.uniform(0.2, 3, 257).astype("float32")
    statements, expected, k = [], np.zeros(257, np.float64), 0
    for name in EXPRESSED:
        op = REGISTRY[name]
        for attrs in ({}, ATTRS.get(name, {}), {**ATTRS.get(name, {}), "approximate": False}):
            if attrs.get("approximate") is False and name not in ("gelu", "gelu_grad"):
                continue
            arity = _arity(template(op.expr, attrs))
            arrays = ([pos] if name in POSITIVE_ONLY else [x]) + [pos] * (arity - 1)
            operands = ["x1" if name in POSITIVE_ONLY else "x0"] + ["x1"] * (arity - 1)
            out = op.forward(Context((False,) * arity, attrs), *arrays, **attrs)
            k += 1
            expected += np.asarray(out, np.float64) * k  # weights keep entries from cancelling
            statements.append(f"t{k} = {_expr(name, attrs, operands)}")
    weighted = " + ".join(f"t{j} * T({j}.0)" for j in range(1, k + 1))
    body = "; ".join([*statements, f"t{k + 1} = {weighted}"])
    got = FUSED(None, x, pos, body=body, ops=EXPRESSED, dtype=np.dtype("float32"))
    np.testing.assert_allclose(got, expected, rtol=2e-5, atol=1e-3)


@pytest.mark.parametrize(
    ("a_shape", "b_shape"),
    [
        ((4, 5, 6), (6,)),
        ((4, 5, 6), (5, 1)),
        ((2, 1, 3), (1, 4, 1)),
        ((7,), ()),
        ((0, 3), (3,)),
        ((0,), (1,)),
        ((10000,), (10000,)),
    ],
)
def test_generated_kernel_broadcasts_like_numpy(a_shape, b_shape):
    a = RNG.standard_normal(a_shape).astype("float32")
    b = RNG.standard_normal(b_shape).astype("float32")
    body = "t0 = x0 * x1; t1 = max(t0, T(0.0))"
    out = FUSED(None, a, b, body=body, ops=["multiply", "relu"], dtype=np.dtype("float32"))
    np.testing.assert_allclose(out, np.maximum(a * b, 0), rtol=1e-6)
    transposed = np.asfortranarray(RNG.standard_normal((6, 5)).astype("float32")).T  # non-contiguous
    out = FUSED(None, transposed, b.reshape(-1)[:1], body=body, ops=["multiply", "relu"], dtype=np.dtype("float32"))
    np.testing.assert_allclose(out, np.maximum(transposed * b.reshape(-1)[:1], 0), rtol=1e-6)


@pytest.mark.parametrize(
    ("reduce", "axis", "keepdim"), [("sum", [2], False), ("mean", [1, 2], True), ("max", [-1], False)]
)
def test_generated_kernel_with_a_trailing_reduction(reduce, axis, keepdim):
    a = RNG.standard_normal((3, 4, 5)).astype("float32")
    b = RNG.standard_normal((4, 1)).astype("float32")
    out = FUSED(
        None, a, b, body="t0 = x0 + x1; t1 = math.exp(t0)", ops=["add", "exp", reduce],
        dtype=np.dtype("float32"), reduce=reduce, axis=axis, keepdim=keepdim,
    )  # fmt: skip
    expected = getattr(np, reduce)(np.exp(a + b), axis=tuple(axis), keepdims=keepdim)
    np.testing.assert_allclose(out, expected, rtol=1e-5)


def test_kernel_source_fixes_each_leafs_inner_stride():
    """A broadcast leaf is read once per row and a contiguous one without a stride (what lets LLVM
    vectorise); results for every pattern are covered by the broadcasting tests above."""
    serial = kernel_source("t0 = x0 * x1 + x2", ["float32"] * 3, "float32", inner="cbs").split("@njit")[1]
    before_loop, loop = serial.split("for j in range(inner):")
    assert "x1 = a1[np.uint64(o1)]" in before_loop and "s2 = strides[2, nd - 1]" in before_loop
    assert "x0 = a0[np.uint64(o0 + j)]" in loop and "x2 = a2[np.uint64(o2 + j * s2)]" in loop
    assert "s0 =" not in serial and "s1 =" not in serial and "a1[" not in loop
    with pytest.raises(ValueError, match="inner="):
        kernel_source("t0 = x0 * x1", ["float32"] * 2, "float32", inner="cx")
    with pytest.raises(ValueError, match="inplace="):
        kernel_source("t0 = x0 * x1", ["float32"] * 2, "float32", inplace=1, inner="cb")


def test_epilogue_writes_over_its_input_only_when_it_may():
    a = RNG.standard_normal((4, 8)).astype("float32")
    bias = RNG.standard_normal(8).astype("float32")
    expected = a + bias
    out = FUSED(None, a, bias, body="t0 = x0 + x1", ops=["add"], dtype=np.dtype("float32"), inplace=0)
    assert out is a
    np.testing.assert_array_equal(out, expected)
    frozen = RNG.standard_normal((4, 8)).astype("float32")
    frozen.flags.writeable = False
    out = FUSED(None, frozen, bias, body="t0 = x0 + x1", ops=["add"], dtype=np.dtype("float32"), inplace=0)
    assert out is not frozen and np.array_equal(out, frozen + bias)


@pytest.mark.parametrize(
    "body",
    [
        "t0 = __import__('os').system('true')",
        "t0 = x0.__class__",
        "t0 = x5 + 1.0",
        "t0 = open('f')",
        "t0 = 'text'",
        "x0 = x0 + 1.0",
        "t0 = x0; import os",
        "t0 = [x0][0]",
    ],
)
def test_only_arithmetic_bodies_become_kernels(body):
    with pytest.raises(KernelSourceError, match="fused_elementwise body"):
        check_body(body, 1)


def test_a_hostile_body_in_model_text_is_refused_at_parse_time():
    text = '%x: f32[N,3] = input "x"\n%0: f32[N,3] = fused_elementwise(%x) {body="t0 = __import__(\\"os\\")", ops=["relu"], dtype=f32}\nreturn %0\n'
    with pytest.raises(ValueError, match="fused_elementwise body"):
        parse_program(text, {})


# ----- the fusion pass ---------------------------------------------------------------------------


def test_fusion_groups_chains_and_leaves_ops_without_an_entry():
    def f(x):
        y = paddle.tanh(paddle.floor(paddle.exp(x) + 1.0))  # floor has no expression: it splits the chain
        return paddle.nn.functional.relu(y * 2.0 - x)

    program = _trace(f, [None, 6])
    result = PassManager(pipeline=["fuse_elementwise"]).run(program)
    fused = _fused_ops(result.program)
    names = [op.name for op in result.program.walk()]
    assert "floor" in names and len(fused) == 2
    assert fused[0].attrs["ops"][0] == "exp" and fused[1].attrs["ops"][0] == "tanh"
    assert fused[1].attrs["ops"][-1] == "relu" and len(fused[1].attrs["ops"]) == 4
    x = RNG.standard_normal((3, 6)).astype("float32")
    np.testing.assert_allclose(Executor(result.program).run([x])[0], Executor(program).run([x])[0], rtol=1e-6)


def test_fusion_ends_a_group_with_a_trailing_reduction_only_where_legal():
    def f(x):
        last = (paddle.exp(x) * 2.0).sum(axis=-1)
        first = (paddle.exp(x) * 3.0).sum(axis=0)  # not the last axes: the reduction stays its own op
        return last, first

    program = _trace(f, [4, 5, 6])
    result = PassManager(pipeline=["fuse_elementwise"]).run(program)
    fused = _fused_ops(result.program)
    assert [op.attrs.get("reduce") for op in fused] == ["sum", None]
    assert [op.name for op in result.program.walk()].count("sum") == 1
    x = RNG.standard_normal((4, 5, 6)).astype("float32")
    for got, want in zip(Executor(result.program).run([x]), Executor(program).run([x]), strict=True):
        np.testing.assert_allclose(got, want, rtol=1e-5)


def test_a_reduction_over_every_axis_ends_its_group():
    """``paddle.mean(x)`` has ``axis=None``: every axis, which are the last ones (the pass used to
    fail on it, so no program with a whole-tensor mean after an elementwise op could be optimised)."""

    def f(x):
        return paddle.mean(paddle.exp(x) * 2.0), paddle.sum(paddle.abs(x) + 1.0, keepdim=True)

    program = _trace(f, [None, 5, 6])
    result = PassManager(pipeline=["fuse_elementwise"]).run(program)
    fused = _fused_ops(result.program)
    assert [(op.attrs["reduce"], list(op.attrs["axis"])) for op in fused] == [("mean", [0, 1, 2]), ("sum", [0, 1, 2])]
    x = RNG.standard_normal((4, 5, 6)).astype("float32")
    for got, want in zip(Executor(result.program).run([x]), Executor(program).run([x]), strict=True):
        assert got.shape == want.shape
        np.testing.assert_allclose(got, want, rtol=1e-5)


def test_a_conv_read_twice_by_its_activation_gives_its_bias_to_the_group():
    """Hardswish reads the conv's output twice (``x * relu6(x + 3) / 6``): the bias add still joins
    the activation's group, and a reader that is not elementwise keeps the bias on the conv."""
    conv, conv2 = paddle.nn.Conv2D(3, 4, 3, padding=1), paddle.nn.Conv2D(4, 2, 1)

    def f(x):
        y = conv(x)
        return conv2(y * paddle.nn.functional.relu6(y + 3.0) / 6.0)

    program = _trace(f, [None, 3, 5, 5])
    result = PassManager(pipeline=["fuse_elementwise"]).run(program)
    convs = [op for op in result.program.walk() if op.name == "conv2d"]
    assert [op.inputs[2] is None for op in convs] == [True, False]
    (fused,) = _fused_ops(result.program)
    assert fused.attrs["ops"][:2] == ["add", "add"] and tuple(fused.inputs[1].shape) == (4, 1, 1)  # + bias, + 3
    x = RNG.standard_normal((2, 3, 5, 5)).astype("float32")
    np.testing.assert_allclose(
        Executor(result.program).run([x])[0], Executor(program).run([x])[0], rtol=1e-5, atol=1e-6
    )


def test_lenet_report_and_text_round_trip():
    paddle.seed(0)
    layer = LeNet()
    layer.eval()
    program, _ = trace(layer.forward, signatures([InputSpec([None, 1, 28, 28], "float32", "x")]), layer=layer)
    result = optimize(program, disabled=["fuse_fc"])  # which would take the matmuls' bias adds itself
    report = result.compile_report
    assert report.groups_formed == 5 and report.ops_fused == 7 and report.kernels == 2
    # the convs' bias adds with their relus over [N,6,28,28] and [N,16,10,10], and the three matmul
    # bias adds, all written in place
    assert report.saved_bytes() == "51288*N" and report.saved_bytes({"N": 2}) == 102576
    assert {g.epilogue_of for g in report.groups} == {"conv2d", "matmul"}
    assert [op.attrs.get("ops") for op in _fused_ops(result.program)][:2] == [["add", "relu"]] * 2
    text = report.format({"N": 1})
    assert "5 groups, 7 ops fused into 2 kernels" in text and "51288 bytes" in text
    again = parse_program(print_program(result.program), result.program.weights)
    assert again == result.program


# ----- the kernel cache --------------------------------------------------------------------------

_BODY = "t0 = x0 * x1; t1 = x0 - t0"
_CHILD = f"""
import json, numpy as np
from paddlectl.framework.kernels.kernel_cache import get_kernel
from paddlectl.framework.compiler.fused_op import fused_elementwise_op
k = get_kernel("{_BODY}", [np.float64, np.float64], np.float64)
a = np.arange(6.0).reshape(2, 3)
out = fused_elementwise_op.forward(None, a, a, body="{_BODY}", ops=["multiply", "subtract"], dtype=np.float64)
print(json.dumps({{"source": k.stats.source, "path": k.path.name, "ok": bool(np.allclose(out, a - a * a))}}))
"""


def test_a_second_process_loads_the_kernel_from_the_disk_cache(tmp_path, monkeypatch):
    monkeypatch.setenv(kernel_cache.ENV_VAR, str(tmp_path))
    kernel_cache.clear_memory()
    first = kernel_cache.get_kernel(_BODY, [np.float64, np.float64], np.float64)
    assert first.stats.source == "compiled" and first.stats.seconds > 0
    assert kernel_cache.get_kernel(_BODY, ["float64", "float64"], "float64").stats.source == "memory"
    assert first.path.read_text().startswith('"""Generated by paddlectl.framework.kernels.codegen')
    assert any((tmp_path / "__pycache__").glob(f"{first.path.stem}*.nbi"))
    child = subprocess.run([sys.executable, "-c", _CHILD], capture_output=True, text=True, check=True)
    second = json.loads(child.stdout)
    assert second == {"source": "disk", "path": first.path.name, "ok": True}


def test_a_tampered_module_is_replaced_by_the_generated_text(tmp_path, monkeypatch):
    monkeypatch.setenv(kernel_cache.ENV_VAR, str(tmp_path))
    assert kernel_cache.cache_dir() == tmp_path
    body = "t0 = x0 + x1; t1 = t0 * t0"
    source = kernel_source(body, ["float32", "float32"], "float32")
    path = tmp_path / f"fused_{kernel_cache.kernel_key(source)}.py"
    path.write_text("raise SystemExit('not ours')\n")
    kernel_cache.clear_memory()
    kernel = kernel_cache.get_kernel(body, ["float32", "float32"], "float32")
    assert kernel.path == path and path.read_text() == source
    a = np.ones(3, "float32")
    out = FUSED(None, a, a, body=body, ops=["add", "square"], dtype=np.dtype("float32"))
    np.testing.assert_array_equal(out, np.full(3, 4.0, "float32"))


def test_without_a_usable_cache_directory_groups_stay_unfused_and_say_why(tmp_path, monkeypatch):
    blocker = tmp_path / "not-a-directory"
    blocker.write_text("")
    monkeypatch.setenv(kernel_cache.ENV_VAR, str(blocker / "kernels"))
    kernel_cache.clear_memory()
    program = _trace(lambda x: paddle.nn.functional.relu(paddle.exp(x) + 1.0), [None, 4])
    result = PassManager(pipeline=["fuse_elementwise"]).run(program)
    report = result.compile_report
    assert not _fused_ops(result.program) and report.groups_formed == 0
    assert len(report.skipped) == 1 and "set PADDLECTL_KERNEL_CACHE" in report.skipped[0]
    assert "not fused: exp+add+relu" in str(report)
    x = RNG.standard_normal((2, 4)).astype("float32")
    np.testing.assert_allclose(Executor(result.program).run([x])[0], Executor(program).run([x])[0])


def test_nan_propagates_as_in_the_eager_ops():
    x = np.array([np.nan, 1.0, -2.0, 3.0], "float32")
    y = np.array([0.5, np.nan, 1.0, np.nan], "float32")
    body = "; ".join(
        [
            f"t0 = {_expr('maximum', {}, ['x0', 'x1'])}",
            f"t1 = {_expr('minimum', {}, ['t0', 'x1'])}",
            f"t2 = {_expr('relu', {}, ['t1'])}",
        ]
    )
    got = FUSED(None, x, y, body=body, ops=["maximum", "minimum", "relu"], dtype=np.dtype("float32"))
    np.testing.assert_array_equal(got, np.maximum(np.minimum(np.maximum(x, y), y), 0))
    rows = np.array([[1.0, np.nan, 3.0], [1.0, 2.0, 3.0]], "float32")
    for reduce in ("max", "min"):
        got = FUSED(
            None, rows, body="t0 = x0 + T(0.0)", ops=["scale", reduce], dtype=np.dtype("float32"),
            reduce=reduce, axis=[-1],
        )  # fmt: skip
        np.testing.assert_array_equal(got, getattr(np, reduce)(rows, axis=-1))


def test_division_by_zero_gives_inf_and_nan_as_in_the_eager_ops():
    x = np.array([1.0, -1.0, 0.0, 2.0], "float32")
    y = np.array([0.0, 0.0, 0.0, 4.0], "float32")
    with np.errstate(divide="ignore", invalid="ignore"):
        expected = x / y
    got = FUSED(None, x, y, body="t0 = x0 / x1", ops=["divide"], dtype=np.dtype("float32"))
    np.testing.assert_array_equal(got, expected)


@pytest.mark.parametrize("reduce", [None, "sum"])
def test_large_groups_run_the_parallel_variant_with_the_serial_results(reduce):
    from paddlectl.framework.kernels import serial_kernels

    rng = np.random.default_rng(3)
    x, bias = rng.standard_normal((64, 48, 700)).astype("float32"), rng.standard_normal((1, 1, 700)).astype("float32")
    body = "t0 = x0 + x1; t1 = max(t0, T(0.0))"
    run = launch(body, ("add", "relu"), ("float32", "float32"), (x.shape, bias.shape), np.dtype("float32"), reduce,
                 (2,) if reduce else None)  # fmt: skip
    assert run.big
    with serial_kernels():
        serial = run(x, bias)
    parallel = run(x, bias)
    assert run._own.module.kernel_parallel.signatures, "the parallel variant did not run"
    np.testing.assert_allclose(parallel, serial, rtol=1e-6)
    expected = np.maximum(x + bias, 0)
    np.testing.assert_allclose(parallel, expected.sum(axis=2) if reduce else expected, rtol=1e-5, atol=1e-5)


def test_bodies_calling_libm_per_element_go_parallel_sooner():
    """A body that calls libm per element (log1p; erf and exp in float64) is compute-bound and splits
    over threads from 256k elements; a vectorised one (float32 exp and erf, max) only from 512k."""
    from paddlectl.framework.kernels.codegen import libm_bound

    assert libm_bound("t0 = x0 * math.log1p(x0)", np.float32)
    assert libm_bound("t0 = math.exp(x0)", np.float64) and libm_bound("t0 = math.erf(x0)", np.float64)
    assert not libm_bound("t0 = math.exp(x0) + math.sqrt(x0) + math.erf(x0)", np.float32)
    assert not libm_bound("t0 = max(x0, T(0.0))", np.float64)
    assert "fastmath.erf(" in kernel_source("t0 = x0 * math.erf(x0)", ["float32"], "float32")
    # a loop that calls libm anyway keeps libm's exp (faster as a scalar than fastmath's)
    assert "fastmath.exp(" in kernel_source("t0 = math.exp(x0)", ["float32"], "float32")
    assert "fastmath.exp(" not in kernel_source("t0 = math.exp(x0) * math.log1p(x0)", ["float32"], "float32")
    x = np.ones(1 << 18, "float32")
    body = "t0 = x0 * math.log1p(x0)"
    assert launch(body, ("log1p",), ("float32",), (x.shape,), np.dtype("float32")).big
    assert not launch("t0 = x0 * T(2.0)", ("scale",), ("float32",), (x.shape,), np.dtype("float32")).big


def test_float32_erf_in_a_generated_kernel_is_within_5e7_of_libm():
    """``fastmath.erf`` (the rational approximation) through a fused kernel, against math.erf in float64."""
    x = np.linspace(-6, 6, 100_001).astype(np.float32)

    def erf(a):
        return FUSED(None, a, body="t0 = math.erf(x0)", ops=["erf"], dtype=np.dtype("float32"))

    got = erf(x)
    want = np.array([math.erf(v) for v in x.astype(np.float64)])
    assert np.abs(got.astype(np.float64) - want).max() < 5e-7
    assert got[0] == -1.0 and got[-1] == 1.0 and np.isnan(erf(np.float32([np.nan, 0.5])))[0]


@pytest.mark.parametrize(
    "x_shape, b_shape, widened",
    [((16, 512, 2, 2), (512, 1, 1), True), ((256, 8, 1, 3), (8, 1, 1), True), ((128, 5, 6), (128, 1, 6), True),
     ((3, 8, 1, 3), (8, 1, 1), False), ((4, 5, 6), (4, 1, 6), False), ((2, 5, 3), (2, 1, 3), False),
     ((16, 64, 16, 16), (64, 1, 1), False), ((4, 7), (7,), False)],
    ids=str,
)  # fmt: skip
def test_short_rows_widen_a_mixed_broadcast_leaf(x_shape, b_shape, widened):
    """A leaf broadcasting over some trailing dims and not others (NCHW bias on 2x2 planes) is
    materialised over them where rows would be short and many, so they coalesce into long ones (a
    few short rows are cheaper than the copy); same results."""

    rng = np.random.default_rng(4)
    x, b = rng.standard_normal(x_shape).astype("float32"), rng.standard_normal(b_shape).astype("float32")
    run = launch("t0 = x0 * x1; t1 = t0 - x0", ("multiply", "subtract"), ("float32", "float32"), (x_shape, b_shape),
                 np.dtype("float32"))  # fmt: skip
    assert bool(run.widen) == widened
    if widened:
        assert run.shape[-1] >= 64 or run.shape[-1] == np.prod(x_shape)
    np.testing.assert_allclose(run(x, b), x * b - x, rtol=1e-6)
