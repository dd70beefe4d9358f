"""ONNX import: the PP-OCR models and small single-op graphs against onnxruntime, symbols, metadata,
our own model directory, and the all-at-once report of unsupported nodes."""

from __future__ import annotations

import os

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")
ort = pytest.importorskip("onnxruntime")
rapidocr = pytest.importorskip("rapidocr_onnxruntime")

from onnx import TensorProto, helper  # noqa: E402
from PIL import Image, ImageDraw, ImageFont  # noqa: E402

from paddlectl.framework.errors import ConversionError, ShapeError  # noqa: E402
from paddlectl.framework.inference import Config, create_predictor  # noqa: E402
from paddlectl.framework.onnx.importer import import_onnx  # noqa: E402

MODELS = os.path.join(os.path.dirname(rapidocr.__file__), "models")
DET = os.path.join(MODELS, "ch_PP-OCRv4_det_infer.onnx")
REC = os.path.join(MODELS, "ch_PP-OCRv4_rec_infer.onnx")
CLS = os.path.join(MODELS, "ch_ppocr_mobile_v2.0_cls_infer.onnx")


def _font(name: str, size: int):
    import matplotlib

    return ImageFont.truetype(
        os.path.join(os.path.dirname(matplotlib.__file__), "mpl-data", "fonts", "ttf", name), size
    )


def _line(text: str, font: str, size: int) -> np.ndarray:
    f = _font(font, size)
    left, top, right, bottom = f.getbbox(text)
    img = Image.new("RGB", (right - left + 16, bottom - top + 12), "white")
    ImageDraw.Draw(img).text((8 - left, 6 - top), text, font=f, fill="black")
    return np.asarray(img)


def _page(h: int, w: int) -> np.ndarray:
    img = Image.new("RGB", (w, h), (250, 248, 240))
    draw = ImageDraw.Draw(img)
    draw.text((12, 10), "Invoice 2026-12", font=_font("DejaVuSans-Bold.ttf", 26), fill="black")
    draw.text((12, 60), "Total: 1234.50 EUR", font=_font("DejaVuSerif.ttf", 20), fill=(20, 20, 90))
    draw.text((12, 100), "paid by card", font=_font("DejaVuSansMono.ttf", 18), fill="black")
    return np.asarray(img)


def _normalize(img: np.ndarray, h: int, w: int, mean=0.5, std=0.5) -> np.ndarray:
    """Resize to h x w and normalise to NCHW float32, as the OCR models expect."""
    resized = np.asarray(Image.fromarray(img).resize((w, h), Image.BILINEAR), dtype=np.float32) / 255.0
    return ((resized - mean) / std).transpose(2, 0, 1)[None].astype(np.float32)


def _lines() -> list[np.ndarray]:
    return [
        _line("Hello paddlectl 42", "DejaVuSans.ttf", 28),
        _line("The quick brown fox", "DejaVuSerif-Italic.ttf", 22),
        _line("ONNX -> IR", "DejaVuSansMono-Bold.ttf", 34),
    ]


def _onnxruntime(path: str, x: np.ndarray) -> np.ndarray:
    options = ort.SessionOptions()
    options.intra_op_num_threads = 2
    return ort.InferenceSession(path, options, providers=["CPUExecutionProvider"]).run(None, {"x": x})[0]


def _ours(path: str, x: np.ndarray, ir_optim: bool) -> np.ndarray:
    config = Config(path)
    config.switch_ir_optim(ir_optim)
    config.set_cpu_math_library_num_threads(2)
    return create_predictor(config).run([x])[0]


def _inputs(which: str) -> np.ndarray:
    if which == "det":
        return _normalize(
            _page(150, 300), 160, 320, mean=np.array([0.485, 0.456, 0.406]), std=np.array([0.229, 0.224, 0.225])
        )
    h, w = (48, 320) if which == "rec" else (48, 192)
    return np.concatenate([_normalize(line, h, w) for line in _lines()])


@pytest.mark.parametrize("ir_optim", [True, False], ids=["passes_on", "passes_off"])
@pytest.mark.parametrize("which,path", [("det", DET), ("rec", REC), ("cls", CLS)])
def test_ppocr_models_match_onnxruntime(which, path, ir_optim):
    x = _inputs(which)
    ours = _ours(path, x, ir_optim)
    ref = _onnxruntime(path, x)
    assert ours.shape == ref.shape and ours.dtype == ref.dtype
    np.testing.assert_allclose(ours, ref, rtol=0, atol=1e-4)


