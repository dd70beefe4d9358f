"""Serving benchmark: `paddlectl serve` with and without dynamic batching against the baseline a
user would write by hand (onnxruntime inside a plain Starlette endpoint under the same uvicorn).

Workloads (loopback only, every server a child process on 127.0.0.1):

* ``lenet``: the digits LeNet (untrained weights: speed does not depend on them), exported twice
  from the same weights: a model directory for `paddlectl serve`, an ONNX file for the baseline.
  Requests are KServe v2 infer calls with one 1x1x28x28 FP32 tensor.
* ``rec``: PP-OCRv4 rec, the ONNX file inside ``rapidocr-onnxruntime`` imported as our model (the
  OCR package's ``ocr.rec`` processing written into its ``metadata_props``, as `paddlectl export
  --format onnx` does), called at the task level: a 48x320 PNG text line uploaded to
  ``/v1/models/rec:predict``, answered with the decoded text. The baseline decodes the PNG,
  normalises it, runs onnxruntime (default session options) and CTC-decodes by hand.

Each server runs with batching off (``max_batch_size: 1``) and on (``max_batch_size: 32``,
``max_delay_ms: 5``), with ``workers`` predictor clones: 1 for LeNet (a batch runs in about a
millisecond; the event loop is the bottleneck), 2 for rec (the model is nearly all of a request and
costs the same per row at any batch size, so two batches run at once to use both cores, as the
baseline's onnxruntime runs its threads). The load generator (``serve bench``, one process for all
three servers) sends prebuilt requests over keep-alive connections. The three servers of a workload are up together (idle ones take no CPU) and
are measured in turn at each concurrency (1, 8, 32), ``--rounds`` times, so a slow spell of the
machine hits all three; the middle round by throughput is reported. Then ``--requests`` requests
(2000; ``--full``: 100000) at concurrency 32 to the batching server must give exactly that many
answers, each echoing its own request id: no lost and no duplicated responses.

    python benchmarks/serve.py [--workloads lenet,rec] [--duration 5] [--rounds 1] [--full] [--json out.json]

Goals (issue 28): with batching at concurrency 32, throughput >= 2x the baseline and p99 < 3x p50.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx
import numpy as np

from paddlectl.serving.bench import infer_payload, predict_payload, run_bench, sample_body

CONCURRENCY = (1, 8, 32)
BATCHING = {"off": {"max_batch_size": 1, "max_delay_ms": 0}, "on": {"max_batch_size": 32, "max_delay_ms": 5}}
SERVER_LIMITS = {"queue_size": 4096, "timeout_ms": 60_000}
START_TIMEOUT_S = 180


# ----- the hand-written baseline (run as `serve.py --baseline KIND MODEL PORT`) -----------------
def baseline_app(kind: str, model: str):
    """What a user writes without a serving framework: onnxruntime behind one Starlette route."""
    import onnxruntime as ort
    from starlette.applications import Starlette
    from starlette.concurrency import run_in_threadpool
    from starlette.requests import Request
    from starlette.responses import JSONResponse
    from starlette.routing import Route

    async def ready(request: Request) -> JSONResponse:
        return JSONResponse({"ready": True})

    if kind == "lenet":
        session = ort.InferenceSession(model, providers=["CPUExecutionProvider"])
        name = session.get_inputs()[0].name

        async def infer(request: Request) -> JSONResponse:
            body = await request.json()
            tensor = body["inputs"][0]
            x = np.asarray(tensor["data"], dtype=np.float32).reshape(tensor["shape"])
            (y,) = await run_in_threadpool(session.run, None, {name: x})
            output = {"name": "output", "datatype": "FP32", "shape": list(y.shape), "data": y.ravel().tolist()}
            return JSONResponse({"id": body.get("id"), "outputs": [output]})

        routes = [Route("/v2/models/{name}/infer", infer, methods=["POST"])]
    else:
        from PIL import Image

        session = ort.InferenceSession(model, providers=["CPUExecutionProvider"])
        lines = session.get_modelmeta().custom_metadata_map["character"].splitlines()
        characters = ["", *lines, " "]  # PaddleOCR's CTC layout: blank first, space last

        def recognize(data: bytes) -> list[dict]:
            image = Image.open(io.BytesIO(data)).convert("RGB").resize((320, 48))
            x = ((np.asarray(image, np.float32)[:, :, ::-1] / 255.0 - 0.5) / 0.5).transpose(2, 0, 1)[None]
            (logits,) = session.run(None, {"x": np.ascontiguousarray(x)})
            ids, probs = logits[0].argmax(-1), logits[0].max(-1)
            keep = (ids != 0) & np.r_[True, ids[1:] != ids[:-1]]  # CTC: drop blanks and repeats
            text = "".join(characters[i] for i in ids[keep])
            return [{"label": text, "score": float(probs[keep].mean()) if keep.any() else 0.0}]

        async def predict(request: Request) -> JSONResponse:
            records = await run_in_threadpool(recognize, await request.body())
            return JSONResponse({"id": request.headers.get("x-request-id"), "predictions": records})

        routes = [Route("/v1/models/{target}", predict, methods=["POST"])]
    return Starlette(routes=[Route("/v2/health/ready", ready), *routes])


def run_baseline(kind: str, model: str, port: int) -> None:
    import uvicorn

    uvicorn.run(baseline_app(kind, model), host="127.0.0.1", port=port, log_level="warning")


# ----- the workloads --------------------------------------------------------------------------
def prepare_lenet(tmp: Path) -> dict:
    import paddlectl.framework as paddle
    from paddlectl.framework.config import load_config
    from paddlectl.framework.hapi.export import export
    from paddlectl.framework.vision.task import ClsTask

    config = load_config(Path(paddle.__file__).parent / "vision" / "configs" / "digits_lenet.yml")
    task = ClsTask()
    paddle.seed(0)
    weights = tmp / "lenet.pdparams"
    paddle.save(task.build_model(config).state_dict(), str(weights))
    native = export(task, config, weights, tmp / "lenet").path
    onnx_file = export(task, config, weights, tmp / "lenet.onnx", format="onnx").path
    return {"kind": "lenet", "name": "digits", "ours": native, "baseline": onnx_file, "payload": None, "workers": 1}


def prepare_rec(tmp: Path) -> dict:
    import onnx
    from PIL import Image, ImageDraw

    from paddlectl.ocr.pipeline import rapidocr_model_paths
    from paddlectl.ocr.rec.task import RecTask

    source = rapidocr_model_paths()[2]
    proto = onnx.load(source)
    height, width = proto.graph.input[0].type.tensor_type.shape.dim[2:]
    height.dim_value, width.dim_value = 48, 320  # what the processing below feeds it; the batch stays symbolic
    characters = next(p.value for p in proto.metadata_props if p.key == "character").splitlines()
    dictionary = tmp / "ppocrv4_dict.txt"
    dictionary.write_text("\n".join(characters) + "\n", encoding="utf-8")
    config = {
        "PostProcess": {"name": "CTCLabelDecode", "character_dict_path": str(dictionary), "use_space_char": True},
        "Eval": {"dataset": {"transforms": [{"DecodeImage": {"img_mode": "BGR"}},
                                            {"RecResizeImg": {"image_shape": [3, 48, 320]}}]}},
    }  # fmt: skip
    task = RecTask()
    entries = {"preprocess": task.preprocess_config(config), "postprocess": task.postprocess_config(config)}
    for key, value in entries.items():
        proto.metadata_props.add(key=key, value=json.dumps(value, ensure_ascii=False))
    ours = tmp / "ppocrv4_rec.onnx"
    onnx.save(proto, str(ours))
    image = Image.new("RGB", (320, 48), "white")
    ImageDraw.Draw(image).text((8, 14), "paddlectl serve 2026", fill="black", font_size=24)
    png = io.BytesIO()
    image.save(png, format="PNG")
    return {
        "kind": "rec",
        "workers": 2,
        "name": "rec",
        "ours": ours,
        "baseline": source,
        "payload": predict_payload("rec", png.getvalue(), "image/png"),
    }


# ----- servers ----------------------------------------------------------------------------------
def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Child:
    """A server child process, ready once ``/v2/health/ready`` answers 200."""

    def __init__(self, label: str, command: list[str], port: int, log: Path) -> None:
        self.label, self.url, self.log = label, f"http://127.0.0.1:{port}", log
        with open(log, "w") as handle:
            self.process = subprocess.Popen(command, stdout=handle, stderr=subprocess.STDOUT)

    def wait_ready(self) -> None:
        deadline = time.monotonic() + START_TIMEOUT_S
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(
                    f"{self.label} exited with {self.process.returncode}:\n{self.log.read_text()[-3000:]}"
                )
            with contextlib.suppress(httpx.HTTPError, ValueError):
                answer = httpx.get(f"{self.url}/v2/health/ready", timeout=2)
                if answer.status_code == 200:
                    return
                if answer.json().get("error"):
                    raise RuntimeError(f"{self.label} failed to load: {answer.json()['error']}")
            time.sleep(0.2)
        raise RuntimeError(f"{self.label} was not ready within {START_TIMEOUT_S} s:\n{self.log.read_text()[-3000:]}")

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()


def start_servers(work: dict, tmp: Path) -> dict[str, Child]:
    import yaml

    children = {}
    for mode, batching in BATCHING.items():
        config = tmp / f"{work['name']}-{mode}.yml"
        settings = {**batching, **SERVER_LIMITS, "workers": work["workers"]}
        config.write_text(yaml.safe_dump({"models": {work["name"]: settings}}))
        port = free_port()
        command = [sys.executable, "-m", "paddlectl.cli", "serve", "--host", "127.0.0.1", "--port", str(port),
                   "--model", f"{work['name']}={work['ours']}", "--config", str(config)]  # fmt: skip
        children[f"batching {mode}"] = Child(f"paddlectl serve (batching {mode})", command, port, tmp / f"{mode}.log")
    port = free_port()
    command = [sys.executable, __file__, "--baseline", work["kind"], str(work["baseline"]), str(port)]
    children["baseline"] = Child("baseline (onnxruntime + starlette)", command, port, tmp / "baseline.log")
    try:
        for child in children.values():
            child.wait_ready()
    except BaseException:
        for child in children.values():  # one failed to start: the others must not outlive this script
            child.stop()
        raise
    return children


# ----- measuring --------------------------------------------------------------------------------
def measure(work: dict, children: dict[str, Child], duration: float, rounds: int) -> list[dict]:
    payload = work["payload"]
    if payload is None:
        meta = httpx.get(f"{children['batching on'].url}/v2/models/{work['name']}", timeout=10).json()
        payload = infer_payload(work["name"], sample_body(meta))
    work["payload"] = payload
    rows = []
    for concurrency in CONCURRENCY:
        runs: dict[str, list[dict]] = {label: [] for label in children}
        for _ in range(rounds):
            for label, child in children.items():
                result = run_bench(child.url, work["name"], concurrency, duration, payload=payload, warmup_s=1.0)
                runs[label].append(result.summary())
        for label, found in runs.items():
            middle = sorted(found, key=lambda s: s["throughput"])[len(found) // 2]
            rows.append({"workload": work["name"], "server": label, **{k: v for k, v in middle.items() if k != "url"}})
            print(f"  {work['name']:6s} {label:12s} c={concurrency:<3d} {middle['throughput']:8.1f}/s "
                  f"p50 {middle['latency_p50_ms']:7.2f} p95 {middle['latency_p95_ms']:7.2f} "
                  f"p99 {middle['latency_p99_ms']:7.2f} ms  errors {middle['error_rate']:.2%}", flush=True)  # fmt: skip
    return rows


def agreement(work: dict, children: dict[str, Child]) -> dict:
    """The same request to every server: the baseline must compute what `paddlectl serve` does
    (the same text for rec, logits within 1e-4 for LeNet), or its speed says nothing."""
    payload, answers = work["payload"], {}
    for label, child in children.items():
        headers = {"Content-Type": payload.content_type, "X-Request-Id": "agree"}
        body = httpx.post(child.url + payload.route, content=payload.body("agree"), headers=headers, timeout=60).json()
        answers[label] = body["predictions"] if "predictions" in body else np.asarray(body["outputs"][0]["data"])
    ours, base = answers["batching on"], answers["baseline"]
    if isinstance(ours, list):
        same = [r["label"] for r in ours] == [r["label"] for r in base]
        shown = {label: [r["label"] for r in a] for label, a in answers.items()}
    else:
        same = bool(np.allclose(ours, base, atol=1e-4))
        shown = {"max_abs_diff": float(np.abs(ours - base).max())}
    return {"workload": work["name"], "agree": same, **shown}


def exactly_once(work: dict, child: Child, requests: int) -> dict:
    """``requests`` requests at concurrency 32: every one answered once, with its own id."""
    result = run_bench(child.url, work["name"], 32, 24 * 3600.0, payload=work["payload"], warmup_s=0.0, total=requests)
    summary = result.summary()
    return {"workload": work["name"], "requests": summary["requests"], "ok": summary["ok"],
            "mismatched": summary["mismatched"], "failures": summary["failures"],
            "passed": summary["ok"] == requests == summary["requests"] and summary["mismatched"] == 0}  # fmt: skip


def goals(rows: list[dict]) -> list[dict]:
    out = []
    for workload in sorted({r["workload"] for r in rows}):
        at = {r["server"]: r for r in rows if r["workload"] == workload and r["concurrency"] == 32}
        ours, base = at["batching on"], at["baseline"]
        ratio = ours["throughput"] / base["throughput"] if base["throughput"] else None
        tail = ours["latency_p99_ms"] / ours["latency_p50_ms"] if ours["ok"] else None
        out.append({"workload": workload, "throughput_vs_baseline": ratio, "throughput_goal_met": ratio is not None and ratio >= 2.0,
                    "p99_over_p50": tail, "tail_goal_met": tail is not None and tail < 3.0,
                    "batching_speedup": ours["throughput"] / (at["batching off"]["throughput"] or float("nan"))})  # fmt: skip
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--workloads", default="lenet,rec")
    parser.add_argument("--duration", type=float, default=5.0, help="seconds per measurement (after 1 s warm-up)")
    parser.add_argument("--rounds", type=int, default=1)
    parser.add_argument("--requests", type=int, default=2000, help="the exactly-once check's request count")
    parser.add_argument("--full", action="store_true", help="the issue's 100k-request exactly-once check")
    parser.add_argument("--json", type=Path)
    parser.add_argument("--baseline", nargs=3, metavar=("KIND", "MODEL", "PORT"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.baseline:
        run_baseline(args.baseline[0], args.baseline[1], int(args.baseline[2]))
        return
    prepare = {"lenet": prepare_lenet, "rec": prepare_rec}
    chosen = [w.strip() for w in args.workloads.split(",") if w.strip()]
    unknown = sorted(set(chosen) - set(prepare))
    if unknown:
        parser.error(f"unknown workloads {unknown}; choose from {sorted(prepare)}")
    requests = 100_000 if args.full else args.requests
    rows, checks, agreements = [], [], []
    with tempfile.TemporaryDirectory(prefix="serve-bench-") as tmp:
        for name in chosen:
            folder = Path(tmp) / name
            folder.mkdir()
            work = prepare[name](folder)
            children = start_servers(work, folder)
            try:
                print(f"{name}: {', '.join(children)} ready", flush=True)
                rows += measure(work, children, args.duration, args.rounds)
                agreements.append(agreement(work, children))
                print(f"  answers: {agreements[-1]}", flush=True)
                checks.append(exactly_once(work, children["batching on"], requests))
                print(f"  exactly-once: {checks[-1]}", flush=True)
            finally:
                for child in children.values():
                    child.stop()
    summary = {"machine": {"cpus": len(os.sched_getaffinity(0))}, "duration_s": args.duration, "rounds": args.rounds,
               "rows": rows, "goals": goals(rows), "answers": agreements, "exactly_once": checks}  # fmt: skip
    print(json.dumps(summary["goals"], indent=1))
    if args.json:
        args.json.write_text(json.dumps(summary, indent=1) + "\n")


if __name__ == "__main__":
    main()
