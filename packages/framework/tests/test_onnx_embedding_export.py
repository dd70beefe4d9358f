"""An embedding table exports to ONNX as a Gather (the recommendation suite's CTR models need it)."""

from __future__ import annotations

import numpy as np
import pytest

import paddlectl.framework as paddle
from paddlectl.framework.errors import ConversionError
from paddlectl.framework.hapi.export import export_model_dir
from paddlectl.framework.static import InputSpec

ort = pytest.importorskip("onnxruntime", reason="onnxruntime runs the exported file")


class Lookup(paddle.nn.Layer):
    def __init__(self, **kwargs):
        super().__init__()
        self.table = paddle.nn.Embedding(10, 4, **kwargs)

    def forward(self, ids):
        return self.table(ids)


def _export(tmp_path, model):
    paddle.jit.save(model, str(tmp_path / "m"), input_spec=[InputSpec([None, 3], "int64", "ids")])
    export_model_dir(tmp_path / "m", tmp_path / "m.onnx")
    return tmp_path / "m.onnx"


@pytest.mark.parametrize("kwargs", [{}, {"padding_idx": 2}, {"sparse": True, "padding_idx": -1}])
def test_embedding_runs_in_onnxruntime_as_it_runs_here(tmp_path, kwargs):
    paddle.seed(0)
    model = Lookup(**kwargs)
    model.table.weight.set_value(np.arange(40, dtype=np.float32).reshape(10, 4) + 1)  # no zero row by chance
    ids = np.array([[1, 2, 9], [2, 0, 0]], np.int64)
    got = ort.InferenceSession(str(_export(tmp_path, model))).run(None, {"ids": ids})[0]
    np.testing.assert_array_equal(got, model(paddle.to_tensor(ids)).numpy())


def test_embedding_with_max_norm_is_refused_naming_the_op(tmp_path):
    with pytest.raises(ConversionError, match="embedding"):  # renorm writes the table: refused at tracing
        _export(tmp_path, Lookup(max_norm=1.0))
