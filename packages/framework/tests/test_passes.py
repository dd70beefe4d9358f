"""Program passes: each pass on its own, the pass manager, and every model with all passes on and
with each pass off, static against eager."""

from __future__ import annotations

import ast
from pathlib import Path

import numpy as np
import pytest

import paddlectl.framework as paddle
from paddlectl.framework import inference, jit, nn
from paddlectl.framework.core.op import REGISTRY
from paddlectl.framework.jit import InputSpec
from paddlectl.framework.static import parse_program, print_program
from paddlectl.framework.static import passes as passes_package
from paddlectl.framework.static.executor import Executor
from paddlectl.framework.static.input_spec import signatures
from paddlectl.framework.static.passes import PASSES, Pass, PassManager, manager, optimize, resolve
from paddlectl.framework.static.passes.memory_plan import MemoryPlanner
from paddlectl.framework.static.trace import trace
from paddlectl.framework.static.verifier import VerifyError
from paddlectl.framework.vision.models import LeNet, mobilenet_v3_small, resnet18

RNG = np.random.default_rng(0)


def _data(*shape):
    return RNG.standard_normal(shape).astype("float32")


def _trace(fn, spec, layer=None):
    program, _ = trace(fn, signatures([InputSpec(spec, "float32", "x")]), layer=layer)
    return program


def _eager(layer, x):
    with paddle.no_grad():
        return layer(paddle.to_tensor(x)).numpy()


def _op_names(program):
    return [op.name for op in program.walk()]


class Encoder(nn.Layer):
    def __init__(self):
        super().__init__()
        self.embed = nn.Linear(8, 16)
        self.encoder = nn.TransformerEncoder(nn.TransformerEncoderLayer(16, 2, 32, dropout=0.0), 2)
        self.head = nn.Linear(16, 3)

    def forward(self, x):
        return self.head(self.encoder(self.embed(x)))


def _randomise_batchnorm(layer):
    """Non-trivial running statistics and affine weights, so folding them is a real test."""
    rng = np.random.default_rng(1)
    state = layer.state_dict()
    changed = {}
    for key, value in state.items():
        prefix, leaf = key.rsplit(".", 1)
        if f"{prefix}._mean" not in state:
            continue  # not a batch norm
        center, spread = {"_mean": (0.0, 0.2), "_variance": (1.0, 0.3), "weight": (1.0, 0.2), "bias": (0.0, 0.2)}[leaf]
        changed[key] = np.abs(rng.normal(center, spread, value.shape)).astype("float32")
    missing, unexpected = layer.set_state_dict(changed)
    assert not unexpected
    return layer


MODELS = {
    "lenet": (LeNet, [None, 1, 28, 28], (2, 1, 28, 28)),
    "resnet18": (lambda: resnet18(num_classes=10), [None, 3, None, None], (2, 3, 32, 32)),
    "mobilenet_v3_small": (lambda: mobilenet_v3_small(num_classes=10, scale=0.5), [None, 3, 32, 32], (2, 3, 32, 32)),
    "transformer_encoder": (Encoder, [None, None, 8], (2, 5, 8)),
}


@pytest.fixture(scope="module")
def traced():
    """Each model traced once, with its eager output on one input."""
    cache = {}

    def get(name):
        if name not in cache:
            paddle.seed(3)
            make, spec, shape = MODELS[name]
            layer = _randomise_batchnorm(make())
            layer.eval()
            x = _data(*shape)
            cache[name] = (_trace(layer.forward, spec, layer), x, _eager(layer, x))
        return cache[name]

    return get


