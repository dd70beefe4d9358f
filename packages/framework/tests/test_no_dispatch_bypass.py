"""No op computes on a tensor's data outside dispatch (issue 21, item 3).

An op that reads ``._data`` and wraps the result is invisible to the tracer, which then records
the example input's result as a constant: a silent wrong answer in every traced or exported
program. Each function that did so is checked here eager against real PaddlePaddle and traced
against eager on inputs other than the trace's examples; data-dependent output sizes must be
refused while tracing; and a source scan fails on any new ``._data`` / ``_wrap(`` outside an op's
forward, vjp or shape rule.
"""

from __future__ import annotations

import ast
from pathlib import Path

import numpy as np
import pytest

import paddlectl.framework as paddle
from paddlectl.framework import inference, jit, nn
from paddlectl.framework.core.op import REGISTRY
from paddlectl.framework.errors import ConversionError
from paddlectl.framework.jit import InputSpec

OPS_DIR = Path(paddle.__file__).parent / "ops"
NAN, INF = np.nan, np.inf


def _f(*rows):
    return np.array(rows, dtype=np.float32)


def _i(*rows):
    return np.array(rows, dtype=np.int64)


# ----- (a) the example ------------------------------------------------------------------


@pytest.mark.parametrize("batch", [1, None])
def test_signbit_plus_x_traced_equals_eager(batch):
    """Before the fix the traced program returned [[-1, 3, -3]] (signbit of its random example)
    for a fixed batch, and failed for a None batch; eager gives [[0, 2, -2]]."""
    fn = paddle.jit.to_static(
        lambda x: paddle.signbit(x).astype("float32") + x, input_spec=[InputSpec([batch, 3], "float32")]
    )
    x = paddle.to_tensor([[-1.0, 2.0, -3.0]])
    np.testing.assert_array_equal(fn(x).numpy(), [[0.0, 2.0, -2.0]])
    np.testing.assert_array_equal((paddle.signbit(x).astype("float32") + x).numpy(), [[0.0, 2.0, -2.0]])


# ----- (b) every fixed function: eager = Paddle, traced = eager ---------------------------------

PRED = _f([-1.0, -0.0, 0.0, 2.5, -INF, INF], [NAN, -3.0, 4.0, -0.5, 1.0, -2.0])
VALS = _f([3.0, -1.0, 2.0, 2.0, 0.5], [-4.0, 1.5, 1.5, 0.0, 7.0])
NANS = _f([3.0, NAN, 2.0, 1.0, 0.5], [NAN, NAN, 1.5, 0.0, 7.0])

