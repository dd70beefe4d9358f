"""The client against scripted transports: retries, backoff, Retry-After, typed errors, tensors."""

from __future__ import annotations

import random

import httpx
import numpy as np
import pytest

from paddlectl.serving.client import (
    AuthError,
    Client,
    DeadlineExceeded,
    RateLimited,
    RequestError,
    ServerError,
    Unavailable,
    decode,
    encode,
)


def scripted(*answers):
    """A transport answering the given (status, json, headers) in turn; records the requests."""
    seen, queue = [], list(answers)

    def handler(request):
        seen.append(request)
        answer = queue.pop(0)
        if isinstance(answer, Exception):
            raise answer
        status, body, headers = (answer + ({},))[:3] if len(answer) == 2 else answer
        return httpx.Response(status, json=body, headers=headers)

    return httpx.MockTransport(handler), seen


def client(transport, **kwargs):
    sleeps = []
    made = Client("http://127.0.0.1:1", key="pdk_secret", transport=transport, sleep=sleeps.append,
                   rng=random.Random(0), **kwargs)  # fmt: skip
    return made, sleeps


def err(code, status=400, after=None):
    return (
        status,
        {"error": {"code": code, "message": code + " happened"}},
        {"Retry-After": str(after)} if after else {},
    )


OK = (200, {"id": "x", "outputs": [{"name": "y", "datatype": "FP32", "shape": [1, 2], "data": [1.0, 2.0]}]})


def test_retries_429_503_504_honouring_retry_after_then_succeeds():
    transport, seen = scripted(
        err("rate_limited", 429, 2), err("queue_full", 503, 1), err("deadline_exceeded", 504), OK
    )
    made, sleeps = client(transport, retries=3, backoff_s=0.1)
    out = made.infer("m", {"x": np.ones((1, 2), np.float32)})
    np.testing.assert_array_equal(out["y"], np.array([[1.0, 2.0]], np.float32))
    assert len(seen) == 4 and all(r.headers["Authorization"] == "Bearer pdk_secret" for r in seen)
    assert 2.0 <= sleeps[0] <= 2.1 and 1.0 <= sleeps[1] <= 1.2 and 0.0 <= sleeps[2] <= 0.4


def test_gives_up_after_retries_with_the_typed_error():
    transport, seen = scripted(*[err("queue_full", 503, 1)] * 3)
    made, sleeps = client(transport, retries=2)
    with pytest.raises(Unavailable) as info:
        made.infer("m", {"x": [1.0]})
    assert len(seen) == 3 and len(sleeps) == 2
    assert (info.value.status, info.value.code, info.value.retry_after_s) == (503, "queue_full", 1.0)


def test_a_retry_after_longer_than_max_backoff_is_raised_at_once():
    transport, seen = scripted(err("quota_exceeded", 429, 3600))
    made, sleeps = client(transport, retries=5, max_backoff_s=10)
    with pytest.raises(RateLimited, match="quota_exceeded"):
        made.infer("m", {"x": [1.0]})
    assert len(seen) == 1 and sleeps == []


@pytest.mark.parametrize(
    ("answer", "kind"),
    [(err("bad_key", 401), AuthError), (err("wrong_env", 403), AuthError), (err("bad_shape"), RequestError),
     ((500, {"oops": 1}), ServerError)],
)  # fmt: skip
def test_other_failures_are_not_retried(answer, kind):
    transport, seen = scripted(answer)
    made, _ = client(transport)
    with pytest.raises(kind):
        made.infer("m", {"x": [1.0]})
    assert len(seen) == 1


def test_connection_failures_are_retried_timeouts_are_not():
    transport, seen = scripted(httpx.ConnectError("refused"), OK)
    made, sleeps = client(transport)
    assert "y" in made.infer("m", {"x": [1.0]}) and len(sleeps) == 1
    transport, _ = scripted(httpx.ReadTimeout("slow"))
    with pytest.raises(DeadlineExceeded, match="client_timeout"):
        client(transport)[0].infer("m", {"x": [1.0]})
    transport, _ = scripted(*[httpx.ConnectError("refused")] * 2)
    with pytest.raises(Unavailable, match="unreachable"):
        client(transport, retries=1)[0].infer("m", {"x": [1.0]})
    transport, _ = scripted(httpx.ConnectError("refused"))
    assert client(transport)[0].live() is False


def test_backoff_is_full_jitter_capped():
    made, _ = client(scripted()[0], backoff_s=1.0, max_backoff_s=4.0)
    delays = [made.delay(attempt, None) for attempt in range(10) for _ in range(20)]
    assert all(0.0 <= d <= 4.0 for d in delays) and len(set(delays)) > 100


def test_positional_inputs_take_the_model_input_order():
    meta = (200, {"name": "m", "inputs": [{"name": "a"}, {"name": "b"}]})
    transport, seen = scripted(meta, OK, OK)
    made, _ = client(transport)
    made.infer("m", [np.zeros((1, 2), np.int64), np.ones(1, bool)])
    made.infer("m", [np.zeros((1, 2), np.int64), np.ones(1, bool)])  # metadata is cached
    body = seen[1].read().decode()
    assert '"name":"a"' in body.replace(" ", "") and '"datatype":"INT64"' in body.replace(" ", "")
    assert len(seen) == 3
    with pytest.raises(RequestError, match="takes 2 inputs"):
        made.infer("m", [1])


def test_tensors_round_trip_and_predict_posts_files(tmp_path):
    array = np.arange(6, dtype=np.float16).reshape(2, 3)
    np.testing.assert_array_equal(decode(encode("x", array)), array)
    assert encode("t", np.array(["a", "b"]))["datatype"] == "BYTES"
    with pytest.raises(ServerError, match="not a valid tensor"):
        decode({"name": "y", "datatype": "FP32", "shape": [3], "data": [1.0]})
    image = tmp_path / "a.png"
    image.write_bytes(b"\x89PNG")
    transport, seen = scripted((200, {"predictions": [{"label": "7"}]}), (200, {"predictions": []}))
    made, _ = client(transport)
    assert made.predict("digits", image) == [{"label": "7"}]
    assert seen[0].headers["Content-Type"] == "image/png" and seen[0].read() == b"\x89PNG"
    assert made.predict("lm", json={"inputs": ["hi"]}) == []
    with pytest.raises(RequestError, match="either data"):
        made.predict("lm")


def test_bad_client_settings_are_refused():
    with pytest.raises(RequestError, match="http://"):
        Client("127.0.0.1:8866")
    with pytest.raises(RequestError, match="retries"):
        Client("http://x", retries=-1)
