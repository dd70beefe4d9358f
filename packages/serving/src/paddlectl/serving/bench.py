"""``paddlectl serve bench``: load a running server and report throughput, latency and errors.

``concurrency`` workers each keep one request in flight for ``duration`` seconds (after a short
warm-up whose requests are not counted) over one asyncio event loop, so the client costs little
CPU next to the server it measures. Every request carries its own id and every answer must echo
it: an answer with another id counts as ``mismatched`` (a lost or duplicated response).
"""

from __future__ import annotations

import asyncio
import json
import math
import mimetypes
import random
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Any

import numpy as np
import typer

from .client import Client, ClientError
from .errors import ServeConfigError
from .http1 import Connection, Origin, ProtocolError, request_bytes
from .protocol import DATATYPES

MISMATCH = "mismatched"
MAX_SAMPLES = 20000
"""Latency samples kept for the eval harness's report (a uniform subsample beyond this)."""


@dataclass
class BenchResult:
    url: str
    model: str
    concurrency: int
    duration_s: float
    elapsed_s: float = 0.0
    latencies_ms: list[float] = field(default_factory=list)
    failures: Counter = field(default_factory=Counter)
    """Failed requests by the server's error code (or the transport error's name)."""
    mismatched: int = 0

    @property
    def requests(self) -> int:
        return len(self.latencies_ms) + sum(self.failures.values()) + self.mismatched

    def summary(self) -> dict[str, Any]:
        values = np.asarray(self.latencies_ms, dtype=np.float64)
        p50, p95, p99 = np.percentile(values, [50, 95, 99]) if values.size else (math.nan,) * 3
        return {
            "url": self.url, "model": self.model, "concurrency": self.concurrency, "duration_s": self.duration_s,
            "requests": self.requests, "ok": len(self.latencies_ms), "mismatched": self.mismatched,
            "throughput": len(self.latencies_ms) / self.elapsed_s if self.elapsed_s else 0.0,
            "latency_p50_ms": float(p50), "latency_p95_ms": float(p95), "latency_p99_ms": float(p99),
            "latency_mean_ms": float(values.mean()) if values.size else math.nan,
            "error_rate": (self.requests - len(self.latencies_ms)) / self.requests if self.requests else 0.0,
            "failures": dict(self.failures),
        }  # fmt: skip


def sample_body(metadata: dict[str, Any], seed: int = 0) -> dict[str, Any]:
    """An infer body of one sample per input: symbolic dims as 1, values drawn in [0, 1)."""
    rng = np.random.default_rng(seed)
    inputs = []
    for spec in metadata.get("inputs", []):
        shape = [d if d >= 0 else 1 for d in spec["shape"]]
        dtype = DATATYPES.get(spec["datatype"])
        if dtype in (None, "object"):
            raise ServeConfigError(
                f"input {spec['name']!r} is {spec['datatype']}; pass --input FILE with a request body"
            )
        data = rng.random(shape).astype(dtype) if dtype.startswith("float") else rng.integers(0, 2, shape).astype(dtype)
        inputs.append(
            {"name": spec["name"], "shape": shape, "datatype": spec["datatype"], "data": data.ravel().tolist()}
        )
    if not inputs:
        raise ServeConfigError(f"model {metadata.get('name')!r} lists no inputs; pass --input FILE with a request body")
    return {"inputs": inputs}


@dataclass(frozen=True)
class Payload:
    """What each request sends: ``route`` with a body, the request id spliced into it (infer) or
    sent only as X-Request-Id (an upload to the task-level route, which echoes that header)."""

    route: str
    content_type: str
    head: bytes
    tail: bytes | None = None

    def body(self, request_id: str) -> bytes:
        return self.head if self.tail is None else self.head + request_id.encode() + self.tail


def infer_payload(model: str, body: dict[str, Any]) -> Payload:
    """An infer body as bytes around its id, so each request costs a concatenation, not a JSON dump."""
    rest = json.dumps({k: v for k, v in body.items() if k != "id"}, separators=(",", ":"))
    tail = b'",' + rest[1:].encode() if rest != "{}" else b'"}'
    return Payload(f"/v2/models/{model}/infer", "application/json", b'{"id":"', tail)


