"""Drive the harness's pipeline in-process with an eager model (the CLI's `run` uses the Predictor)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from paddlectl.eval_harness import pipeline
from paddlectl.eval_harness.evaluate import evaluate
from paddlectl.eval_harness.settings import load_settings
from paddlectl.eval_harness.store import LocalStore, RunDir


def evaluate_and_record(task, runner, config: dict, model_path: Path) -> RunDir:
    settings = load_settings(config)
    report, acc = evaluate(task, runner, settings, model_path=model_path, config=config)
    return pipeline.record(LocalStore(settings.output_dir), report, acc, task)


def evaluate_and_log(task, runner, config: dict, model_path: Path, tracking_uri: str | None = None) -> pipeline.Logged:
    run = evaluate_and_record(task, runner, config, model_path)
    settings = load_settings(config)
    return pipeline.log(run, settings.output_dir, tracking_uri)


def linear_onnx(path: Path, metadata: dict | None = None) -> tuple[np.ndarray, np.ndarray]:
    """A linear digit classifier written with onnx.helper (input x [N, 1, 28, 28], logits [N, 10]),
    with ``metadata`` as JSON ``metadata_props`` as ``paddlectl export --format onnx`` writes them."""
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    rng = np.random.default_rng(0)
    w, b = rng.normal(0, 0.05, (784, 10)).astype("float32"), rng.normal(0, 0.05, 10).astype("float32")
    graph = helper.make_graph(
        [helper.make_node("Flatten", ["x"], ["f"], axis=1), helper.make_node("MatMul", ["f", "w"], ["m"]),
         helper.make_node("Add", ["m", "b"], ["logits"])],
        "linear",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 1, 28, 28])],
        [helper.make_tensor_value_info("logits", TensorProto.FLOAT, ["N", 10])],
        [numpy_helper.from_array(w, "w"), numpy_helper.from_array(b, "b")],
    )  # fmt: skip
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    for key, value in (metadata or {}).items():
        model.metadata_props.add(key=key, value=json.dumps(value))
    onnx.save(model, str(path))
    return w, b
