"""A real `paddlectl serve` on 127.0.0.1 serving LeNet exports: protocol, batching, deadlines, queue
limits, fallback, and bad input answered with stable 4xx codes while another client is served."""

from __future__ import annotations

import json
import signal
import socket
import struct
import threading
import time
import zlib
from concurrent.futures import ThreadPoolExecutor

import httpx
import numpy as np
import pytest
from PIL import Image
from servers import ServerProcess

from paddlectl.framework.inference import Config
from paddlectl.framework.inference.predictor import create_predictor

MAX_BODY = 1_000_000
SETTINGS = {
    "server": {"max_body_bytes": MAX_BODY, "body_timeout_s": 3.0, "max_image_pixels": 1_000_000},
    "models": {
        "digits": {"max_batch_size": 8, "max_delay_ms": 40, "timeout_ms": 10_000},
        # every request waits out a 2 s batch window: its 60 ms deadline passes first
        "tight": {"max_delay_ms": 2000, "timeout_ms": 60},
        # at most 2 requests wait for a 1.5 s batch window; the third is refused, or goes to the fallback
        "narrow": {"max_delay_ms": 1500, "queue_size": 2},
        "backed": {"max_delay_ms": 1500, "queue_size": 2, "fallback": "digits"},
        # an untrained LeNet is never this sure: every answer fails the check and goes to review
        "checked": {"checks": {"ranges": {"score": [0.99, 1.0]}}},
        # a wide batch window, so concurrent requests surely share a batch
        "lm": {"max_delay_ms": 300},
    },
}


@pytest.fixture(scope="module")
def live_link(lenet, tmp_path_factory):
    """The directory the "live" model is served from: a symlink a deployment points at a new export."""
    link = tmp_path_factory.mktemp("deploy") / "live"
    link.symlink_to(lenet, target_is_directory=True)
    return link


@pytest.fixture(scope="module")
def server(lenet, live_link, causal_lm, tmp_path_factory):
    models = {**dict.fromkeys(SETTINGS["models"], lenet), "live": live_link, "lm": causal_lm}
    tmp = tmp_path_factory.mktemp("serve")
    settings = {**SETTINGS, "server": {**SETTINGS["server"], "review_queue": str(tmp / "review.jsonl")}}
    process = ServerProcess(models, tmp, settings)
    process.review_queue = tmp / "review.jsonl"
    yield process
    process.stop()


@pytest.fixture(scope="module")
def predictor(lenet):
    return create_predictor(Config(str(lenet)))


def images(n: int, seed: int = 0) -> np.ndarray:
    return np.random.default_rng(seed).random((n, 1, 28, 28), dtype=np.float32)


def tensor(x: np.ndarray, datatype: str = "FP32", name: str = "image") -> dict:
    return {"inputs": [{"name": name, "shape": list(x.shape), "datatype": datatype, "data": x.ravel().tolist()}]}


def infer(url: str, model: str, x: np.ndarray) -> httpx.Response:
    return httpx.post(f"{url}/v2/models/{model}/infer", json=tensor(x), timeout=20)


def logits(response: httpx.Response) -> np.ndarray:
    out = response.json()["outputs"][0]
    return np.asarray(out["data"], dtype=np.float32).reshape(out["shape"])


def code(response: httpx.Response) -> tuple[int, str]:
    return response.status_code, response.json()["error"]["code"]


def at_once(calls) -> list:
    with ThreadPoolExecutor(len(calls)) as pool:
        return [f.result() for f in [pool.submit(c) for c in calls]]


def test_health_and_metadata(server):
    assert httpx.get(f"{server.url}/v2/health/live").json() == {"live": True}
    assert httpx.get(f"{server.url}/v2/health/ready").status_code == 200
    meta = httpx.get(f"{server.url}/v2/models/digits").json()
    assert meta["versions"] == ["1"] and meta["parameters"]["task"] == "vision.cls"
    assert meta["inputs"] == [{"name": "image", "datatype": "FP32", "shape": [-1, 1, 28, 28]}]
    assert meta["outputs"][0]["shape"] == [-1, 10]
    assert code(httpx.get(f"{server.url}/v2/models/nope")) == (404, "model_not_found")


def test_infer_answers_what_the_predictor_computes(server, predictor):
    x = images(3)
    response = infer(server.url, "digits", x)
    assert response.status_code == 200 and response.json()["model_version"] == "1"
    np.testing.assert_allclose(logits(response), predictor.run([x])[0], rtol=1e-5, atol=1e-6)


