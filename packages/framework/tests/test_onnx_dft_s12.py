"""ONNX DFT import (cosine/sine matmuls) against NumPy's FFTs: forward/inverse, real/complex,
one-sided both ways, ``dft_length`` padding and truncation, any signal axis, opsets 17 and 20."""

from __future__ import annotations

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")

from onnx import helper  # noqa: E402

from paddlectl.framework.errors import ConversionError  # noqa: E402
from paddlectl.framework.onnx.backend import PaddlectlBackend  # noqa: E402
from paddlectl.framework.onnx.importer import onnx_to_program  # noqa: E402
from paddlectl.framework.testing.onnx_models import node_model  # noqa: E402

RNG = np.random.default_rng(9)


def _model(x: np.ndarray, opset: int, axis: int, length: int | None = None, **attrs):
    inits, names = {}, ["x", ""]
    if length is not None:
        inits["n"], names[1] = np.array(length, np.int64), "n"
    if opset >= 20:
        inits["axis"] = np.array(axis, np.int64)
        names.append("axis")
    else:
        attrs["axis"] = axis
    while not names[-1]:
        names.pop()
    node = helper.make_node("DFT", names, ["y"], **attrs)
    return node_model(node, {"x": (x.dtype, x.shape)}, inits, opset=opset, ir_version=9)


def _as_pairs(z: np.ndarray) -> np.ndarray:
    return np.stack([z.real, z.imag], axis=-1)


@pytest.mark.parametrize("opset", [17, 20])
@pytest.mark.parametrize(
    ("kind", "axis", "length"),
    [("fft", 1, None), ("fft", 2, 12), ("fft", 1, 5), ("ifft", 2, None), ("ifft", 1, 9), ("rfft", 1, None),
     ("rfft", 2, 7), ("irfft", 1, None), ("irfft", 2, 9), ("cfft", 2, None)],
)  # fmt: skip
def test_dft_equals_numpy(opset, kind, axis, length):
    real = RNG.standard_normal((2, 6, 8))
    z = real + 1j * RNG.standard_normal(real.shape)
    np_axis = axis
    if kind == "fft":
        x, want, attrs = real[..., None], _as_pairs(np.fft.fft(real, n=length, axis=np_axis)), {}
    elif kind == "cfft":
        x, want, attrs = _as_pairs(z), _as_pairs(np.fft.fft(z, n=length, axis=np_axis)), {}
    elif kind == "ifft":
        x, want, attrs = _as_pairs(z), _as_pairs(np.fft.ifft(z, n=length, axis=np_axis)), {"inverse": 1}
    elif kind == "rfft":
        x, want, attrs = real[..., None], _as_pairs(np.fft.rfft(real, n=length, axis=np_axis)), {"onesided": 1}
    else:
        half = np.fft.rfft(real, axis=np_axis)
        x, attrs = _as_pairs(half), {"onesided": 1, "inverse": 1}
        want = np.fft.irfft(half, n=length, axis=np_axis)[..., None]
    model = _model(x, opset, axis - 4 if opset >= 20 else axis, length, **attrs)  # opset 20: a negative axis
    (got,) = PaddlectlBackend.prepare(model).run([x])
    assert got.shape == want.shape
    np.testing.assert_allclose(got, want, rtol=1e-9, atol=1e-9)


def test_symbolic_signal_length_is_refused_by_name():
    model = _model(np.zeros((1, 4, 1)), 17, 1)
    model.graph.input[0].type.tensor_type.shape.dim[1].dim_param = "L"
    with pytest.raises(ConversionError, match="DFT.*fixed signal length"):
        onnx_to_program(model)