def predict_payload(model: str, data: bytes, content_type: str) -> Payload:
    """An upload (an image, an audio file) to ``/v1/models/{model}:predict``."""
    return Payload(f"/v1/models/{model}:predict", content_type, data)


async def _load(result: BenchResult, payload: Payload, key: str | None, warmup_s: float, timeout_s: float,
                total: int | None) -> None:  # fmt: skip
    """A warm-up phase (every worker at least one request, none counted), then the timed phase:
    every request sent before its end is counted when it is answered, however late. Each worker
    keeps one keep-alive connection (``http1``): the request is bytes built once around its id."""
    origin = Origin.parse(result.url)
    headers = {"Content-Type": payload.content_type, **({"Authorization": f"Bearer {key}"} if key else {})}
    head = origin.request_head("POST", payload.route, headers)
    sent = 0

    async def call(connection: Connection, rid: str) -> tuple[str | None, float]:
        began = time.perf_counter()
        request = request_bytes(head, b"X-Request-Id: %s\r\n" % rid.encode(), payload.body(rid))
        try:
            async with asyncio.timeout(timeout_s):
                status, answer_headers, body = await connection.exchange(request)
        except TimeoutError:
            return "timeout", began
        except OSError as exc:
            return type(exc).__name__, began
        except (asyncio.IncompleteReadError, ProtocolError, ValueError):
            return "protocol_error", began
        if not 200 <= status < 300:
            return _code(status, body), began
        return (None if _answered_id(answer_headers, body) == rid else MISMATCH), began

    async def warm(connection: Connection, n: int, until: float) -> None:
        i = 0
        while i == 0 or time.perf_counter() < until:
            await call(connection, f"warmup-{n}-{i}")
            i += 1

    async def timed(connection: Connection, n: int, end: float) -> None:
        nonlocal sent
        i = 0
        while time.perf_counter() < end and (total is None or sent < total):
            sent += 1
            code, began = await call(connection, f"bench-{n}-{i}")
            i += 1
            if code is None:
                result.latencies_ms.append((time.perf_counter() - began) * 1000.0)
            elif code == MISMATCH:
                result.mismatched += 1
            else:
                result.failures[code] += 1

    connections = [Connection(origin) for _ in range(result.concurrency)]
    try:
        if warmup_s > 0:
            until = time.perf_counter() + warmup_s
            await asyncio.gather(*(warm(c, n, until) for n, c in enumerate(connections)))
        start = time.perf_counter()
        await asyncio.gather(*(timed(c, n, start + result.duration_s) for n, c in enumerate(connections)))
        result.elapsed_s = time.perf_counter() - start
    finally:
        for connection in connections:
            connection.close()


def _answered_id(headers: dict[bytes, bytes], body: bytes) -> str | None:
    """The id an answer echoes: ``id`` in a JSON body, else its X-Request-Id header."""
    try:
        answer = json.loads(body)
    except ValueError:
        answer = None
    if isinstance(answer, dict) and "id" in answer:
        return str(answer["id"])
    value = headers.get(b"x-request-id")
    return None if value is None else value.decode("latin-1")


def _code(status: int, body: bytes) -> str:
    try:
        return str(json.loads(body)["error"]["code"])
    except (ValueError, KeyError, TypeError):
        return f"http_{status}"