# name: (fn(P, *tensors), inputs, shapes of the InputSpecs (None: a symbolic dim), compare with Paddle)
CASES = {
    "signbit": (lambda P, x: P.signbit(x), [PRED], [[None, 6]], True),
    "isneginf": (lambda P, x: P.isneginf(x), [PRED], [[None, 6]], True),
    "isposinf": (lambda P, x: P.isposinf(x), [PRED], [[None, 6]], True),
    "isreal": (lambda P, x: P.isreal(x), [PRED], [[None, 6]], True),
    "isin": (lambda P, x, t: P.isin(x, t), [_i([1, 2, 3], [4, 5, 2]), _i(2, 5)], [[None, 3], [2]], True),
    "isin_invert": (lambda P, x, t: P.isin(x, t, invert=True), [_i([1, 2, 3]), _i(3, 1)], [[None, 3], [2]], True),
    "copysign": (lambda P, x, y: P.copysign(x, y), [VALS, -VALS[::-1].copy()], [[2, 5], [2, 5]], True),
    "div_trunc": (lambda P, x, y: P.div(x, y, rounding_mode="trunc"), [_i([-7, 7, 9]), _i([2, -2, 4])], [[1, 3]] * 2, True),
    "div_floor": (lambda P, x, y: P.div(x, y, rounding_mode="floor"), [_i([-7, 7, 9]), _i([2, -2, 4])], [[1, 3]] * 2, True),
    "isclose": (lambda P, x, y: P.isclose(x, y, atol=0.6), [VALS, VALS[::-1].copy()], [[None, 5]] * 2, True),
    "allclose": (lambda P, x, y: P.allclose(x, y, atol=0.6), [VALS, VALS + 0.5], [[2, 5]] * 2, True),
    "equal_all": (lambda P, x, y: P.equal_all(x, y), [VALS, VALS.copy()], [[2, 5]] * 2, True),
    "take_raise": (lambda P, x, i: P.take(x, i), [VALS, _i([0, -1], [9, 3])], [[2, 5], [2, 2]], True),
    "take_wrap": (lambda P, x, i: P.take(x, i, mode="wrap"), [VALS, _i(11, -13)], [[2, 5], [2]], True),
    "take_clip": (lambda P, x, i: P.take(x, i, mode="clip"), [VALS, _i(11, -13)], [[2, 5], [2]], True),
    "logcumsumexp": (lambda P, x: P.logcumsumexp(x, axis=1), [VALS], [[None, 5]], True),
    "quantile": (lambda P, x: P.quantile(x, [0.3, 0.5], axis=1), [VALS], [[None, 5]], True),
    "quantile_nan": (lambda P, x: P.quantile(x, 0.5, axis=1), [NANS], [[None, 5]], True),
    "quantile_nearest": (lambda P, x: P.quantile(x, 0.4, axis=1, interpolation="nearest"), [VALS], [[None, 5]], True),
    "nanquantile": (lambda P, x: P.nanquantile(x, 0.5, axis=1), [NANS], [[None, 5]], True),
    "nanmedian_min": (lambda P, x: P.nanmedian(x, axis=1, mode="min"), [NANS], [[None, 5]], True),
    "median_min": (lambda P, x: P.median(x, axis=1, mode="min"), [VALS], [[None, 5]], True),
    "kthvalue": (lambda P, x: P.kthvalue(x, 2, axis=1), [VALS], [[None, 5]], True),
    "mode": (lambda P, x: P.mode(x, axis=1), [_f([1.0, 2.0, 2.0, 1.0, 3.0], [4.0, 4.0, 0.0, 0.0, 0.0])], [[None, 5]], True),
    "cummax": (lambda P, x: P.cummax(x, axis=1), [VALS], [[None, 5]], True),
    "cummin": (lambda P, x: P.cummin(x, axis=1), [VALS], [[None, 5]], True),
    "searchsorted": (lambda P, s, v: P.searchsorted(s, v), [_f(-1.0, 0.0, 2.0, 5.0), _f([0.0, 3.0], [6.0, -2.0])], [[4], [None, 2]], True),
    "bucketize": (lambda P, x, s: P.bucketize(x, s, right=True), [_f([0.0, 3.0], [6.0, -2.0]), _f(-1.0, 0.0, 2.0, 5.0)], [[None, 2], [4]], True),
    "gather_n1_index": (lambda P, x, i: P.gather(x, i), [VALS, _i([1], [0], [1])], [[2, 5], [3, 1]], True),
    "masked_fill_int_mask": (lambda P, x, m: P.masked_fill(x, m, 9.0), [VALS, _i([1, 0, 0, 1, 0], [0, 0, 1, 1, 1])], [[None, 5]] * 2, True),
    "int_plus_float": (lambda P, x: x + 0.5, [_i([1, 2, 3])], [[None, 3]], True),
    "clone_int": (lambda P, x: x.clone() * 2, [_i([1, 2, 3])], [[None, 3]], True),
    "detach": (lambda P, x: x.detach() * 3, [VALS], [[None, 5]], True),
    "to_tensor_of_tensor": (lambda P, x: P.to_tensor(x, dtype="float64") + 1, [VALS], [[None, 5]], True),
    "view_dtype": (lambda P, x: x.view("int32"), [VALS], [[None, 5]], True),
    "softmax_with_ce_softmax": (
        lambda P, x, y: P.nn.functional.softmax_with_cross_entropy(x, y, return_softmax=True)[1],
        [VALS, _i([2], [4])], [[None, 5], [None, 1]], True,
    ),
    "nll_loss_3d": (
        lambda P, x, y: P.nn.functional.nll_loss(x, y),
        [np.log(np.full((2, 3, 2), 1 / 3, np.float32)) + VALS[:, :3, None] * 0.1, _i([0, 2], [1, 1])], [[None, 3, 2], [None, 2]], True,
    ),
    "ctc_zero_infinity_mean": (
        lambda P, x, lab, il, ll: P.nn.functional.ctc_loss(x, lab, il, ll, blank=2, reduction="mean"),
        [np.linspace(-1, 1, 24).reshape(4, 2, 3).astype(np.float32), _i([1, 0], [0, 1]).astype(np.int32), _i(4, 3), _i(2, 1)],
        [[4, 2, 3], [2, 2], [2], [2]], True,
    ),
    "attention_bool_mask": (
        lambda P, q, m: P.nn.functional.scaled_dot_product_attention(q, q, q, attn_mask=m.astype("bool")),
        [np.linspace(-1, 1, 2 * 3 * 1 * 4).reshape(2, 3, 1, 4).astype(np.float32), np.array([[[1, 0, 1], [1, 1, 0], [0, 1, 1]]])],
        [[2, 3, 1, 4], [1, 3, 3]], False,  # Paddle's CPU kernel takes no bool mask here
    ),
}  # fmt: skip


