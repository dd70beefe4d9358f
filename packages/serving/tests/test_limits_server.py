"""Keys and limits on a real `paddlectl serve` process: 401/403/429, revocation, no key in the log."""

from __future__ import annotations

import httpx
import numpy as np
import pytest
from PIL import Image
from servers import ServerProcess

from paddlectl.serving import keys
from paddlectl.serving.bench import sample_body
from paddlectl.serving.client import AuthError, Client, RateLimited


@pytest.fixture(scope="module")
def served(lenet, tmp_path_factory):
    tmp = tmp_path_factory.mktemp("keys")
    path = tmp / "keys.json"
    made = {name: keys.add(path, name, env, **limits)[1] for name, env, limits in [
        ("burst", "prod", {"rate": "2/min"}), ("steady", "prod", {}), ("dev1", "dev", {}), ("gone", "prod", {}),
        ("daily", "prod", {"quota": "3/day"}), ("late", "prod", {}),
    ]}  # fmt: skip
    keys.revoke(path, "gone")
    server = ServerProcess({"digits": lenet}, tmp, args=["--keys", str(path), "--env", "prod"])
    with Client(server.url, key=made["steady"]) as client:
        meta = client.metadata("digits")
    server.body, server.input = sample_body(meta), meta["inputs"][0]["name"]
    yield server, path, made
    server.stop()


def post(server, key=None, header=None):
    headers = {"Authorization": header if header is not None else f"Bearer {key}"} if key or header else {}
    return httpx.post(f"{server.url}/v2/models/digits/infer", json=server.body, headers=headers, timeout=30)


def refusal(response):
    return response.status_code, response.json()["error"]["code"]


def test_refusals_have_status_code_and_reason(served):
    server, _, made = served
    assert refusal(post(server)) == (401, "missing_key")
    assert refusal(post(server, header="Token " + made["steady"])) == (401, "bad_key")
    assert refusal(post(server, "pdk_" + "A" * 43)) == (401, "bad_key")
    assert refusal(post(server, made["gone"])) == (403, "revoked_key")
    wrong = post(server, made["dev1"])
    assert refusal(wrong) == (403, "wrong_env") and "dev key" in wrong.json()["error"]["message"]
    assert post(server, made["steady"]).status_code == 200
    assert refusal(httpx.get(f"{server.url}/v2/models/digits", timeout=10)) == (401, "missing_key")


def test_a_burst_past_the_rate_limit_is_refused_while_another_key_is_served(served):
    server, _, made = served
    burst, steady = [], []
    for _ in range(6):
        burst.append(post(server, made["burst"]))
        steady.append(post(server, made["steady"]))
    assert [r.status_code for r in burst] == [200, 200, 429, 429, 429, 429]
    assert all(r.status_code == 200 for r in steady)
    limited = burst[-1]
    assert limited.json()["error"]["code"] == "rate_limited" and 1 <= int(limited.headers["Retry-After"]) <= 30


def test_daily_quota_answers_429_until_midnight(served):
    server, _, made = served
    answers = [post(server, made["daily"]) for _ in range(4)]
    assert [r.status_code for r in answers] == [200, 200, 200, 429]
    assert answers[-1].json()["error"]["code"] == "quota_exceeded" and int(answers[-1].headers["Retry-After"]) >= 1


def test_revoking_a_key_takes_effect_without_a_restart(served):
    server, path, made = served
    assert post(server, made["late"]).status_code == 200
    keys.revoke(path, "late")
    assert refusal(post(server, made["late"])) == (403, "revoked_key")


def test_client_infers_predicts_and_raises_typed_errors_from_the_server(served, tmp_path):
    server, _, made = served
    with Client(server.url, key=made["steady"]) as client:
        out = client.infer("digits", {server.input: np.full((2, 1, 28, 28), 0.5, np.float32)})
        assert next(iter(out.values())).shape[0] == 2
        image = tmp_path / "seven.png"
        Image.fromarray(np.full((28, 28), 200, np.uint8)).save(image)
        (record,) = client.predict("digits", image)
        assert set(record) >= {"class_id", "label", "score"} and 0.0 <= record["score"] <= 1.0
    with pytest.raises(AuthError, match="wrong_env"), Client(server.url, key=made["dev1"]) as client:
        client.infer("digits", {server.input: np.zeros((1, 1, 28, 28), np.float32)})
    with pytest.raises(RateLimited) as info, Client(server.url, key=made["burst"], max_backoff_s=0.5) as client:
        client.infer("digits", {server.input: np.zeros((1, 1, 28, 28), np.float32)})
    assert info.value.retry_after_s >= 1


def test_the_log_names_keys_but_never_holds_one(served):
    server, _, made = served
    log = server.log.read_text()
    assert "key=steady" in log and "env=prod" in log
    for key in made.values():
        assert key not in log and key[4:20] not in log