def run_bench(url: str, model: str, concurrency: int, duration_s: float, key: str | None = None,
              payload: Payload | None = None, warmup_s: float = 1.0, timeout_s: float = 30.0,
              total: int | None = None) -> BenchResult:  # fmt: skip
    """Load ``model`` at ``url`` for ``duration_s`` (or until ``total`` requests were sent, if sooner);
    the payload defaults to an infer request of one random sample shaped by the model's metadata."""
    if concurrency < 1 or duration_s <= 0 or warmup_s < 0 or (total is not None and total < 1):
        raise ServeConfigError("--concurrency must be >= 1, --duration > 0, --warmup >= 0 and --requests >= 1")
    try:
        Origin.parse(url)
    except ValueError as exc:
        raise ServeConfigError(f"--url: {exc}") from None
    if payload is None:
        with Client(url, key=key, timeout=timeout_s, retries=0) as client:
            payload = infer_payload(model, sample_body(client.metadata(model)))
    result = BenchResult(url.rstrip("/"), model, concurrency, duration_s)
    with asyncio.Runner(loop_factory=_loop_factory()) as runner:
        runner.run(_load(result, payload, key, warmup_s, timeout_s, total))
    return result


def _loop_factory():
    """uvloop's event loop when it is installed (the load generator's own CPU is the server's loss),
    asyncio's otherwise."""
    try:
        import uvloop
    except ImportError:
        return None
    return uvloop.new_event_loop


def log_to_harness(
    result: BenchResult, output_dir: Path, tracking_uri: str | None
) -> tuple[str, str | None, str | None]:
    """Record the run as an eval-harness report (local first, then MLflow through the harness's
    pipeline); returns (local id, MLflow run id or None, warning when the store was unreachable)."""
    try:
        from paddlectl.eval_harness import environment, pipeline
        from paddlectl.eval_harness.evaluate import new_local_id
        from paddlectl.eval_harness.report import Report
        from paddlectl.eval_harness.store import LocalStore
    except ImportError:
        raise ServeConfigError("--log-to-harness needs the eval harness: pip install paddlectl-eval-harness") from None
    import datetime as dt

    summary = result.summary()
    samples = result.latencies_ms
    if len(samples) > MAX_SAMPLES:
        samples = random.Random(0).sample(samples, MAX_SAMPLES)
    facts = environment.machine_facts()
    report = Report(
        local_id=new_local_id(), created_at=dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
        task="serve.bench", model_path=result.url, model_name=f"serve-bench.{result.model}",
        experiment=f"serve/{result.model}",
        metrics={k: float(v) for k, v in summary.items() if k.startswith(("latency_", "throughput", "error_rate"))},
        latency_samples_ms={str(result.concurrency): samples},
        errors={"count": result.requests - summary["ok"], "by_code": dict(result.failures), "mismatched": result.mismatched},
        config={k: summary[k] for k in ("url", "model", "concurrency", "duration_s")},
        versions=environment.package_versions(), git_sha=environment.git_sha(), machine=facts,
        fingerprint=environment.fingerprint(facts), main_metric="throughput",
    )  # fmt: skip
    run = LocalStore(output_dir).create(report)
    logged = pipeline.log(run, output_dir, tracking_uri)
    return run.local_id, logged.run_id, logged.warning