def test_import_keeps_symbols_weights_and_metadata(tmp_path):
    rec = import_onnx(REC)
    assert rec.meta["inputs"][0]["shape"] == ["N", 3, "H", "W"]
    assert rec.meta["outputs"][0]["shape"][0] == "N" and rec.meta["outputs"][0]["shape"][2] == 6625
    characters = rec.meta["metadata"]["character"].splitlines()
    assert len(characters) > 6000 and "a" in characters
    model = onnx.load(REC)
    constant_floats = sum(
        int(np.prod(n.attribute[0].t.dims))
        for n in model.graph.node
        if n.op_type == "Constant" and len(n.attribute[0].t.dims)
    )
    assert sum(w.size for w in rec.program.weights.values()) > 0.9 * constant_floats
    # the detector's skip connections line up only for multiples of 32, and says so
    det = import_onnx(DET, output_dir=tmp_path / "det")
    assert det.meta["inputs"][0]["shape"] == ["N", 3, "32*H", "32*W"]
    config = Config(str(tmp_path / "det"))
    config.set_cpu_math_library_num_threads(2)  # as _ours: BLAS sums in a thread-count-dependent order
    predictor = create_predictor(config)
    with pytest.raises(ShapeError, match="multiple of 32"):
        predictor.run([np.zeros((1, 3, 50, 64), np.float32)])
    x = _inputs("det")
    np.testing.assert_array_equal(predictor.run([x])[0], _ours(DET, x, True))


def _model(nodes, inputs, outputs, initializers=(), opset=13) -> bytes:
    graph = helper.make_graph(nodes, "g", inputs, outputs, initializer=list(initializers))
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = 8
    return onnx.shape_inference.infer_shapes(model)  # graph outputs get the shapes onnx.checker requires


def _float_input(name, shape):
    return helper.make_tensor_value_info(name, TensorProto.FLOAT, shape)


def _const(name, array):
    return onnx.numpy_helper.from_array(np.asarray(array), name)


SMALL = {
    "softmax_opset11_flattens": (
        11, [helper.make_node("Softmax", ["x"], ["y"], axis=1)], ["N", 3, 4], [], (2, 3, 4),
    ),
    "clip_attrs_opset6": (6, [helper.make_node("Clip", ["x"], ["y"], min=-0.5, max=0.3)], ["N", 5], [], (3, 5)),
    "clip_inputs_opset11": (
        11, [helper.make_node("Clip", ["x", "lo", "hi"], ["y"])], ["N", 5], [_const("lo", np.float32(-0.2)),
                                                                          _const("hi", np.float32(0.4))], (3, 5),
    ),
    "slice_attrs_opset9": (
        9, [helper.make_node("Slice", ["x"], ["y"], starts=[1, 0], ends=[3, 100], axes=[1, 2])], ["N", 4, 6], [],
        (2, 4, 6),
    ),
    "slice_inputs_steps": (
        13, [helper.make_node("Slice", ["x", "s", "e", "a", "st"], ["y"])], ["N", 4, 6],
        [_const("s", [0, 5]), _const("e", [2**31 - 1, 0]), _const("a", [1, 2]), _const("st", [2, -2])], (2, 4, 6),
    ),
    "squeeze_unsqueeze_opset13": (
        13, [helper.make_node("Squeeze", ["x", "ax"], ["t"]), helper.make_node("Unsqueeze", ["t", "ax2"], ["y"])],
        ["N", 1, 6], [_const("ax", [1]), _const("ax2", [0, 3])], (2, 1, 6),
    ),
    "reduce_mean_no_keepdims": (
        13, [helper.make_node("ReduceMean", ["x"], ["y"], axes=[1, 2], keepdims=0)], ["N", 3, 4], [], (2, 3, 4),
    ),
    "gemm_trans_b_alpha_beta": (
        13, [helper.make_node("Gemm", ["x", "w", "c"], ["y"], transB=1, alpha=0.5, beta=2.0)], ["N", 4],
        [_const("w", np.linspace(-1, 1, 12, dtype=np.float32).reshape(3, 4)), _const("c", np.float32([1, 2, 3]))],
        (5, 4),
    ),
    "resize_linear_half_pixel": (
        13, [helper.make_node("Resize", ["x", "", "sc"], ["y"], mode="linear")], ["N", 2, 5, 7],
        [_const("sc", np.float32([1, 1, 2, 2]))], (1, 2, 5, 7),
    ),
    "avgpool_count_include_pad": (
        13, [helper.make_node("AveragePool", ["x"], ["y"], kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1],
                              count_include_pad=1)], ["N", 2, 7, 9], [], (2, 2, 7, 9),
    ),
    "maxpool_pads_ceil": (
        13, [helper.make_node("MaxPool", ["x"], ["y"], kernel_shape=[2, 2], strides=[2, 2], pads=[0, 0, 1, 1],
                              ceil_mode=1)], ["N", 2, 7, 9], [], (2, 2, 7, 9),
    ),
    "conv_transpose_output_padding": (
        13, [helper.make_node("ConvTranspose", ["x", "w"], ["y"], strides=[2, 2], pads=[1, 1, 1, 1],
                              output_padding=[1, 1])], ["N", 2, 5, 6],
        [_const("w", np.linspace(-1, 1, 2 * 3 * 9, dtype=np.float32).reshape(2, 3, 3, 3))], (2, 2, 5, 6),
    ),
    "flatten_reshape_symbolic_batch": (
        13, [helper.make_node("Flatten", ["x"], ["f"]), helper.make_node("Reshape", ["f", "t"], ["y"])],
        ["N", 2, 3, 4], [_const("t", np.int64([0, 6, -1]))], (3, 2, 3, 4),
    ),
}  # fmt: skip


