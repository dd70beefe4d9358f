"""Export to ONNX: every vision model and the TransformerEncoder pass onnx.checker and run in
onnxruntime with our outputs (symbolic dims kept as dim_params); ops without an ONNX form are named."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")
ort = pytest.importorskip("onnxruntime")

import paddlectl.framework as paddle  # noqa: E402
from paddlectl.framework import jit, nn  # noqa: E402
from paddlectl.framework.core.op import REGISTRY  # noqa: E402
from paddlectl.framework.errors import ConversionError  # noqa: E402
from paddlectl.framework.hapi.export import export_model_dir  # noqa: E402
from paddlectl.framework.jit import InputSpec, to_static  # noqa: E402
from paddlectl.framework.onnx.emitters import emits  # noqa: E402
from paddlectl.framework.onnx.export import export_onnx  # noqa: E402
from paddlectl.framework.vision.models import LeNet, mobilenet_v3_small, resnet18, resnet34  # noqa: E402

RNG = np.random.default_rng(0)


class Encoder(nn.Layer):
    def __init__(self):
        super().__init__()
        self.embed = nn.Linear(8, 16)
        self.encoder = nn.TransformerEncoder(nn.TransformerEncoderLayer(16, 2, 32, dropout=0.0), 2)
        self.head = nn.Linear(16, 3)

    def forward(self, x):
        return self.head(self.encoder(self.embed(x)))


MODELS = {
    "lenet": (LeNet, [None, 1, 28, 28], [(2, 1, 28, 28), (5, 1, 28, 28)]),
    "resnet18": (lambda: resnet18(num_classes=10), [None, 3, None, None], [(2, 3, 32, 32), (1, 3, 40, 48)]),
    "resnet34": (lambda: resnet34(num_classes=7), [None, 3, 32, 32], [(1, 3, 32, 32)]),
    "mobilenet_v3_small": (
        lambda: mobilenet_v3_small(num_classes=10, scale=0.5),
        [None, 3, None, None],
        [(2, 3, 32, 32), (1, 3, 64, 48)],
    ),  # fmt: skip
    "transformer_encoder": (Encoder, [None, None, 8], [(2, 5, 8), (3, 9, 8)]),
}


def _ort(path, x):
    return ort.InferenceSession(path, providers=["CPUExecutionProvider"]).run(None, {"x": x})[0]


@pytest.mark.parametrize("name", sorted(MODELS))
def test_exported_model_runs_in_onnxruntime(name, tmp_path):
    paddle.seed(3)
    make, spec, shapes = MODELS[name]
    layer = make()
    layer.eval()
    state = layer.state_dict()
    stats = {k: v for k, v in state.items() if k.endswith(("_mean", "_variance"))}
    assert stats or name in ("lenet", "transformer_encoder")
    for key, value in stats.items():  # non-trivial BatchNorm statistics
        low, high = (-0.1, 0.1) if key.endswith("_mean") else (1.0, 2.0)
        value.set_value(RNG.uniform(low, high, value.shape).astype("float32"))
    x0 = RNG.standard_normal(shapes[0]).astype("float32")
    jit.save(layer, tmp_path / name, input_spec=[InputSpec(spec, "float32", "x")], verify_inputs=[x0], format="onnx")
    path = str(tmp_path / f"{name}.onnx")
    model = onnx.load(path)
    onnx.checker.check_model(model, full_check=True)
    dims = [d.dim_param or d.dim_value for d in model.graph.input[0].type.tensor_type.shape.dim]
    assert dims == [d if d is not None else dims[i] for i, d in enumerate(spec)] and isinstance(dims[0], str)
    for shape in shapes:
        x = RNG.standard_normal(shape).astype("float32")
        with paddle.no_grad():
            ours = layer(paddle.to_tensor(x)).numpy()
        np.testing.assert_allclose(_ort(path, x), ours, rtol=1e-5, atol=1e-5)


def test_imported_onnx_exports_back(tmp_path):
    """Import -> export round trip on a single-op graph the importer handles."""
    from onnx import TensorProto, helper

    from paddlectl.framework.onnx.importer import import_onnx

    nodes = [helper.make_node("Conv", ["x", "w"], ["c"], kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
             helper.make_node("Resize", ["c", "", "s"], ["y"], mode="nearest",
                              coordinate_transformation_mode="asymmetric", nearest_mode="floor")]  # fmt: skip
    w = onnx.numpy_helper.from_array(RNG.standard_normal((4, 2, 3, 3)).astype("float32"), "w")
    s = onnx.numpy_helper.from_array(np.float32([1, 1, 2, 2]), "s")
    graph = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 2, "H", "W"])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["N", 4, None, None])], initializer=[w, s])  # fmt: skip
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 8
    onnx.save(model, str(tmp_path / "in.onnx"))
    import_onnx(str(tmp_path / "in.onnx"), output_dir=tmp_path / "ours")
    out = export_model_dir(tmp_path / "ours", tmp_path / "out")  # paddlectl export --format onnx
    x = RNG.standard_normal((1, 2, 5, 7)).astype("float32")
    np.testing.assert_allclose(_ort(out, x), _ort(str(tmp_path / "in.onnx"), x), rtol=1e-5, atol=1e-5)
    assert [i.name for i in onnx.load(out).graph.output] == ["y"]


def test_like_tensors_export_as_constant_of_shape(tmp_path):
    def f(x):
        return paddle.maximum(x, paddle.full_like(x, -0.5)) + paddle.ones_like(x) * 2.0

    program = to_static(f, input_spec=[InputSpec([None, 4], "float32", "x")]).concrete_program()
    program = getattr(program, "program", program)
    out = export_onnx(program, tmp_path / "like")
    for n in (1, 3):
        x = RNG.standard_normal((n, 4)).astype("float32")
        np.testing.assert_allclose(_ort(out, x), np.maximum(x, -0.5) + 2.0, rtol=1e-6)


def test_detach_exports_as_identity(tmp_path):
    def f(x):
        return x.detach() * 2.0 + x

    program = to_static(f, input_spec=[InputSpec([None, 4], "float32", "x")]).concrete_program()
    program = getattr(program, "program", program)
    assert "detach" in {op.name for op in program.walk()}
    out = export_onnx(program, tmp_path / "detach")
    x = RNG.standard_normal((3, 4)).astype("float32")
    np.testing.assert_allclose(_ort(out, x), 3.0 * x, rtol=1e-6)


def test_ops_without_onnx_form_are_named(tmp_path):
    def f(x):
        return paddle.trunc(x) + paddle.roll(x, 1, axis=1)

    program = to_static(f, input_spec=[InputSpec([None, 4], "float32", "x")]).concrete_program()
    program = getattr(program, "program", program)
    with pytest.raises(ConversionError, match=r"\['roll', 'trunc'\] have no ONNX form"):
        export_onnx(program, tmp_path / "bad")
    assert not (tmp_path / "bad.onnx").exists()


@pytest.mark.parametrize("descending", [False, True])
@pytest.mark.parametrize("axis", [0, 1, -1])
def test_sort_and_argsort_export_as_topk_with_ties_in_index_order(tmp_path, descending, axis):
    def f(x):
        values = paddle.sort(x, axis=axis, descending=descending)
        order = paddle.argsort(x, axis=axis, descending=descending)
        return values + order.astype("float32") * 100.0

    program = to_static(f, input_spec=[InputSpec([None, 6], "float32", "x")]).concrete_program()
    program = getattr(program, "program", program)
    out = export_onnx(program, tmp_path / "sort")
    for n in (1, 4):
        x = RNG.integers(-2, 3, (n, 6)).astype("float32")  # many ties: their order must match too
        np.testing.assert_array_equal(_ort(out, x), f(paddle.to_tensor(x)).numpy())


def test_the_exporter_reads_each_ops_emitter_from_its_record(tmp_path, monkeypatch):
    """An op gains an ONNX form by one emitter stored in its record (there was a table, EMITTERS, keyed
    by op name in the exporter); the records are filled when the framework loads, without onnx."""
    monkeypatch.setattr(REGISTRY["sin"], "onnx_export", None)  # restored after the test

    def f(x):
        return paddle.sin(x) * 2.0

    program = to_static(f, input_spec=[InputSpec([None, 4], "float32", "x")]).concrete_program()
    program = getattr(program, "program", program)
    with pytest.raises(ConversionError, match=r"\['sin'\] have no ONNX form"):
        export_onnx(program, tmp_path / "sin")

    @emits("sin")
    def _sin(e, op, ins, out):
        e.node("Sin", ins, out)

    assert REGISTRY["sin"].onnx_export is _sin
    out = export_onnx(program, tmp_path / "sin")
    x = RNG.standard_normal((3, 4)).astype("float32")
    np.testing.assert_allclose(_ort(out, x), 2.0 * np.sin(x), rtol=1e-6)


def test_the_framework_fills_the_export_rules_without_importing_onnx():
    code = (
        "import sys; import paddlectl.framework; from paddlectl.framework.core.op import REGISTRY; "
        "print(sorted(n for n in ('conv2d', 'matmul', 'relu', 'mean') if REGISTRY[n].onnx_export), 'onnx' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.split() == ["['conv2d',", "'matmul',", "'mean',", "'relu']", "False"]


@pytest.mark.parametrize("bias", [True, False])
def test_conv_transpose_output_padding_past_the_stride_exports(tmp_path, bias):
    """Paddle allows an output padding below the dilation even at stride 1; ONNX does not (onnxruntime
    refused the file): the padding now comes off the end pads, the rest padded on after."""
    layer = nn.Conv2DTranspose(2, 3, (2, 2), stride=(1, 2), padding=(0, 1), dilation=(3, 1), output_padding=(2, 1),
                               bias_attr=None if bias else False)  # fmt: skip
    layer.eval()
    jit.save(layer, tmp_path / "ct", input_spec=[InputSpec([None, 2, 4, 4], "float32", "x")], format="onnx")
    x = RNG.standard_normal((2, 2, 4, 4)).astype("float32")
    with paddle.no_grad():
        ours = layer(paddle.to_tensor(x)).numpy()
    np.testing.assert_allclose(_ort(str(tmp_path / "ct.onnx"), x), ours, rtol=1e-5, atol=1e-5)


def test_training_dropout_has_no_onnx_form(tmp_path):
    """The dropout op is recorded only in training, where it draws a mask; it was exported as Identity."""

    def f(x):
        return paddle.nn.functional.dropout(x, 0.5, training=True) + x

    program = to_static(f, input_spec=[InputSpec([None, 4], "float32", "x")]).concrete_program()
    program = getattr(program, "program", program)
    with pytest.raises(ConversionError, match=r"\['dropout'\] have no ONNX form"):
        export_onnx(program, tmp_path / "dropout")


def test_adaptive_pooling_that_tiles_a_fixed_input_exports(tmp_path):
    """PP-LiteSeg's pyramid pools 2x2 and 4x4 bins: plain windows when the input size is fixed."""

    def f(x):
        avg = paddle.nn.functional.adaptive_avg_pool2d(x, [2, 4])
        return avg + paddle.nn.functional.adaptive_max_pool2d(x, [2, 4])

    x = RNG.standard_normal((2, 3, 8, 12)).astype("float32")
    program = to_static(f, input_spec=[InputSpec([None, 3, 8, 12], "float32", "x")]).concrete_program()
    export_onnx(getattr(program, "program", program), tmp_path / "pool")
    np.testing.assert_allclose(_ort(str(tmp_path / "pool.onnx"), x), f(paddle.to_tensor(x)).numpy(), rtol=1e-6)
    uneven = to_static(f, input_spec=[InputSpec([None, 3, 7, 12], "float32", "x")]).concrete_program()
    with pytest.raises(ConversionError, match="a multiple of its output size"):
        export_onnx(getattr(uneven, "program", uneven), tmp_path / "uneven")
