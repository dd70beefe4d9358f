"""Background compilation (``kernels.background``): on an empty cache a predictor's first runs use
NumPy references and serial twins while a worker process compiles the kernels, with the numbers
the compiled kernels give; each reference equals its kernel; a worker failure falls back to
compiling in the caller; training and eager code never run references."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import numba
import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from paddlectl.framework.kernels import activation, background, compile_worker, conv, conv_select, pool
from paddlectl.framework.kernels.launch import launch
from paddlectl.framework.kernels.numpy_body import evaluate

RNG = np.random.default_rng(0)


def _weight(name, shape):
    return numpy_helper.from_array((RNG.standard_normal(shape) * 0.3).astype(np.float32), name)


def _model(path) -> None:
    """A small net with every kind of kernel a PP-OCR model uses: 3x3, strided depthwise 5x5,
    grouped and 1x1 convs, hardswish and sigmoid epilogues, max/average pooling, nearest resize, a
    2x2 transposed conv, global pooling, a fully connected layer and softmax."""
    node = helper.make_node
    nodes = [
        node("Conv", ["x", "w1", "b1"], ["c1"], kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
        node("HardSigmoid", ["c1"], ["hs"], alpha=1 / 6, beta=0.5),
        node("Mul", ["c1", "hs"], ["a1"]),
        node("Conv", ["a1", "w2"], ["c2"], kernel_shape=[5, 5], pads=[2, 2, 2, 2], strides=[2, 2], group=16),
        node("Conv", ["c2", "w3", "b3"], ["c3"], kernel_shape=[1, 1]),
        node("Relu", ["c3"], ["a3"]),
        node("Conv", ["a3", "w4"], ["c4"], kernel_shape=[3, 3], pads=[1, 1, 1, 1], group=2),
        node("MaxPool", ["c4"], ["p1"], kernel_shape=[2, 2], strides=[2, 2]),
        node("AveragePool", ["p1"], ["p2"], kernel_shape=[3, 3], pads=[1, 1, 1, 1], count_include_pad=0),
        node("Resize", ["p2", "", "scales"], ["r1"], mode="nearest"),
        node("ConvTranspose", ["r1", "w5", "b5"], ["t1"], kernel_shape=[2, 2], strides=[2, 2]),
        node("Sigmoid", ["t1"], ["s1"]),
        node("GlobalAveragePool", ["s1"], ["g1"]),
        node("Flatten", ["g1"], ["f1"]),
        node("Gemm", ["f1", "w6", "b6"], ["logits"], transB=1),
        node("Softmax", ["logits"], ["probs"], axis=-1),
    ]
    inits = [
        _weight("w1", (16, 3, 3, 3)), _weight("b1", (16,)), _weight("w2", (16, 1, 5, 5)), _weight("w3", (24, 16, 1, 1)),
        _weight("b3", (24,)), _weight("w4", (24, 12, 3, 3)), _weight("w5", (24, 8, 2, 2)), _weight("b5", (8,)),
        _weight("w6", (10, 8)), _weight("b6", (10,)),
        numpy_helper.from_array(np.array([1, 1, 2, 2], np.float32), "scales"),
    ]  # fmt: skip
    graph = helper.make_graph(
        nodes,
        "cold",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3, 64, 96])],
        [
            helper.make_tensor_value_info("probs", TensorProto.FLOAT, [2, 10]),
            helper.make_tensor_value_info("t1", TensorProto.FLOAT, [2, 8, 64, 96]),
        ],
        inits,
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 8
    onnx.save(model, str(path))


_SCRIPT = textwrap.dedent(
    """
    import json, sys
    import numpy as np
    from numba.core import event
    from paddlectl.framework import inference
    from paddlectl.framework.kernels import background

    compiled = []
    class Listener(event.Listener):
        def on_start(self, ev): pass
        def on_end(self, ev):
            f = ev.data["dispatcher"].py_func
            compiled.append(f.__module__ + "." + f.__qualname__)
    event.register("numba:compile", Listener())

    x = np.random.default_rng(1).standard_normal((2, 3, 64, 96)).astype(np.float32)
    predictor = inference.create_predictor(inference.Config(sys.argv[1]))
    first = [a.tolist() for a in predictor.run([x])]
    report = {"first": first, "references": background.STATS.references, "submitted": background.STATS.submitted,
              "foreground": compiled}
    if sys.argv[2] == "wait":  # until a run asks for nothing new (a compiled step can reach kernels a reference did not)
        for _ in range(5):
            asked = background.STATS.submitted
            report["waited"] = background.wait(600)
            again = inference.create_predictor(inference.Config(sys.argv[1]))
            report["compiled"] = [a.tolist() for a in again.run([x])]
            if background.STATS.submitted == asked:
                break
        report["failed"] = background.STATS.failed
    print(json.dumps(report))
    """
)


def _run(model, caches, mode: str, **env) -> dict:
    settings = {
        **os.environ,
        "NUMBA_CACHE_DIR": str(caches / "numba"),
        "PADDLECTL_KERNEL_CACHE": str(caches / "kernels"),
        background.ENV_VAR: "1",
        **env,
    }
    done = subprocess.run(
        [sys.executable, "-c", _SCRIPT, str(model), mode], env=settings, capture_output=True, text=True, timeout=900
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_a_cold_first_run_uses_references_with_the_compiled_numbers(tmp_path):
    model = tmp_path / "cold.onnx"
    _model(model)
    cold = _run(model, tmp_path, "wait")
    assert cold["references"] > 0 and cold["submitted"] > 0 and cold["waited"] and not cold["failed"]
    assert cold["foreground"] == []  # nothing compiled in the predictor's process
    for first, compiled in zip(cold["first"], cold["compiled"], strict=True):
        np.testing.assert_allclose(np.array(first), np.array(compiled), rtol=1e-5, atol=1e-5)
    warm = _run(model, tmp_path, "once")  # the worker's kernels, from the disk cache
    assert warm["references"] == 0 and warm["foreground"] == []
    for first, compiled in zip(warm["first"], cold["compiled"], strict=True):
        np.testing.assert_allclose(np.array(first), np.array(compiled), rtol=1e-5, atol=1e-5)


def test_switched_off_the_first_run_compiles_in_the_process(tmp_path):
    model = tmp_path / "cold.onnx"
    _model(model)
    off = _run(model, tmp_path, "once", **{background.ENV_VAR: "0"})
    assert off["references"] == 0 and off["submitted"] == 0 and off["foreground"]


# ----- each reference against its kernel --------------------------------------------------------------


@pytest.mark.parametrize(
    ("shape", "out", "kernel", "stride", "pad", "dil", "groups"),
    [
        ((1, 8, 13, 11), 6, (3, 3), (1, 1), 1, (1, 1), 1),
        ((2, 8, 14, 10), 8, (3, 3), (2, 2), 1, (1, 1), 2),
        ((1, 6, 9, 9), 6, (5, 5), (1, 1), 2, (1, 1), 6),
        ((1, 4, 9, 9), 8, (3, 3), (2, 2), 1, (1, 1), 4),
        ((2, 6, 10, 12), 4, (2, 3), (2, 1), 0, (1, 2), 1),
        ((1, 24, 16, 16), 24, (2, 2), (2, 2), 0, (1, 1), 1),
    ],
)
def test_the_conv_references_equal_the_kernels(shape, out, kernel, stride, pad, dil, groups):
    x = RNG.standard_normal(shape).astype(np.float32)
    w = RNG.standard_normal((out, shape[1] // groups, *kernel)).astype(np.float32)
    pads = (pad,) * 4
    outs = tuple(
        (s + 2 * pad - d * (k - 1) - 1) // st + 1 for s, k, st, d in zip(shape[2:], kernel, stride, dil, strict=True)
    )
    fast = conv_select.forward(x, w, stride, pads, dil, groups, outs)[0]
    np.testing.assert_allclose(
        conv_select.reference_forward(x, w, stride, pads, dil, groups, outs)[0], fast, rtol=1e-5, atol=2e-5
    )
    g = RNG.standard_normal(fast.shape).astype(np.float32)
    np.testing.assert_allclose(
        conv_select.reference_input_grad(g, w, shape, stride, pads, dil, groups),
        conv_select.input_grad(g, w, shape, stride, pads, dil, groups),
        rtol=1e-5,
        atol=2e-5,
    )


def test_the_pooling_gather_softmax_and_interleave_twins_equal_the_kernels():
    x = RNG.standard_normal((5, 13, 11)).astype(np.float32)
    x[0, 0, 0] = x[1, 3, 4] = np.nan  # NaN keeps the kernels' rule: a first NaN stays, a later one loses
    hs, he = np.array([0, 1, 3, 5, 9]), np.array([2, 4, 6, 8, 13])
    ws, we = np.array([0, 0, 4, 8]), np.array([3, 4, 7, 11])
    for fast, reference in zip(
        pool.max_pool.serial(x, hs, he, ws, we), pool.max_pool.reference(x, hs, he, ws, we), strict=True
    ):
        np.testing.assert_array_equal(reference, fast)
    for fast, reference in zip(pool.max_pool_2x2.serial(x, 6, 5), pool.max_pool_2x2.reference(x, 6, 5), strict=True):
        np.testing.assert_array_equal(reference, fast)
    y = RNG.standard_normal((5, 13, 11)).astype(np.float32)
    for args in [(7, 6, 3, 3, 2, 2, 1, 1), (13, 11, 3, 3, 1, 1, 1, 1), (5, 4, 3, 3, 3, 3, 1, 1)]:
        np.testing.assert_array_equal(pool.max_pool_values.reference(y, *args), pool.max_pool_values.serial(y, *args))
    np.testing.assert_array_equal(pool.max_pool_values_2x2_same.reference(y), pool.max_pool_values_2x2_same.serial(y))
    divisor = ((he - hs)[:, None] * (we - ws)[None, :]).astype(np.float64)
    np.testing.assert_allclose(
        pool.avg_pool.reference(y, hs, he, ws, we, divisor), pool.avg_pool.serial(y, hs, he, ws, we, divisor), rtol=1e-6
    )
    rows, cols = np.array([0, 0, 3, 12]), np.array([1, 10, 2])
    np.testing.assert_array_equal(pool.gather_grid.reference(y, rows, cols), pool.gather_grid.serial(y, rows, cols))
    scores = (RNG.standard_normal((7, 33)) * 30).astype(np.float32)
    np.testing.assert_allclose(
        activation.softmax_fwd.reference(scores), activation.softmax_fwd.serial(scores), rtol=1e-6
    )
    taps = RNG.standard_normal((2, 3, 2, 3, 4, 5)).astype(np.float32)
    np.testing.assert_array_equal(conv.interleave_taps.reference(taps), conv.interleave_taps.serial(taps))
    g, w2 = RNG.standard_normal((2, 6, 4, 5)).astype(np.float32), RNG.standard_normal((6, 12)).astype(np.float32)
    np.testing.assert_allclose(
        conv.placed_taps.reference(g, w2, 3, 2, 2), conv.placed_taps.serial(g, w2, 3, 2, 2), rtol=1e-5
    )


@pytest.mark.parametrize(
    ("body", "reduce"),
    [
        ("t0 = x0 * x1; t1 = max(t0, T(0.0))", None),
        ("t0 = min(x0, x1, T(0.5)); t1 = abs(t0) - math.exp(x1)", None),
        ("t0 = T(1.0) if x0 > T(0.0) else (T(-1.0) if x0 < T(0.0) else x0)", None),
        ("t0 = x0 * max(T(0.0), min(T(1.0), x0 * T(0.16666667) + T(0.5)))", None),
        ("t0 = T(0.5) * x0 * (T(1.0) + math.erf(x0 * T(0.70710677)))", None),
        ("t0 = x1 if T(-1.0) < x0 <= T(1.0) else x0 ** T(2.0)", None),
        ("t0 = math.exp(x0 - x1)", "sum"),
        ("t0 = x0 * x1", "mean"),
        ("t0 = x0 + x1", "max"),
    ],
)
def test_a_fused_body_by_numpy_equals_its_kernel(body, reduce):
    a = RNG.standard_normal((4, 6, 5)).astype(np.float32)
    b = RNG.standard_normal((6, 1)).astype(np.float32)
    a[0, 0, 0] = np.nan
    dtypes, shapes = (a.dtype, b.dtype), (a.shape, b.shape)
    axis = (2,) if reduce else None
    fast = launch(body, ("test",), dtypes, shapes, np.dtype(np.float32), reduce, axis)(a, b)
    np.testing.assert_allclose(evaluate(body, (a, b), np.float32, reduce, axis), fast, rtol=2e-6, atol=1e-6)


def test_a_body_without_a_numpy_twin_says_so():
    with pytest.raises(background.NoReference):
        evaluate("t0 = math.erf(x0)", (np.ones(3),), np.float64)
    with pytest.raises(background.NoReference):
        evaluate("t0 = x0", (np.ones((2, 3)),), np.float64, "prod", (1,))


# ----- the worker ---------------------------------------------------------------------------------------


def test_the_worker_answers_a_bad_request_with_an_error():
    request = json.dumps(
        {"address": {"module": "paddlectl.framework.kernels.pool", "name": "no_such"}, "signature": "(int64,)"}
    )
    with pytest.raises(AttributeError):
        compile_worker.compile_request(request)
    with pytest.raises(NameError):  # a signature is Numba types, nothing else is reachable
        compile_worker.signature("(__import__('os'),)")
    with pytest.raises(ValueError, match="Numba types"):
        compile_worker.signature("(1, 2)")


@numba.njit(cache=True)
def _plus_one(a):
    return a + 1


def test_a_kernel_the_worker_fails_on_compiles_in_the_caller():
    """A dispatcher whose address the worker cannot resolve: its answer is a failure, after which
    ``ready`` says "compile here", so a caller never waits on the worker forever."""
    before = background.set_enabled(True)
    try:
        signature = (numba.from_dtype(np.dtype(np.int32))[:, ::1],)  # a signature nothing compiled
        address = {"module": "paddlectl.framework.kernels.pool", "name": "not_a_kernel"}
        assert not background.ready(_plus_one, signature, address)
        assert background.wait(300)
        assert background.ready(_plus_one, signature, address)
        assert any("not_a_kernel" in f for f in background.STATS.failed)
    finally:
        background.set_enabled(before)


def test_outside_a_predictor_references_never_stand_in():
    """Eager code (training) runs the kernels themselves even with background compilation on."""
    before = background.set_enabled(True)
    try:
        assert not background.deferring()
        x = RNG.standard_normal((1, 4, 8, 8)).astype(np.float32)
        w = RNG.standard_normal((4, 1, 3, 3)).astype(np.float32)
        used = background.STATS.references
        conv_select.forward(x, w, (1, 1), (1, 1, 1, 1), (1, 1), 4, (8, 8))
        assert background.STATS.references == used
    finally:
        background.set_enabled(before)
