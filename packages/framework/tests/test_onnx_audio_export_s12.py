"""The audio feature layers export to ONNX now that ``pad``, ``unsqueeze`` and ``log10`` have export
rules: the exported LogMelSpectrogram and MFCC run in onnxruntime equal to the layers."""

from __future__ import annotations

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")
ort = pytest.importorskip("onnxruntime")

import paddlectl.framework as paddle  # noqa: E402
from paddlectl.framework import jit  # noqa: E402
from paddlectl.framework.audio.features import MFCC, LogMelSpectrogram  # noqa: E402
from paddlectl.framework.jit import InputSpec  # noqa: E402


@pytest.mark.parametrize("layer", [LogMelSpectrogram, MFCC])
def test_audio_features_export_and_run_in_onnxruntime(layer, tmp_path):
    model = layer(sr=16000, n_fft=256, hop_length=128)
    model.eval()
    jit.save(model, tmp_path / "f", input_spec=[InputSpec([None, 4000], "float32", "x")], format="onnx")
    session = ort.InferenceSession(str(tmp_path / "f.onnx"), providers=["CPUExecutionProvider"])
    for batch in (1, 3):
        x = np.random.default_rng(batch).standard_normal((batch, 4000)).astype("float32")
        want = model(paddle.to_tensor(x)).numpy()
        got = session.run(None, {session.get_inputs()[0].name: x})[0]
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-4 * np.abs(want).max())
