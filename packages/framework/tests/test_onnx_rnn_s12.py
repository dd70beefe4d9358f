"""Recurrent layers through ONNX: export of ``rnn_layer`` (a CRNN with a BiLSTM and GRU/SimpleRNN
stacks, run in onnxruntime) and import of ONNX LSTM/GRU/RNN nodes (against onnxruntime), with the
typed refusals of what the framework's recurrent op does not do."""

from __future__ import annotations

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")
ort = pytest.importorskip("onnxruntime")

import paddlectl.framework as paddle  # noqa: E402
from paddlectl.framework import jit, nn  # noqa: E402
from paddlectl.framework.jit import InputSpec  # noqa: E402

RNG = np.random.default_rng(7)


class TinyCRNN(nn.Layer):
    """Conv features -> a column sequence -> a recurrent neck -> per-column class scores."""

    def __init__(self, neck: nn.Layer, width: int, classes: int = 5) -> None:
        super().__init__()
        self.conv = nn.Conv2D(1, 4, 3, padding=1)
        self.pool = nn.MaxPool2D(2, 2)
        self.neck = neck
        self.head = nn.Linear(width, classes)

    def forward(self, x):
        f = self.pool(paddle.nn.functional.relu(self.conv(x)))  # [N, 4, 2, W/2]
        n, c, h, w = f.shape
        seq = paddle.transpose(paddle.reshape(f, [0, c * h, w]), [0, 2, 1])  # [N, W/2, 8]
        y, _ = self.neck(seq)
        return self.head(y)


NECKS = {
    "bilstm": (lambda: nn.LSTM(8, 6, direction="bidirect"), 12),
    "lstm_2_layers": (lambda: nn.LSTM(8, 6, num_layers=2), 6),
    "bigru": (lambda: nn.GRU(8, 6, direction="bidirect"), 12),
    "simple_rnn_relu": (lambda: nn.SimpleRNN(8, 6, activation="relu"), 6),
}


def _ort(path: str, x: np.ndarray) -> np.ndarray:
    session = ort.InferenceSession(path, providers=["CPUExecutionProvider"])
    return session.run(None, {session.get_inputs()[0].name: x})[0]


def _exported_crnn(neck: str, seed: int, folder) -> tuple:
    """(model in eval mode, path of its ONNX export with a symbolic batch)."""
    paddle.seed(seed)
    make, width = NECKS[neck]
    model = TinyCRNN(make(), width)
    model.eval()
    x0 = RNG.standard_normal((2, 1, 4, 16)).astype("float32")
    spec = [InputSpec([None, 1, 4, 16], "float32", "x")]
    jit.save(model, folder / neck, input_spec=spec, verify_inputs=[x0], format="onnx")
    return model, str(folder / f"{neck}.onnx")


@pytest.mark.parametrize("neck", sorted(NECKS))
def test_crnn_exports_and_runs_in_onnxruntime(neck, tmp_path):
    model, path = _exported_crnn(neck, 11, tmp_path)
    ops = {n.op_type for n in onnx.load(path).graph.node}
    assert {"LSTM", "GRU", "RNN"} & ops
    for batch in (1, 3):
        x = RNG.standard_normal((batch, 1, 4, 16)).astype("float32")
        with paddle.no_grad():
            ours = model(paddle.to_tensor(x)).numpy()
        np.testing.assert_allclose(_ort(path, x), ours, rtol=1e-5, atol=1e-5)


# ----- import -----------------------------------------------------------------------------------------

from onnx import helper  # noqa: E402

from paddlectl.framework.errors import OnnxImportError  # noqa: E402
from paddlectl.framework.onnx.backend import PaddlectlBackend  # noqa: E402
from paddlectl.framework.onnx.importer import onnx_to_program  # noqa: E402
from paddlectl.framework.testing.onnx_models import node_model  # noqa: E402

GATE_COUNT = {"LSTM": 4, "GRU": 3, "RNN": 1}


def _recurrent_model(op: str, B=3, T=5, I=4, H=3, lens=False, states=False, layout=0, **attrs):  # noqa: E741
    """An ONNX ``op`` node with random weights as initializers; returns (model, feeds)."""
    dirs = 2 if attrs.get("direction") == "bidirectional" else 1
    G = GATE_COUNT[op] * H
    inits = {
        "W": RNG.standard_normal((dirs, G, I)).astype(np.float32) * 0.5,
        "R": RNG.standard_normal((dirs, G, H)).astype(np.float32) * 0.5,
        "B": RNG.standard_normal((dirs, 2 * G)).astype(np.float32) * 0.5,
    }
    x_shape = (B, T, I) if layout else (T, B, I)
    feeds = {"X": RNG.standard_normal(x_shape).astype(np.float32)}
    names = ["X", "W", "R", "B", "", "", ""]
    if lens:
        feeds["L"] = np.array([T, 2, 1][:B], np.int32)
        names[4] = "L"
    if states:
        state_shape = (B, dirs, H) if layout else (dirs, B, H)
        for k, name in ((5, "H0"), (6, "C0")):
            if op == "LSTM" or name == "H0":
                feeds[name] = RNG.standard_normal(state_shape).astype(np.float32)
                names[k] = name
    while not names[-1]:
        names.pop()
    outs = ["Y", "Y_h"] + (["Y_c"] if op == "LSTM" else [])
    node = helper.make_node(op, names, outs, hidden_size=H, layout=layout, **attrs)
    model = node_model(node, {n: (a.dtype, a.shape) for n, a in feeds.items()}, inits, opset=14)
    return model, feeds