@pytest.mark.parametrize("off", [None, *PASSES])
@pytest.mark.parametrize("name", sorted(MODELS))
def test_model_static_matches_eager_with_each_pass_off(name, off, traced):
    program, x, expected = traced(name)
    result = optimize(program, disabled=[off] if off else [])
    assert [r.name for r in result.records if not r.ran] == ([off] if off else [])
    out = Executor(result.program).run([x])[0]
    # within 1e-5 of the output's scale: the winograd pass computes the same convolution in another
    # float32 order (error against float64 ~1.6x the GEMM's), which in a deep net moves outputs of
    # magnitude ~25 by ~2e-5 (see test_winograd_matches_a_float64_convolution)
    np.testing.assert_allclose(out, expected, rtol=1e-5, atol=1e-5 * max(1.0, float(np.abs(expected).max())))
    names = _op_names(result.program)
    if name != "lenet" and name != "transformer_encoder":  # the conv nets have batch_norm to fold
        assert ("batch_norm" in names) == (off == "fold_batchnorm")
    if name != "transformer_encoder" or off == "fuse_fc":  # its fc ops take every elementwise op but the residual adds
        assert ("fused_elementwise" in names) == (off != "fuse_elementwise")
    assert ("fc" in names) == (off != "fuse_fc")
    if name == "transformer_encoder":
        assert ("attention" in names) == (off != "fuse_attention")
    assert result.program.inputs[0].shape == program.inputs[0].shape  # still shape-generic
    assert _op_names(program).count("fused_elementwise") == 0  # the caller's program is untouched


def test_optimized_program_round_trips_through_text(traced):
    program, x, expected = traced("mobilenet_v3_small")
    optimized = optimize(program).program
    text = print_program(optimized)
    assert "fused_elementwise(" in text and 'body="' in text
    again = parse_program(text, optimized.weights)
    assert again == optimized and print_program(again) == text
    np.testing.assert_allclose(Executor(again).run([x])[0], expected, rtol=1e-5, atol=1e-5)


# ----- single passes -----------------------------------------------------------------------------


class Dead(nn.Layer):
    def __init__(self):
        super().__init__()
        self.used = nn.Linear(4, 4)
        self.unused = nn.Linear(4, 4)

    def forward(self, x):
        _ = paddle.nn.functional.relu(self.unused(x))  # computed and thrown away
        return self.used(x)


def test_dce_drops_dead_chains_and_their_weights():
    layer = Dead()
    layer.eval()
    program = _trace(layer.forward, [None, 4], layer)
    result = PassManager(pipeline=["dce"]).run(program)
    assert _op_names(result.program).count("matmul") == 1 and "relu" not in _op_names(result.program)
    assert sorted(result.program.weights) == ["used.bias", "used.weight"]
    assert result.records[0].changed == 5  # param w, param b, matmul, add, relu
    x = _data(3, 4)
    np.testing.assert_allclose(Executor(result.program).run([x])[0], _eager(layer, x), rtol=1e-6)


def test_cse_merges_equal_ops_but_not_different_attrs():
    def f(x):
        a = paddle.nn.functional.relu(x) * 2.0
        b = paddle.nn.functional.relu(x) * 2.0  # equal to a
        c = paddle.scale(x, 3.0)
        d = paddle.scale(x, 4.0)  # different attrs: not merged
        return a + b + c + d

    program = _trace(f, [None, 6])
    result = PassManager(pipeline=["cse", "dce"]).run(program)
    names = _op_names(result.program)
    assert names.count("relu") == 1 and names.count("scale") == 2
    x = _data(2, 6)
    np.testing.assert_allclose(Executor(result.program).run([x])[0], Executor(program).run([x])[0], rtol=1e-6)


class Folds(nn.Layer):
    def __init__(self):
        super().__init__()
        self.w = self.create_parameter([5, 3])
        self.log_scale = self.create_parameter([3])

    def forward(self, x):
        return paddle.matmul(x, paddle.transpose(self.w, [1, 0])) * paddle.exp(self.log_scale).sum()