def _specs(case):
    _, inputs, shapes, _ = case
    return [InputSpec(s, a.dtype.name, f"x{k}") for k, (a, s) in enumerate(zip(inputs, shapes, strict=True))]


def _numpy(out):
    return [o.numpy() for o in out] if isinstance(out, list | tuple) else [out.numpy()]


@pytest.mark.parametrize("name", sorted(CASES))
def test_traced_program_computes_what_eager_computes(name, real_paddle):
    fn, inputs, _, against_paddle = CASES[name]
    eager = _numpy(fn(paddle, *[paddle.to_tensor(a) for a in inputs]))
    if against_paddle:
        theirs = _numpy(fn(real_paddle, *[real_paddle.to_tensor(a) for a in inputs]))
        for ours, ref in zip(eager, theirs, strict=True):
            np.testing.assert_allclose(ours, ref, rtol=1e-5, atol=1e-6)
            assert ours.dtype == ref.dtype, (ours.dtype, ref.dtype)
    traced = paddle.jit.to_static(lambda *xs: fn(paddle, *xs), input_spec=_specs(CASES[name]))
    # the trace ran on random examples: a value frozen from them differs from these inputs' result
    for ours, program in zip(eager, _numpy(traced(*[paddle.to_tensor(a) for a in inputs])), strict=True):
        np.testing.assert_array_equal(program, ours)


class _Fn(nn.Layer):
    def __init__(self, fn):
        super().__init__()
        self.fn = fn

    def forward(self, *xs):
        return self.fn(paddle, *xs)


@pytest.mark.parametrize("name", ["signbit", "isin", "quantile_nan", "take_raise"])
def test_saved_model_run_by_a_predictor_computes_what_eager_computes(name, tmp_path):
    fn, inputs, _, _ = CASES[name]
    jit.save(_Fn(fn), tmp_path / name, input_spec=_specs(CASES[name]))
    predictor = inference.create_predictor(inference.Config(str(tmp_path / name)))
    for k, a in enumerate(inputs):
        predictor.get_input_handle(f"x{k}").copy_from_cpu(a)
    predictor.run()
    got = [predictor.get_output_handle(n).copy_to_cpu() for n in predictor.get_output_names()]
    for ours, program in zip(_numpy(fn(paddle, *[paddle.to_tensor(a) for a in inputs])), got, strict=True):
        np.testing.assert_array_equal(program, ours)


def test_data_checks_run_inside_the_traced_program():
    """Bounds and value checks moved into the forwards: the program checks each input, not the example."""
    gather = paddle.jit.to_static(
        lambda x, i: paddle.gather(x, i), input_spec=[InputSpec([2, 5]), InputSpec([2], "int64")]
    )
    with pytest.raises(IndexError, match="out of range"):
        gather(paddle.to_tensor(VALS), paddle.to_tensor(_i(0, 2)))
    nll = paddle.jit.to_static(
        lambda x, y: paddle.nn.functional.nll_loss(x, y), input_spec=[InputSpec([2, 5]), InputSpec([2], "int64")]
    )
    with pytest.raises(IndexError, match="label value 7"):
        nll(paddle.to_tensor(VALS), paddle.to_tensor(_i(1, 7)))
    gnll = paddle.jit.to_static(
        lambda x, v: paddle.nn.functional.gaussian_nll_loss(x, x * 0.5, v), input_spec=[InputSpec([2, 5])] * 2
    )
    with pytest.raises(ValueError, match="variance has negative entries"):
        gnll(paddle.to_tensor(VALS), paddle.to_tensor(VALS))


