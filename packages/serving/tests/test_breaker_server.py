"""A real server: a slow primary trips its breaker, the fallback answers every request, half-open
probing goes back to the primary; `serve bench` loads it with no lost or mixed-up answers."""

from __future__ import annotations

import json
import time

import httpx
import pytest
from servers import ServerProcess
from typer.testing import CliRunner

from paddlectl.serving.bench import sample_body
from paddlectl.serving.cli import app

BREAKER = {"error_rate": 0.5, "min_requests": 3, "latency_ms": 0.001, "window_s": 60.0, "cooldown_s": 1.5}
"""Every call is slower than 1 µs: the breaker opens after 3 calls, whatever the machine's load."""


@pytest.fixture(scope="module")
def served(lenet, lenet_v2, tmp_path_factory):
    tmp = tmp_path_factory.mktemp("breaker")
    config = {"models": {"primary": {"fallback": "backup", "breaker": BREAKER}}}
    server = ServerProcess({"primary": lenet, "backup": lenet_v2}, tmp, config=config)
    server.body = sample_body(httpx.get(f"{server.url}/v2/models/primary", timeout=10).json())
    yield server
    server.stop()


def answered_by(server) -> str:
    response = httpx.post(f"{server.url}/v2/models/primary/infer", json=server.body, timeout=30)
    assert response.status_code == 200, response.text
    return response.json()["model_name"]


def breaker_gauge(server) -> float:
    for line in httpx.get(f"{server.url}/metrics", timeout=10).text.splitlines():
        if line.startswith('paddlectl_serve_breaker_state{model="primary"}'):
            return float(line.split()[-1])
    raise AssertionError("no breaker gauge for primary in /metrics")


def test_open_breaker_sends_every_request_to_the_fallback_and_probes_after_cooldown(served):
    first = [answered_by(served) for _ in range(6)]
    assert first == ["primary"] * 3 + ["backup"] * 3
    assert breaker_gauge(served) == 2.0  # open
    time.sleep(BREAKER["cooldown_s"] + 0.2)
    assert answered_by(served) == "primary"  # the half-open probe (slow again: the breaker reopens)
    assert [answered_by(served) for _ in range(3)] == ["backup"] * 3
    assert breaker_gauge(served) == 2.0


def test_bench_cli_reports_no_lost_or_mismatched_answers(served, tmp_path):
    out = tmp_path / "bench.json"
    result = CliRunner().invoke(app, ["bench", "--url", served.url, "--model", "backup", "--concurrency", "4",
                                      "--duration", "1.5", "--warmup", "0.3", "--json", str(out)])  # fmt: skip
    assert result.exit_code == 0, result.output
    summary = json.loads(out.read_text())
    assert summary["ok"] > 0 and summary["requests"] == summary["ok"] and summary["mismatched"] == 0
    assert summary["error_rate"] == 0.0 and summary["latency_p50_ms"] <= summary["latency_p99_ms"]
    assert "throughput/s" in result.output
    counted = CliRunner().invoke(app, ["bench", "--url", served.url, "--model", "backup", "--concurrency", "8",
                                       "--duration", "30", "--requests", "40", "--warmup", "0", "--json", str(out)])  # fmt: skip
    assert counted.exit_code == 0, counted.output
    assert json.loads(out.read_text())["ok"] == 40


def test_bench_cli_exits_1_when_every_request_fails_and_2_on_a_bad_input_file(served, tmp_path):
    wrong = tmp_path / "wrong.json"
    wrong.write_text(json.dumps({"inputs": [{"name": "nope", "shape": [1], "datatype": "FP32", "data": [0.0]}]}))
    args = ["bench", "--url", served.url, "--model", "backup", "--duration", "0.3", "--warmup", "0"]
    failed = CliRunner().invoke(app, [*args, "--input", str(wrong), "--json", str(tmp_path / "failed.json")])
    assert failed.exit_code == 1 and "bad_input_name" in failed.output and "100.00%" in failed.output
    assert json.loads((tmp_path / "failed.json").read_text())["latency_p50_ms"] is None  # strict JSON, no NaN
    broken = tmp_path / "broken.json"
    broken.write_text("{not json")
    unreadable = CliRunner().invoke(app, [*args, "--input", str(broken)])
    assert unreadable.exit_code == 2 and "not a readable JSON file" in unreadable.output