def test_constant_fold_runs_weight_only_ops_once():
    layer = Folds()
    layer.eval()
    program = _trace(layer.forward, [None, 3], layer)
    result = PassManager(pipeline=["constant_fold", "dce"]).run(program)
    names = _op_names(result.program)
    assert "transpose" not in names and "exp" not in names and "sum" not in names
    assert names.count("matmul") == 1 and any(n.startswith("folded.") for n in result.program.weights)
    x = _data(4, 3)
    np.testing.assert_allclose(Executor(result.program).run([x])[0], _eager(layer, x), rtol=1e-5, atol=1e-6)
    kept = PassManager(pipeline=["constant_fold"], foldable=lambda name: name != "w").run(program)
    assert "transpose" in _op_names(kept.program) and "exp" not in _op_names(kept.program)


@pytest.mark.parametrize("bias", [True, False])
def test_fold_batchnorm_into_linear(bias):
    paddle.seed(0)
    layer = nn.Sequential(nn.Linear(6, 4, bias_attr=None if bias else False), nn.BatchNorm1D(4), nn.ReLU())
    layer.set_state_dict({"1._mean": _data(4) * 0.3, "1._variance": np.abs(_data(4)) + 0.5, "1.weight": _data(4)})
    layer.eval()
    program = _trace(layer.forward, [None, 6], layer)
    result = PassManager(pipeline=["fold_batchnorm", "dce"]).run(program)
    names = _op_names(result.program)
    assert "batch_norm" not in names and names.count("add") == 1
    x = _data(5, 6)
    np.testing.assert_allclose(Executor(result.program).run([x])[0], _eager(layer, x), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("groups", [1, 2])
def test_fold_batchnorm_into_conv_transpose(groups):
    paddle.seed(0)
    layer = nn.Sequential(nn.Conv2DTranspose(4, 6, 2, stride=2, groups=groups), nn.BatchNorm2D(6))
    stats = {"1._mean": _data(6) * 0.3, "1._variance": np.abs(_data(6)) + 0.5, "1.weight": _data(6), "1.bias": _data(6)}
    layer.set_state_dict(stats)
    layer.eval()
    program = _trace(layer.forward, [None, 4, 5, 5], layer)
    result = PassManager(pipeline=["fold_batchnorm", "dce"]).run(program)
    assert "batch_norm" not in _op_names(result.program)
    x = _data(2, 4, 5, 5)
    np.testing.assert_allclose(Executor(result.program).run([x])[0], _eager(layer, x), rtol=1e-5, atol=1e-5)


def test_fold_batchnorm_leaves_a_conv_whose_result_is_also_used_elsewhere_and_scales_after_it():
    """The conv's weights stay (its own result is read too); the batch_norm becomes a per-channel
    multiply and add, which fuse_elementwise then merges with the residual add into one group."""
    paddle.seed(4)
    conv = nn.Conv2D(2, 3, 3, padding=1)
    bn = nn.BatchNorm2D(3)
    bn.set_state_dict({"_mean": paddle.to_tensor([0.5, -1.0, 2.0]), "_variance": paddle.to_tensor([0.25, 4.0, 1.5])})
    conv.eval()
    bn.eval()

    def f(x):
        y = conv(x)
        return bn(y) + y

    program = _trace(f, [None, 2, 5, 5])
    result = PassManager(pipeline=["fold_batchnorm"]).run(program)
    names = _op_names(result.program)
    assert "batch_norm" not in names and result.records[0].changed == 1
    assert names.count("multiply") == 1 and names.count("add") == 2
    conv_op = next(op for op in result.program.walk() if op.name == "conv2d")
    assert conv_op.inputs[1].name == program.block.ops[1].outputs[0].name  # the conv's own weight
    x = RNG.standard_normal((2, 2, 5, 5)).astype(np.float32)
    with paddle.no_grad():
        want = f(paddle.to_tensor(x)).numpy()
    np.testing.assert_allclose(Executor(result.program).run([x])[0], want, rtol=1e-5, atol=1e-5)
    fused = PassManager(pipeline=["fold_batchnorm", "fuse_elementwise"]).run(program).program
    assert _op_names(fused).count("fused_elementwise") == 1


def test_fold_batchnorm_scales_a_channels_last_input_the_producer_cannot_take():
    bn = nn.BatchNorm2D(4, data_format="NHWC")
    bn.set_state_dict(
        {"_mean": paddle.to_tensor([0.5, -1.0, 2.0, 0.0]), "_variance": paddle.to_tensor([0.25, 4.0, 1.5, 1.0])}
    )
    bn.eval()

    def f(x):
        return bn(nn.functional.relu(x))

    program = _trace(f, [None, 3, 3, 4])
    result = PassManager(pipeline=["fold_batchnorm"]).run(program)
    assert "batch_norm" not in _op_names(result.program)
    x = RNG.standard_normal((2, 3, 3, 4)).astype(np.float32)
    with paddle.no_grad():
        want = f(paddle.to_tensor(x)).numpy()
    np.testing.assert_allclose(Executor(result.program).run([x])[0], want, rtol=1e-6, atol=1e-6)


def test_winograd_rewrites_eligible_convs_and_each_size_picks_its_path(monkeypatch):
    """3x3 stride-1 convs with >= 16 outputs get their transformed filters (the IR round-trips);
    strided, grouped and narrow ones stay conv2d. Per input size the op runs Winograd from 4x4
    outputs up and the plain convolution below, both equal to eager."""
    from paddlectl.framework.ops import conv_inference as conv_ops

    layers = [nn.Conv2D(8, 32, 3, padding=1), nn.Conv2D(32, 32, 3, stride=2, padding=1),
              nn.Conv2D(32, 32, 3, padding=1, groups=2), nn.Conv2D(32, 8, 3, padding=1),
              nn.Conv2D(8, 40, 3, padding=[1, 0])]  # fmt: skip
    for layer in layers:
        layer.eval()

    def f(x):
        for layer in layers:
            x = layer(x)
        return x

    program = _trace(f, [None, 8, None, None])
    result = PassManager(pipeline=["winograd"]).run(program)
    assert [n for n in _op_names(result.program) if n.startswith("conv")] == [
        "conv2d_winograd", "conv2d", "conv2d", "conv2d", "conv2d_winograd"
    ]  # fmt: skip
    text = print_program(result.program)
    again = parse_program(text, result.program.weights)
    assert again == result.program and print_program(again) == text
    paths = []
    winograd = conv_ops._winograd_pays
    monkeypatch.setattr(conv_ops, "_winograd_pays", lambda *a: paths.append(winograd(*a)) or winograd(*a))
    monkeypatch.setattr(conv_ops, "threaded", lambda: False)  # more threads run narrow rows as pixel tiles
    for size in (12, 2):  # 4x4 or more outputs (rows too narrow for pixel tiles) for both rewritten convs / fewer
        x = _data(2, 8, size, size + 3)
        out = Executor(result.program).run([x])[0]
        np.testing.assert_allclose(out, _eager(f, x), rtol=1e-4, atol=1e-5)
    assert paths == [True, True, False, False]


def test_fold_channel_scale_moves_a_gate_into_the_next_1x1_conv():
    """``x * gate`` ([N or 1, C, 1, 1]) read only by a 1x1 conv becomes ``conv2d_scaled`` (the IR
    round-trips), equal to eager; a product read twice, a 3x3 conv and a product that is not a
    channel scale stay as they were."""
    pw, pw2, k3 = nn.Conv2D(8, 6, 1), nn.Conv2D(8, 5, 1), nn.Conv2D(8, 4, 3, padding=1)
    for layer in (pw, pw2, k3):
        layer.eval()

    def f(x):
        gate = nn.functional.hardsigmoid(paddle.mean(x, axis=[2, 3], keepdim=True))
        shared = x * gate
        halves = paddle.full([1, 8, 1, 1], 0.5) * x
        outs = [pw(x * gate), pw2(shared) + shared[:, :5], k3(x * gate), pw(x * x), pw(halves)]
        return paddle.concat(outs, axis=1)

    program = _trace(f, [None, 8, None, None])
    result = PassManager(pipeline=["fold_channel_scale"]).run(program)
    assert [n for n in _op_names(result.program) if n.startswith("conv")] == [
        "conv2d_scaled", "conv2d", "conv2d", "conv2d", "conv2d_scaled"
    ]  # fmt: skip
    assert result.records[0].changed == 2 and _op_names(result.program).count("multiply") == 3
    text = print_program(result.program)
    again = parse_program(text, result.program.weights)
    assert again == result.program and print_program(again) == text
    for shape in [(2, 8, 5, 7), (1, 8, 3, 3)]:
        x = _data(*shape)
        np.testing.assert_allclose(Executor(result.program).run([x])[0], _eager(f, x), rtol=1e-5, atol=1e-5)


def test_fuse_attention_makes_one_op_per_attention_and_one_gemm_per_projected_input():
    """A self-attention with a float mask fed to the program and a cross-attention with a bool
    padding mask become ``attention`` ops, the self-attention's q, k and v projections one GEMM and
    the cross-attention's k and v another; an attention whose weights are returned stays as traced.
    Equal to eager at two batch sizes, and the IR round-trips."""
    paddle.seed(5)
    own, cross, seen = nn.MultiHeadAttention(16, 2), nn.MultiHeadAttention(16, 4), nn.MultiHeadAttention(16, 2)
    seen.need_weights = True
    for layer in (own, cross, seen):
        layer.eval()

    def f(x, memory, mask, keep):
        h = cross(own(x, attn_mask=mask), memory, memory, attn_mask=keep)
        out, weights = seen(h)
        return out, weights

    specs = [
        InputSpec([None, 6, 16], "float32", "x"), InputSpec([None, 7, 16], "float32", "memory"),
        InputSpec([None, 1, 6, 6], "float32", "mask"), InputSpec([None, 1, 1, 7], "bool", "keep"),
    ]  # fmt: skip
    program, _ = trace(f, signatures(specs))
    result = PassManager(pipeline=["fuse_attention"]).run(program)
    names = _op_names(result.program)
    assert result.records[0].changed == 4  # two attention ops, two merged projections
    assert names.count("attention") == 2 and names.count("softmax") == 1 and names.count("strided_slice") == 5
    assert names.count("matmul") == 2 + 3 + 6  # own: qkv, out; cross: q, kv, out; seen: 4 + 2
    text = print_program(result.program)
    again = parse_program(text, result.program.weights)
    assert again == result.program and print_program(again) == text
    for batch in (1, 3):
        feeds = [_data(batch, 6, 16), _data(batch, 7, 16), _data(batch, 1, 6, 6), RNG.random((batch, 1, 1, 7)) > 0.3]
        with paddle.no_grad():
            expected = [t.numpy() for t in f(*(paddle.to_tensor(a) for a in feeds))]
        for out, want in zip(Executor(result.program).run(feeds), expected, strict=True):
            np.testing.assert_allclose(out, want, rtol=1e-5, atol=1e-6)


def test_attention_op_names_the_shapes_it_cannot_take():
    from paddlectl.framework.core.op import Spec
    from paddlectl.framework.errors import ShapeError
    from paddlectl.framework.ops.attention import attention_op

    f32 = np.dtype("float32")
    q, k = Spec((2, 5, 8), f32), Spec((2, 7, 8), f32)
    assert attention_op.infer(q, k, k, Spec((2, 1, 1, 7), f32), heads=2, scale=0.5).shape == (2, 5, 8)
    with pytest.raises(ShapeError, match="expected q"):
        attention_op.infer(q, Spec((2, 7, 6), f32), k, None, heads=2, scale=0.5)
    with pytest.raises(ShapeError, match="3 heads do not split"):
        attention_op.infer(q, k, k, None, heads=3, scale=0.5)
    with pytest.raises(ShapeError, match="must broadcast to the scores"):
        attention_op.infer(q, k, k, Spec((2, 1, 5, 5), f32), heads=2, scale=0.5)


# ----- the manager -------------------------------------------------------------------------------


def test_pass_names_and_paddle_aliases():
    assert resolve("conv_bn_fuse_pass") == "fold_batchnorm"
    with pytest.raises(ValueError, match="unknown pass 'fuse_everything'.*fuse_elementwise"):
        PassManager(disabled=["fuse_everything"])


def test_verifier_runs_after_every_changing_pass_and_names_the_pass(monkeypatch):
    def break_types(program, ctx):
        op = next(op for op in program.block.ops if op.name == "relu")
        op.outputs[0].shape = (7,)
        return 1

    monkeypatch.setitem(PASSES, "break_types", Pass("break_types", break_types, "a broken pass"))
    program = _trace(lambda x: paddle.nn.functional.relu(x), [None, 4])
    with pytest.raises(VerifyError, match="after pass 'break_types'.*delete_pass"):
        PassManager(pipeline=["dce", "break_types"]).run(program)
    checked = []
    monkeypatch.setattr(manager, "verify", lambda work: checked.append(work))
    monkeypatch.setitem(PASSES, "touch", Pass("touch", lambda program, ctx: 1, "claims a change"))
    result = PassManager(pipeline=["dce", "fuse_attention", "touch"]).run(program)  # dce/fuse: nothing to do
    assert [r.changed for r in result.records] == [0, 0, 1] and len(checked) == 1


# ----- memory plan -------------------------------------------------------------------------------


def test_memory_plan_reuses_dead_buffers():
    def chain(x):
        a = paddle.exp(x)  # dies at b
        b = paddle.log(a)  # dies at c
        c = paddle.tanh(b)  # dies at d: takes a's buffer
        return paddle.sin(c)  # the output takes b's buffer and keeps it

    program = _trace(chain, [None, 8])
    planner = MemoryPlanner(PassManager(pipeline=["dce"]).run(program).program)
    assert planner.static is None and planner.symbols == ["N"]
    plan = planner.plan({"N": 4})
    assert plan.naive_bytes == 4 * 4 * 8 * 4
    assert len(plan.buffers) == 2 and plan.planned_bytes == plan.peak_live_bytes == 2 * 4 * 8 * 4
    assert plan.assignment["2"] == plan.assignment["0"] != plan.assignment["3"] == plan.assignment["1"]
    with pytest.raises(ValueError, match="sizes for the input dims"):
        planner.plan({})


def test_memory_plan_never_shares_a_buffer_between_live_values(traced):
    program, _, _ = traced("resnet18")
    result = optimize(program)
    planner = result.memory
    plan = planner.plan({"N": 2, "H": 32, "W": 32})
    owners = [iv for iv in planner.intervals if iv.alias_of is None]
    for i, a in enumerate(owners):
        assert plan.buffers[plan.assignment[a.name]] >= a.nbytes(plan.bindings)
        for b in owners[i + 1 :]:
            if plan.assignment[a.name] == plan.assignment[b.name]:
                assert a.end < b.start or b.end < a.start
    assert plan.peak_live_bytes <= plan.planned_bytes < plan.naive_bytes


# ----- through the predictor ---------------------------------------------------------------------


@pytest.fixture(scope="module")
def saved_lenet(tmp_path_factory):
    paddle.seed(2)
    layer = LeNet()
    layer.eval()
    path = tmp_path_factory.mktemp("lenet") / "m"
    jit.save(layer, path, input_spec=[InputSpec([None, 1, 28, 28], "float32", "x")])
    return layer, path


def test_predictor_delete_pass_switches_fusion_off(saved_lenet):
    layer, path = saved_lenet
    x = _data(3, 1, 28, 28)
    on = inference.create_predictor(inference.Config(path))
    config = inference.Config(path)
    config.delete_pass("fuse_elementwise")
    off = inference.create_predictor(config)
    assert "fused_elementwise" in _op_names(on.optimized_program)
    assert "fused_elementwise" not in _op_names(off.optimized_program)
    assert on.compile_report().groups_formed == 2 and off.compile_report().groups_formed == 0  # the fc ops
    # took the three matmuls' bias adds and relus
    assert "fuse_elementwise  off" in off.pass_report()
    for predictor in (on, off, on.clone()):
        np.testing.assert_allclose(predictor.run([x])[0], _eager(layer, x), rtol=1e-5, atol=1e-5)
    paddle_names = inference.Config(path)
    paddle_names.delete_pass("conv_bn_fuse_pass")  # Paddle's name for fold_batchnorm
    assert "fold_batchnorm    off" in inference.create_predictor(paddle_names).pass_report()
    typo = inference.Config(path)
    typo.delete_pass("fuse_elementwse")
    with pytest.raises(ValueError, match="unknown pass 'fuse_elementwse'"):
        inference.create_predictor(typo)
    raw = inference.Config(path)
    raw.switch_ir_optim(False)
    plain = inference.create_predictor(raw)
    assert plain.optimized_program is plain.program and plain.memory_plan([(1, 1, 28, 28)]) is None


def test_predictor_plans_memory_before_running_and_replans_a_specialised_model(saved_lenet):
    _, path = saved_lenet
    predictor = inference.create_predictor(inference.Config(path))
    with pytest.raises(ValueError, match="symbolic dims"):
        predictor.planned_bytes()
    one = predictor.planned_bytes([(1, 1, 28, 28)])
    eight = predictor.planned_bytes({"x": (8, 1, 28, 28)})
    assert one > 0 and eight == 8 * one
    fixed = jit.load(path).specialize((4, 1, 28, 28))
    specialised = inference.Predictor(inference.Config(path), fixed.saved)
    assert specialised.memory_plan() is not None and specialised.planned_bytes() == 4 * one
    assert str(specialised.memory_plan()).startswith("memory plan (fixed shapes)")


def _spelled_op_names(source: str) -> list[tuple[int, str]]:
    """(line, name) for each registered op name a pass spells as a string: compared with an op's
    ``name``, assigned to it, or given to ``Operation(...)``."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Compare):
            sides = [node.left, *node.comparators]
            parts = sides if any(isinstance(s, ast.Attribute) and s.attr == "name" for s in sides) else []
        elif isinstance(node, ast.Assign):
            targets = [t for target in node.targets for t in ast.walk(target)]
            parts = [node.value] if any(isinstance(t, ast.Attribute) and t.attr == "name" for t in targets) else []
        elif isinstance(node, ast.Call) and getattr(node.func, "id", None) == "Operation":
            parts = node.args[:1]
        else:
            continue
        for part in parts:
            found += [
                (node.lineno, c.value) for c in ast.walk(part) if isinstance(c, ast.Constant) and c.value in REGISTRY
            ]
    return found


def test_rewrite_passes_find_their_ops_through_the_records():
    """A pass names an op by its record (``conv2d_op.name``), so a renamed or removed op fails at
    import instead of the pass silently matching nothing; winograd, scale_fold and fold_batchnorm
    spelled ``"conv2d"`` and name tuples each."""
    spelled = {}
    for path in sorted(Path(passes_package.__file__).parent.glob("*.py")):
        spelled.update({f"{path.name}:{line}": name for line, name in _spelled_op_names(path.read_text())})
    assert spelled == {}
    assert _spelled_op_names('if op.name in ("conv2d", "matmul"): op.name, x = "fc", 1') == [
        (1, "conv2d"), (1, "matmul"), (1, "fc")
    ]  # fmt: skip