REFUSED = {
    "unique": lambda x: paddle.unique(x),
    "unique_consecutive": lambda x: paddle.unique_consecutive(x),
    "bincount": lambda x: paddle.bincount(x),
    "one_hot_class_count_from_data": lambda x: paddle.nn.functional.one_hot(x, -1),
    "sequence_mask_width_from_data": lambda x: paddle.nn.functional.sequence_mask(x),
    "repeat_interleave_tensor_repeats": lambda x: paddle.repeat_interleave(x, x),
    "multinomial": lambda x: paddle.multinomial(x.astype("float32") + 1.0),
    "expand_to_a_computed_shape": lambda x: paddle.expand(x, x[:1] * 0 + 2),
}


@pytest.mark.parametrize("name", sorted(REFUSED))
def test_output_size_from_data_is_refused_while_tracing(name):
    """Their result's size comes from the values, so no program can hold it: tracing says so
    (before, the example's result was frozen into the program)."""
    with pytest.raises(ConversionError):
        paddle.jit.to_static(REFUSED[name], input_spec=[InputSpec([2], "int64")])(paddle.to_tensor(_i(1, 1)))


# ----- (c) the source scan ---------------------------------------------------------------------

KERNEL_HELPERS = {
    ("_util.py", "constant"): "wraps Python values and shapes, never a tensor's data",
    ("inplace.py", "rebind"): "the in-place mechanism: an alias of x keeps its graph node; the tracer is told",
    ("inplace.py", "overwrite"): "the in-place mechanism: x's data becomes an op's result; the tracer is told",
}
"""The only functions in ops/ outside an op's forward/vjp/infer that may touch ``._data`` or call ``_wrap``."""


def _registered_lines() -> set[tuple[str, int]]:
    """(file name, first line) of every forward, vjp and shape rule declared in ops/."""
    lines = set()
    for op in REGISTRY.values():
        for fn in (op.forward, op.vjp, op.infer):
            code = getattr(fn, "__code__", None)
            if code is not None and Path(code.co_filename).parent == OPS_DIR:
                lines.add((Path(code.co_filename).name, code.co_firstlineno))
    return lines


def _first_lines(node) -> set[int]:
    return {node.lineno, *(d.lineno for d in getattr(node, "decorator_list", ()))}


def bypasses(file_name: str, source: str, registered: set[tuple[str, int]]) -> list[str]:
    """``file:line`` of each ``._data`` use or ``_wrap(`` call outside a registered function or a
    KERNEL_HELPERS entry."""
    found = []

    def visit(node, allowed: bool):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda):
            name = getattr(node, "name", "<lambda>")
            allowed = (
                allowed
                or (file_name, name) in KERNEL_HELPERS
                or any((file_name, line) in registered for line in _first_lines(node))
            )
        is_data = isinstance(node, ast.Attribute) and node.attr == "_data"
        func = node.func if isinstance(node, ast.Call) else None
        is_wrap = func is not None and getattr(func, "attr", getattr(func, "id", None)) == "_wrap"
        if (is_data or is_wrap) and not allowed:
            found.append(f"{file_name}:{node.lineno}")
        for child in ast.iter_child_nodes(node):
            visit(child, allowed)

    visit(ast.parse(source), False)
    return sorted(set(found), key=lambda s: int(s.split(":")[1]))


def test_no_op_computes_on_data_outside_dispatch():
    registered = _registered_lines()
    files = sorted(OPS_DIR.glob("*.py"))
    assert len(files) > 25 and len(registered) > 100  # the scan sees the whole package and its ops
    found = [site for path in files for site in bypasses(path.name, path.read_text(), registered)]
    assert not found, (
        f"ops compute on a tensor's data outside dispatch at {found}: a traced program would freeze the "
        "example's result there. Declare an OpDef (core/op.py) whose forward does it, or compose existing ops"
    )


def test_the_scan_finds_a_bypass_and_allows_a_forward():
    source = (
        "def signbit(x):\n    return Tensor._wrap(np.signbit(x._data))\ndef _forward(ctx, x):\n    return x._data\n"
    )
    assert bypasses("demo.py", source, set()) == ["demo.py:2", "demo.py:4"]
    assert bypasses("demo.py", source, {("demo.py", 3)}) == ["demo.py:2"]
    assert bypasses("demo.py", source, {("demo.py", 1), ("demo.py", 3)}) == []
