"""`serve bench` pieces without a server: request bodies, the summary, harness recording."""

from __future__ import annotations

import json
from collections import Counter

import pytest

from paddlectl.serving.bench import (
    BenchResult,
    infer_payload,
    log_to_harness,
    predict_payload,
    run_bench,
    sample_body,
)
from paddlectl.serving.errors import ServeConfigError

META = {"name": "m", "inputs": [{"name": "x", "datatype": "FP32", "shape": [-1, 1, 2, 2]},
                                {"name": "ids", "datatype": "INT64", "shape": [-1, 3]}]}  # fmt: skip


def test_sample_body_follows_the_metadata_with_symbolic_dims_as_one():
    body = sample_body(META)
    x, ids = body["inputs"]
    assert (x["shape"], x["datatype"], len(x["data"])) == ([1, 1, 2, 2], "FP32", 4)
    assert all(0.0 <= v < 1.0 for v in x["data"]) and (ids["shape"], ids["datatype"]) == ([1, 3], "INT64")
    with pytest.raises(ServeConfigError, match="--input FILE"):
        sample_body({"name": "t", "inputs": [{"name": "s", "datatype": "BYTES", "shape": [-1]}]})


def test_payloads_splice_each_request_id_into_infer_bodies_only():
    infer = infer_payload("m", {"id": "old", "inputs": [1]})
    assert infer.route == "/v2/models/m/infer" and json.loads(infer.body("r-7")) == {"id": "r-7", "inputs": [1]}
    upload = predict_payload("rec", b"\x89PNG", "image/png")
    assert (upload.route, upload.body("r-7"), upload.content_type) == (
        "/v1/models/rec:predict",
        b"\x89PNG",
        "image/png",
    )


def test_summary_counts_failures_and_mismatches_as_errors():
    result = BenchResult("u", "m", 2, 1.0, elapsed_s=2.0, latencies_ms=[float(i) for i in range(1, 101)],
                         failures=Counter({"queue_full": 5}), mismatched=1)  # fmt: skip
    summary = result.summary()
    assert summary["requests"] == 106 and summary["ok"] == 100 and summary["throughput"] == 50.0
    assert summary["latency_p50_ms"] == pytest.approx(50.5) and summary["latency_p99_ms"] == pytest.approx(99.01)
    assert summary["error_rate"] == pytest.approx(6 / 106)
    empty = BenchResult("u", "m", 1, 1.0).summary()
    assert empty["error_rate"] == 0.0 and empty["throughput"] == 0.0


def test_bad_settings_are_usage_errors():
    with pytest.raises(ServeConfigError, match="concurrency"):
        run_bench("http://127.0.0.1:1", "m", 0, 1.0, payload=infer_payload("m", {"inputs": []}))


def test_a_run_is_recorded_locally_when_mlflow_is_unreachable(tmp_path):
    from paddlectl.eval_harness.report import Report

    result = BenchResult("http://127.0.0.1:1", "digits", 4, 1.0, elapsed_s=1.0, latencies_ms=[1.0, 2.0, 3.0],
                         failures=Counter({"queue_full": 1}))  # fmt: skip
    local_id, run_id, warning = log_to_harness(result, tmp_path, "http://127.0.0.1:9")
    assert run_id is None and "unreachable" in warning and "eval sync" in warning
    report = Report.read(tmp_path / "runs" / local_id / "report.json")
    assert (report.task, report.experiment, report.main_metric) == ("serve.bench", "serve/digits", "throughput")
    assert report.metrics["throughput"] == 3.0 and report.metrics["error_rate"] == 0.25
    assert report.latency_samples_ms == {"4": [1.0, 2.0, 3.0]} and report.errors["by_code"] == {"queue_full": 1}