def test_batched_results_equal_single_request_results(server):
    x = images(8, seed=1)
    alone = [logits(infer(server.url, "digits", x[i : i + 1])) for i in range(8)]
    before = batch_runs(server.url)
    together = at_once([lambda i=i: infer(server.url, "digits", x[i : i + 1]) for i in range(8)])
    runs, rows = (a - b for a, b in zip(batch_runs(server.url), before, strict=True))
    assert rows == 8 and runs < 8, "the 8 concurrent requests were not batched"
    for single, batched in zip(alone, together, strict=True):
        # the same rows in a bigger matmul: BLAS blocking moves the last float32 bits only (measured 2e-6)
        np.testing.assert_allclose(logits(batched), single, rtol=1e-5, atol=1e-5)
        assert logits(batched).argmax() == single.argmax()


def batch_runs(url: str) -> tuple[float, float]:
    """(model runs, rows run) of the digits model so far, from /metrics."""
    text = httpx.get(f"{url}/metrics").text
    values = {}
    for line in text.splitlines():
        for series in ("paddlectl_serve_batch_size_count", "paddlectl_serve_batch_size_sum"):
            if line.startswith(series + '{model="digits"}'):
                values[series] = float(line.split()[-1])
    return values["paddlectl_serve_batch_size_count"], values["paddlectl_serve_batch_size_sum"]


def test_a_request_past_its_deadline_is_504_and_blocks_no_one(server):
    start = time.monotonic()
    late, served = at_once(
        [lambda: infer(server.url, "tight", images(1)), lambda: infer(server.url, "digits", images(1))]
    )
    assert code(late) == (504, "deadline_exceeded")
    assert time.monotonic() - start < 1.5, "the 504 waited for the batch window instead of the deadline"
    assert served.status_code == 200


def test_a_full_queue_is_503_with_retry_after(server):
    answers = at_once([lambda: infer(server.url, "narrow", images(1)) for _ in range(4)])
    statuses = sorted(a.status_code for a in answers)
    assert statuses.count(200) >= 2 and 503 in statuses
    refused = next(a for a in answers if a.status_code == 503)
    assert code(refused) == (503, "queue_full") and refused.headers["Retry-After"] == "1"


def test_the_fallback_answers_when_the_primary_queue_is_full(server):
    answers = at_once([lambda: infer(server.url, "backed", images(1)) for _ in range(4)])
    assert [a.status_code for a in answers] == [200] * 4
    assert {a.json()["model_name"] for a in answers} == {"backed", "digits"}
    assert (
        'paddlectl_serve_fallbacks_total{fallback="digits",model="backed"}' in httpx.get(f"{server.url}/metrics").text
    )