@pytest.mark.parametrize("case", sorted(SMALL))
def test_single_op_graphs_match_onnxruntime(case, tmp_path):
    opset, nodes, shape, inits, example = SMALL[case]
    model = _model(nodes, [_float_input("x", shape)], [_float_input("y", None)], inits, opset)
    path = str(tmp_path / f"{case}.onnx")
    onnx.save(model, path)
    x = np.random.default_rng(0).standard_normal(example).astype(np.float32)
    saved = import_onnx(path)
    assert saved.meta["inputs"][0]["shape"][0] == "N"
    np.testing.assert_allclose(_ours(path, x, True), _onnxruntime(path, x), rtol=0, atol=1e-5)


@pytest.mark.parametrize("producer", ["Conv", "ConvTranspose+Add"])
def test_batch_norm_with_small_constant_statistics_folds_into_the_conv(producer, tmp_path):
    """Small initializers import as constants, not weights, and exporters write a transposed conv's
    bias as a separate Add: the fold handles both."""
    rng = np.random.default_rng(1)
    stats = [rng.uniform(0.5, 1.5, 4), rng.normal(0, 0.1, 4), rng.normal(0, 0.1, 4), rng.uniform(0.5, 1.5, 4)]
    inits = [_const(name, a.astype(np.float32)) for name, a in zip(("g", "b", "m", "v"), stats, strict=True)]
    if producer == "Conv":
        inits.append(_const("w", rng.standard_normal((4, 2, 3, 3)).astype(np.float32)))
        nodes = [helper.make_node("Conv", ["x", "w"], ["c"], pads=[1, 1, 1, 1])]
    else:
        inits.append(_const("w", rng.standard_normal((2, 4, 2, 2)).astype(np.float32)))
        inits.append(_const("bias", rng.standard_normal((1, 4, 1, 1)).astype(np.float32)))
        nodes = [
            helper.make_node("ConvTranspose", ["x", "w"], ["t"], strides=[2, 2]),
            helper.make_node("Add", ["t", "bias"], ["c"]),
        ]
    nodes.append(helper.make_node("BatchNormalization", ["c", "g", "b", "m", "v"], ["y"]))
    path = str(tmp_path / "conv_bn.onnx")
    onnx.save(_model(nodes, [_float_input("x", ["N", 2, 6, 6])], [_float_input("y", None)], inits), path)
    predictor = create_predictor(Config(path))
    assert "batch_norm" not in [op.name for op in predictor.optimized_program.block.ops]
    x = rng.standard_normal((2, 2, 6, 6)).astype(np.float32)
    np.testing.assert_allclose(predictor.run([x])[0], _onnxruntime(path, x), rtol=0, atol=1e-5)


def test_unsupported_nodes_are_reported_together(tmp_path):
    nodes = [
        helper.make_node("Relu", ["x"], ["a"], name="fine"),
        helper.make_node("RandomNormalLike", ["a"], ["b"], name="my_random"),
        helper.make_node(
            "Resize", ["b", "", "sc"], ["c"], name="crop_resize", coordinate_transformation_mode="tf_crop_and_resize"
        ),
        helper.make_node("Conv", ["c", "w"], ["y"], name="conv", kernel_shape=[3, 3]),
        helper.make_node(
            "Constant",
            [],
            ["k"],
            name="odd_const",
            sparse_value=helper.make_sparse_tensor(
                helper.make_tensor("v", TensorProto.FLOAT, [1], [1.0]),
                helper.make_tensor("i", TensorProto.INT64, [1], [0]),
                [2],
            ),
        ),  # valid ONNX, not modelled
    ]
    model = _model(nodes, [_float_input("x", ["N", 1, 8, 8])], [_float_input("y", ["N", 1, 14, 14])],
                   [_const("sc", np.float32([1, 1, 2, 2])), _const("w", np.ones((1, 1, 3, 3), np.float32))], 13)  # fmt: skip
    path = str(tmp_path / "bad.onnx")
    onnx.save(model, path)
    with pytest.raises(ConversionError) as info:
        create_predictor(Config(path))
    text = str(info.value)
    assert "3 unsupported node(s)" in text
    assert "'my_random' (RandomNormalLike, opset 13): op type RandomNormalLike is not supported" in text
    assert "'crop_resize' (Resize, opset 13): coordinate_transformation_mode='tf_crop_and_resize'" in text
    assert "'odd_const' (Constant, opset 13): attribute(s) ['sparse_value'] not supported" in text
    assert "'fine'" not in text