def bench(
    url: Annotated[str, typer.Option("--url", help="The server, e.g. http://127.0.0.1:8866.")],
    concurrency: Annotated[int, typer.Option("--concurrency", "-c", min=1, help="Requests in flight at once.")] = 8,
    duration: Annotated[float, typer.Option("--duration", "-d", min=0.1, help="Seconds to measure (after warm-up).")] = 10.0,
    model: Annotated[str | None, typer.Option("--model", help="Model to load; the server's only model when omitted.")] = None,
    key: Annotated[str | None, typer.Option("--key", envvar="PADDLECTL_SERVE_KEY", help="API key (or $PADDLECTL_SERVE_KEY).")] = None,
    input_file: Annotated[Path | None, typer.Option("--input", help="A .json infer request body, or a file (image, audio) to upload to :predict (default: one random tensor).")] = None,
    requests: Annotated[int | None, typer.Option("--requests", min=1, help="Stop after this many requests (within --duration).")] = None,
    warmup: Annotated[float, typer.Option("--warmup", min=0.0, help="Seconds of uncounted warm-up.")] = 1.0,
    json_out: Annotated[Path | None, typer.Option("--json", help="Also write the summary as JSON here.")] = None,
    log_dir: Annotated[Path | None, typer.Option("--log-to-harness", help="Eval-harness output dir to record the run in (MLflow).")] = None,
    tracking_uri: Annotated[str | None, typer.Option("--tracking-uri", help="MLflow store (default: the harness's SQLite under --log-to-harness).")] = None,
) -> None:  # fmt: skip
    """Throughput, p50/p95/p99 and error rate of a running server; exit 1 when every request failed."""
    from paddlectl.cli.output import usage_errors

    with usage_errors():
        try:
            name = model or _only_model(url, key)
            payload = _payload(name, input_file) if input_file is not None else None
            result = run_bench(url, name, concurrency, duration, key, payload, warmup, total=requests)
        except ClientError as exc:
            raise ServeConfigError(f"cannot bench {url}: {exc}") from None
        summary = result.summary()
        if json_out is not None:
            from paddlectl.framework.utils.fileio import atomic_write

            with atomic_write(json_out, "w", encoding="utf-8") as handle:
                handle.write(json.dumps(_strict(summary), indent=2) + "\n")
        _print(summary)
        if log_dir is not None:
            local_id, run_id, warning = log_to_harness(result, log_dir, tracking_uri)
            typer.echo(f"recorded as eval-harness run {local_id}" + (f" (MLflow run {run_id})" if run_id else ""))
            if warning:
                typer.echo(f"warning: {warning}", err=True)
    if summary["ok"] == 0:
        raise typer.Exit(1)


def _strict(summary: dict[str, Any]) -> dict[str, Any]:
    """NaN (no successful request to take a percentile of) as null: JSON has no NaN."""
    return {k: None if isinstance(v, float) and not math.isfinite(v) else v for k, v in summary.items()}


def _payload(model: str, path: Path) -> Payload:
    """``--input``: a .json infer body, or any other file uploaded to the task-level route."""
    if path.suffix.lower() != ".json":
        try:
            data = path.read_bytes()
        except OSError as exc:
            raise ServeConfigError(f"--input {str(path)!r} cannot be read ({exc})") from None
        return predict_payload(model, data, mimetypes.guess_type(path.name)[0] or "application/octet-stream")
    try:
        body = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError, RecursionError) as exc:
        raise ServeConfigError(f"--input {str(path)!r} is not a readable JSON file ({exc})") from None
    if not isinstance(body, dict) or not isinstance(body.get("inputs"), list):
        raise ServeConfigError(f'--input {str(path)!r} must be an infer request body: {{"inputs": [...]}}')
    return infer_payload(model, body)


def _only_model(url: str, key: str | None) -> str:
    """The model to bench when --model is omitted: the server's only one (its repository index)."""
    with Client(url, key=key, retries=0) as client:
        try:
            index = client.request("POST", "/v2/repository/index", json={}).json()
        except ClientError as exc:
            raise ServeConfigError(f"{url} does not list its models ({exc.code}); name one with --model") from None
    names = [m.get("name") for m in index if isinstance(m, dict)] if isinstance(index, list) else []
    if len(names) != 1:
        raise ServeConfigError(f"the server has models {names}; name one with --model")
    return names[0]


def _print(summary: dict[str, Any]) -> None:
    from rich.console import Console
    from rich.table import Table

    table = Table(title=f"{summary['model']} at {summary['url']}, concurrency {summary['concurrency']}")
    for column in ("requests", "throughput/s", "p50 ms", "p95 ms", "p99 ms", "error rate", "mismatched"):
        table.add_column(column, justify="right")
    table.add_row(str(summary["requests"]), f"{summary['throughput']:.1f}", f"{summary['latency_p50_ms']:.2f}",
                  f"{summary['latency_p95_ms']:.2f}", f"{summary['latency_p99_ms']:.2f}",
                  f"{summary['error_rate']:.2%}", str(summary["mismatched"]))  # fmt: skip
    Console().print(table)
    if summary["failures"]:
        Console().print("failures: " + ", ".join(f"{code} x{n}" for code, n in sorted(summary["failures"].items())))