def _onnxruntime(model, feeds: dict) -> list:
    return ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"]).run(None, feeds)


def _time_major_onnxruntime(model, feeds: dict) -> list:
    """A batch-major (layout=1) node run by onnxruntime, which takes only time-major ones: the same
    node at layout=0 on transposed inputs, its outputs transposed back. (onnx's reference evaluator
    ignores sequence_lens, so it cannot be the oracle.)"""
    twin = onnx.ModelProto()
    twin.CopyFrom(model)
    for attr in twin.graph.node[0].attribute:
        if attr.name == "layout":
            attr.i = 0
    for value in list(twin.graph.input) + list(twin.graph.output):
        value.type.tensor_type.ClearField("shape")
    swapped = {n: a if a.ndim == 1 else a.transpose(1, 0, 2) for n, a in feeds.items()}
    y, *states = _onnxruntime(twin, swapped)
    return [y.transpose(2, 0, 1, 3)] + [s.transpose(1, 0, 2) for s in states]


IMPORT_CASES = [
    ("LSTM", {"lens": True, "states": True, "direction": "bidirectional"}),
    ("LSTM", {"lens": True, "direction": "reverse", "layout": 1}),
    ("LSTM", {"states": True, "layout": 1, "direction": "bidirectional"}),
    ("GRU", {"linear_before_reset": 1, "lens": True, "states": True, "direction": "bidirectional"}),
    ("GRU", {"linear_before_reset": 1, "layout": 1}),
    ("GRU", {"lens": True, "states": True, "direction": "bidirectional"}),  # linear_before_reset=0: unrolled
    ("GRU", {"direction": "reverse", "layout": 1}),
    ("RNN", {"lens": True, "direction": "reverse"}),
    ("RNN", {"activations": ["Relu", "Relu"], "direction": "bidirectional", "states": True}),
]


@pytest.mark.parametrize(("op", "options"), IMPORT_CASES, ids=[f"{o}-{i}" for i, (o, _) in enumerate(IMPORT_CASES)])
def test_recurrent_nodes_import_equal_onnxruntime(op, options):
    model, feeds = _recurrent_model(op, **options)
    ours = PaddlectlBackend.prepare(model).run(list(feeds.values()))
    ref = _time_major_onnxruntime(model, feeds) if options.get("layout") else _onnxruntime(model, feeds)
    assert len(ours) == len(ref)
    for o, r in zip(ours, ref, strict=True):
        assert o.shape == r.shape
        np.testing.assert_allclose(o, r, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize(
    ("op", "attrs", "message"),
    [
        ("LSTM", {"activations": ["Sigmoid", "Tanh", "Relu"]}, "activations="),
        ("LSTM", {"clip": 3.0}, "clip=3.0: cell clipping"),
        ("LSTM", {"input_forget": 1}, "input_forget=1"),
        ("RNN", {"activation_alpha": [0.5]}, "activation_alpha"),
    ],
)
def test_unsupported_recurrent_attributes_are_refused_by_name(op, attrs, message):
    model, _ = _recurrent_model(op, **attrs)
    with pytest.raises(OnnxImportError, match=message) as info:
        onnx_to_program(model)
    assert f"({op}" in str(info.value)


def test_reset_first_gru_needs_a_fixed_length():
    model, _ = _recurrent_model("GRU")
    model.graph.input[0].type.tensor_type.shape.dim[0].dim_param = "T"
    with pytest.raises(Exception, match="linear_before_reset=0 needs a fixed sequence length") as info:
        onnx_to_program(model)
    assert "(GRU)" in str(info.value)


def test_lstm_peepholes_are_refused_by_name():
    model, _ = _recurrent_model("LSTM")
    peep = onnx.numpy_helper.from_array(np.ones((1, 9), np.float32), "P")
    model.graph.initializer.append(peep)
    model.graph.node[0].input.extend(["", "", "", "P"])
    with pytest.raises(Exception, match="peepholes") as info:
        onnx_to_program(model)
    assert "(LSTM)" in str(info.value)


@pytest.mark.parametrize("neck", ["bilstm", "bigru"])
def test_crnn_round_trips_export_import_export(neck, tmp_path):
    """Export -> import (our ONNX LSTM/GRU rules) -> export again: both files equal the layer."""
    model, path = _exported_crnn(neck, 5, tmp_path)
    x = RNG.standard_normal((2, 1, 4, 16)).astype("float32")
    first = onnx.load(path)
    from paddlectl.framework.onnx.export import program_to_onnx

    second = program_to_onnx(onnx_to_program(first)[0])
    with paddle.no_grad():
        want = model(paddle.to_tensor(x)).numpy()
    (back,) = PaddlectlBackend.prepare(first).run([x])
    np.testing.assert_allclose(back, want, rtol=1e-5, atol=1e-5)
    session = ort.InferenceSession(second.SerializeToString(), providers=["CPUExecutionProvider"])
    np.testing.assert_allclose(session.run(None, {session.get_inputs()[0].name: x})[0], want, rtol=1e-5, atol=1e-5)
