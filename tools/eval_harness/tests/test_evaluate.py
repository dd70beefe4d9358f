import json
import math

import numpy as np
import pytest
from digits_task import DigitsTask
from helpers import evaluate_and_record

from paddlectl.eval_harness.evaluate import accuracy_pass, evaluate
from paddlectl.eval_harness.report import Report
from paddlectl.eval_harness.settings import load_settings


def test_a_clean_evaluation_measures_accuracy_latency_throughput_and_cost(task, runner, settings, config):
    report, acc = evaluate(task, runner, settings, model_path="lenet", config=config)
    m = report.metrics
    assert m["accuracy"] > 0.7
    assert m["error_rate"] == 0.0
    for bs in (1, 4):
        assert len(report.samples(bs)) == 30
        assert 0 < m[f"latency_p50_ms_bs{bs}"] <= m[f"latency_p95_ms_bs{bs}"] <= m[f"latency_p99_ms_bs{bs}"]
        assert m[f"latency_std_ms_bs{bs}"] >= 0
        # 3.6 per hour is 0.001 per second: 1000 predictions cost 1 / throughput
        assert m[f"cost_per_1k_bs{bs}"] == pytest.approx(1.0 / m[f"throughput_bs{bs}"])
    assert m["throughput"] == max(m["throughput_bs1"], m["throughput_bs4"])
    assert m["peak_rss_mb"] > 50
    assert acc.first_inputs[0].shape == (1, 1, 28, 28)
    assert report.fingerprint and report.versions["paddlectl-framework"]
    assert "numba" in report.versions and "numpy" in report.versions


def test_inputs_that_raise_or_give_nan_are_counted_as_errors(runner, config):
    settings = load_settings(config)
    task = DigitsTask(fail_on=[1500], nan_on=[1600])
    report, acc = evaluate(task, runner, settings, model_path="lenet", config=config)
    # the first accuracy batch (32 inputs) raised, one input gave NaN logits
    assert len(acc.predictions) == 297 - 33
    assert report.errors["count"] > 33
    assert report.metrics["error_rate"] == pytest.approx(report.errors["count"] / report.errors["total"])
    text = " ".join(report.errors["examples"])
    assert "unreadable" in text and "NaN" in text


def test_out_of_range_scores_fail_the_format_check(runner, config):
    class Overconfident(DigitsTask):
        def postprocess(self, outputs):
            return [(label, score + 1.0) for label, score in super().postprocess(outputs)]

    report, acc = evaluate(Overconfident(), runner, load_settings(config), model_path="lenet", config=config)
    assert acc.predictions == []
    assert "accuracy" not in report.metrics
    assert report.metrics["error_rate"] == 1.0
    assert math.isinf(report.metrics["cost_per_1k"])
    assert "outside [0, 1]" in report.errors["examples"][0]


def test_recorded_run_is_complete_on_disk_and_round_trips(task, runner, config, weights):
    run = evaluate_and_record(task, runner, config, weights)
    report = Report.read(run.report_path)
    assert report.plots == ["latency_hist.png", "plots/confusion.png"]
    for name in ("report.json", "report.md", "latency_hist.png", "plots/confusion.png"):
        assert (run.path / name).stat().st_size > 0
    assert run.state()["status"] == "pending"
    assert json.loads(run.report_path.read_text())["metrics"]["accuracy"] == report.metrics["accuracy"]
    assert "| accuracy |" in (run.path / "report.md").read_text()
    assert (
        "Cost per 1,000 predictions: 3.6/h (Eval.harness.cost.machine_price_per_hour)"
        in (run.path / "report.md").read_text()
    )
    assert not list(run.path.rglob("*.tmp"))


class _Detector:
    """A fake detector whose outputs are data-sized, as a model with NMS inside gives them: rows
    [N, 2] (image index, score) over the batch, and per-image counts [B]."""

    def __init__(self, boxes_per_image, bad=()):
        self.boxes_per_image, self.bad = boxes_per_image, set(bad)

    def eval_samples(self):
        return iter([(i, i) for i in range(len(self.boxes_per_image))])

    def preprocess(self, raw):
        return [np.asarray(raw)]

    def run(self, inputs):
        (ids,) = inputs
        rows = [[i, 0.5] for i in ids for _ in range(self.boxes_per_image[i])]
        return [np.asarray(rows, np.float32).reshape(-1, 2), np.asarray([self.boxes_per_image[i] for i in ids])]

    def postprocess(self, outputs):
        return list(outputs[1])

    def check_prediction(self, prediction):
        return "bad" if int(prediction) in {self.boxes_per_image[i] for i in self.bad} else None


def test_data_sized_outputs_are_kept_whole_and_a_batch_with_a_failed_input_is_not_scored(config):
    settings = load_settings({**config, "Eval": {"harness": {**config["Eval"]["harness"], "accuracy_batch_size": 2}}})
    task = _Detector([1, 3, 2, 0, 5, 4], bad=[4])  # batches (1, 3) (2, 0) (5, 4): the last holds a failure
    acc = accuracy_pass(task, task, settings)
    rows, counts = (np.concatenate(batches) for batches in acc.output_rows)
    assert counts.tolist() == acc.predictions == [1, 3, 2, 0]
    assert rows[:, 0].tolist() == [0, 1, 1, 1, 2, 2] and acc.failures.count == 1