def bomb_png(side: int) -> bytes:
    """A valid PNG header declaring side x side pixels, with a few bytes of data."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    header = struct.pack(">IIBBBBB", side, side, 8, 0, 0, 0, 0)
    return (
        b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(b"\0" * 64)) + chunk(b"IEND", b"")
    )


class Bystander(threading.Thread):
    """Another client calling infer in a loop; every answer must be a 200."""

    def __init__(self, url: str, model: str = "digits") -> None:
        super().__init__(daemon=True)
        self.url, self.model, self.stop, self.statuses, self.versions = url, model, threading.Event(), [], set()

    def run(self) -> None:
        while not self.stop.is_set():
            response = infer(self.url, self.model, images(1))
            self.statuses.append(response.status_code)
            if response.status_code == 200:
                self.versions.add(response.json()["model_version"])


def test_bad_input_gets_stable_4xx_codes_while_another_client_is_served(server):
    url = f"{server.url}/v2/models/digits/infer"
    bystander = Bystander(server.url)
    bystander.start()
    try:
        assert code(httpx.post(url, content=b'{"inputs": [')) == (400, "bad_json")
        assert code(httpx.post(url, json={"inputs": "x"})) == (400, "bad_request")
        assert code(httpx.post(url, json=tensor(np.zeros((1, 1, 27, 28), np.float32)))) == (400, "bad_shape")
        assert code(httpx.post(url, json=tensor(np.zeros((1, 1, 28, 28), np.int64), "INT64"))) == (400, "bad_datatype")
        assert code(httpx.post(url, json=tensor(images(1), name="pixels"))) == (400, "bad_input_name")
        wrong_count = tensor(images(1))
        wrong_count["inputs"][0]["shape"] = [2, 1, 28, 28]
        assert code(httpx.post(url, json=wrong_count)) == (400, "bad_shape")
        assert code(httpx.post(url, content=b"x" * (MAX_BODY + 1))) == (413, "body_too_large")
        predict = f"{server.url}/v1/models/digits:predict"
        assert code(httpx.post(predict, content=bomb_png(30000), headers={"content-type": "image/png"})) == (
            413,
            "image_too_large",
        )
        assert code(httpx.post(predict, content=b"not a png", headers={"content-type": "image/png"})) == (
            400,
            "bad_image",
        )
        assert code(httpx.post(predict, json={"inputs": ["/etc/passwd"]})) == (400, "bad_input")
        assert code(httpx.get(url)) == (405, "method_not_allowed")
        assert code(httpx.get(f"{server.url}/v3/nothing")) == (404, "not_found")
        assert code(httpx.post(f"{server.url}/v1/models/digits:explain")) == (404, "not_found")
    finally:
        bystander.stop.set()
        bystander.join(timeout=20)
    assert bystander.statuses and set(bystander.statuses) == {200}


def test_a_slow_client_is_cut_off_and_does_not_block_others(server):
    with socket.create_connection(("127.0.0.1", server.port), timeout=10) as slow:
        slow.sendall(
            b"POST /v2/models/digits/infer HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
            b"Content-Length: 1000\r\n\r\n{"
        )
        start = time.monotonic()
        assert infer(server.url, "digits", images(1)).status_code == 200
        # blocked, it would have waited for the slow body's 3 s timeout (the margin is for a loaded machine)
        assert time.monotonic() - start < 2.5, "another client waited for the slow one"
        answer = b""
        while b"}}" not in answer:  # the status line and the JSON body may come in separate packets
            data = slow.recv(4096)
            if not data:
                break
            answer += data
    assert b" 408 " in answer.split(b"\r\n")[0] and b"body_timeout" in answer


def test_task_level_predict_gives_the_records_paddlectl_predict_prints(server, lenet, tmp_path):
    from paddlectl.cli.predict import open_model
    from paddlectl.framework.vision.task import ClsTask

    picture = tmp_path / "digit.png"
    Image.fromarray((np.random.default_rng(2).random((8, 8)) * 255).astype(np.uint8)).save(picture)
    saved, task = open_model(str(lenet)), ClsTask()
    outputs = create_predictor(Config(str(lenet))).run(task.preprocess(saved.meta["preprocess"], [picture]))
    expected = task.postprocess(saved.meta["postprocess"], outputs)
    response = httpx.post(
        f"{server.url}/v1/models/digits:predict", content=picture.read_bytes(), headers={"content-type": "image/png"}
    )
    assert response.status_code == 200, response.text
    body = response.json()
    assert body["task"] == "vision.cls" and len(body["predictions"]) == 1
    got = body["predictions"][0]
    assert got["class_id"] == expected[0]["class_id"] and got["score"] == pytest.approx(expected[0]["score"], rel=1e-5)
    assert [t["label"] for t in got["topk"]] == [t["label"] for t in expected[0]["topk"]]


def test_failed_output_checks_are_answered_and_queued_for_review(server):
    from paddlectl.serving.checks import ReviewQueue

    response = httpx.post(
        f"{server.url}/v1/models/checked:predict",
        json={"inputs": [np.zeros((8, 8)).tolist()]},
        headers={"X-Request-Id": "r-42"},
    )
    assert response.status_code == 200 and response.headers["X-Request-Id"] == "r-42"
    review = response.json()["review"]
    assert review["queued"] and "score" in review["problems"][0]
    [entry] = ReviewQueue(server.review_queue).entries()
    assert entry["request_id"] == "r-42" and entry["model"] == "checked"


def test_metrics_are_prometheus_text_per_model_and_key(server):
    infer(server.url, "digits", images(1))
    response = httpx.get(f"{server.url}/metrics")
    assert response.headers["content-type"].startswith("text/plain")
    text = response.text
    assert 'paddlectl_serve_requests_total{code="200",key="anonymous",model="digits"}' in text
    assert 'paddlectl_serve_request_seconds_bucket{key="anonymous",le="0.1",model="digits"}' in text
    assert 'paddlectl_serve_queue_depth{model="digits"}' in text
    assert 'paddlectl_serve_model_version{model="digits"} 1.0' in text


def server_sent_events(text: str) -> list[tuple[str, dict]]:
    events = []
    for block in text.strip().split("\n\n"):
        fields = dict(line.split(": ", 1) for line in block.splitlines())
        events.append((fields["event"], json.loads(fields["data"])))
    return events


def test_the_causal_lm_streams_tokens_with_counts_and_time_to_first_token(server, causal_lm):
    from paddlectl.cli.predict import open_model
    from paddlectl.nlp.causal_lm.serving import generate_served

    with httpx.stream("POST", f"{server.url}/v1/models/lm:generate", json={"prompt": "中国人民", "max_length": 6}) as r:
        assert r.status_code == 200 and r.headers["content-type"].startswith("text/event-stream")
        events = server_sent_events(r.read().decode())
    *tokens, (last, done) = events
    assert last == "done" and {name for name, _ in tokens} == {"token"} and len(tokens) == 6
    assert "".join(t["token"] for _, t in tokens) == done["text"]
    assert (done["tokens_in"], done["tokens_out"]) == (4, 6) and done["time_to_first_token_ms"] > 0
    saved = open_model(str(causal_lm))
    run = create_predictor(Config(str(causal_lm))).run
    expected = generate_served(run, saved.meta["preprocess"], saved.meta["postprocess"], "中国人民", max_length=6)
    assert done["text"] == expected["text"]
    text = httpx.get(f"{server.url}/metrics").text
    assert 'paddlectl_serve_tokens_total{direction="out",model="lm"} 6.0' in text
    assert 'paddlectl_serve_time_to_first_token_seconds_count{model="lm"} 1.0' in text
    assert code(httpx.post(f"{server.url}/v1/models/digits:generate", json={"prompt": "x"})) == (400, "not_generative")
    assert code(httpx.post(f"{server.url}/v1/models/lm:generate", json={"prompt": "x", "beams": 2})) == (
        400,
        "bad_request",
    )


def test_an_input_the_model_refuses_fails_alone_not_its_batch(server):
    """Token ids past the vocabulary pass the tensor checks but fail the model run: the request
    batched with them is still answered."""

    def ids(value: int) -> dict:
        return {"inputs": [{"name": "input_ids", "shape": [1, 4], "datatype": "INT64", "data": [value] * 4}]}

    url = f"{server.url}/v2/models/lm/infer"
    bad, good = at_once(
        [lambda: httpx.post(url, json=ids(10**6), timeout=20), lambda: httpx.post(url, json=ids(1), timeout=20)]
    )
    assert code(bad) == (400, "bad_input") and "10" in bad.json()["error"]["message"]
    assert good.status_code == 200


def test_text_models_take_json_texts_at_predict(server):
    response = httpx.post(f"{server.url}/v1/models/lm:predict", json={"inputs": ["中国", "人民"]})
    assert response.status_code == 200, response.text
    predictions = response.json()["predictions"]
    assert len(predictions) == 2 and all(len(p["topk"]) == 2 for p in predictions)
    assert code(httpx.post(f"{server.url}/v1/models/lm:predict", json={"inputs": [[1, 2]]})) == (400, "bad_input")


def test_hot_reload_under_load_fails_no_request(server, live_link, lenet_v2):
    staged = live_link.with_name("live.next")
    staged.symlink_to(live_link.parent, target_is_directory=True)  # a broken deployment: no model there
    staged.replace(live_link)
    broken = httpx.post(f"{server.url}/v2/repository/models/live/load", timeout=60)
    assert (
        code(broken) == (409, "reload_failed") and infer(server.url, "live", images(1)).json()["model_version"] == "1"
    )
    staged.symlink_to(lenet_v2, target_is_directory=True)
    staged.replace(live_link)  # the deployment: an atomic switch of the link to the new export
    clients = [Bystander(server.url, "live") for _ in range(3)]
    for client in clients:
        client.start()
    try:
        time.sleep(0.3)
        reloaded = httpx.post(f"{server.url}/v2/repository/models/live/load", timeout=60)
        time.sleep(0.3)
    finally:
        for client in clients:
            client.stop.set()
            client.join(timeout=20)
    assert reloaded.status_code == 200 and reloaded.json() == {"name": "live", "version": "2"}
    statuses = [s for c in clients for s in c.statuses]
    versions = {v for c in clients for v in c.versions}
    assert statuses and set(statuses) == {200} and versions == {"1", "2"}
    x = images(2, seed=3)
    np.testing.assert_allclose(
        logits(infer(server.url, "live", x)), create_predictor(Config(str(lenet_v2))).run([x])[0], rtol=1e-5, atol=1e-6
    )


def test_graceful_shutdown_finishes_in_flight_requests(server):
    """Runs last: it stops the module's server."""
    with ThreadPoolExecutor(1) as pool:
        pending = pool.submit(infer, server.url, "narrow", images(1))  # waits out a 1.5 s batch window
        for _ in range(100):  # until the request is in the queue
            if 'paddlectl_serve_queue_depth{model="narrow"} 1.0' in httpx.get(f"{server.url}/metrics").text:
                break
            time.sleep(0.01)
        server.signal(signal.SIGTERM)
        answer = pending.result()
    assert answer.status_code == 200
    assert server.process.wait(timeout=20) in (0, -signal.SIGTERM)
