"""``paddlectl.serving.Client``: call a ``paddlectl serve`` server (or any KServe v2 server).

Retries only what is safe and likely to pass later: 429, 503 and 504 answers and connections
that were never made, with full-jitter exponential backoff (so many clients do not retry in
step), never sooner than the server's Retry-After. A Retry-After longer than ``max_backoff_s``
(a quota that resets at midnight) is raised at once instead of slept through. Every failure is a
``ClientError`` subclass carrying the server's stable error code.
"""

from __future__ import annotations

import mimetypes
import random
import time
import uuid
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import httpx
import numpy as np

from paddlectl.framework.errors import PaddlectlError

from .protocol import BY_DTYPE, DATATYPES

RETRY_STATUSES = frozenset({429, 503, 504})
NEVER_SENT = (httpx.ConnectError, httpx.ConnectTimeout, httpx.PoolTimeout)


class ClientError(PaddlectlError):
    """A request that failed: the HTTP status (0: no answer), the server's code and message."""

    def __init__(self, status: int, code: str, message: str, retry_after_s: float | None = None) -> None:
        super().__init__(f"{status or 'no answer'} {code}: {message}")
        self.status, self.code, self.message, self.retry_after_s = status, code, message, retry_after_s


class AuthError(ClientError):
    """401 (no or unknown key) or 403 (revoked, or the wrong environment's key)."""


class RateLimited(ClientError):
    """429: rate limit, daily quota or budget; ``retry_after_s`` says when to try again."""


class Unavailable(ClientError):
    """503 (queue full, not ready) or no connection at all."""


class DeadlineExceeded(ClientError):
    """504: the request was not answered within its deadline."""


class RequestError(ClientError):
    """Another 4xx: the request itself is wrong (shape, datatype, body size...)."""


class ServerError(ClientError):
    """A 5xx other than 503/504."""


def error_for(response: httpx.Response) -> ClientError:
    """The typed error of a non-2xx answer, from its ``{"error": {"code", "message"}}`` body."""
    try:
        error = response.json().get("error") or {}
    except (ValueError, AttributeError):
        error = {}
    if not isinstance(error, dict):
        error = {}
    code = str(error.get("code") or f"http_{response.status_code}")
    message = str(error.get("message") or response.text[:200] or response.reason_phrase)
    status = response.status_code
    kind = {401: AuthError, 403: AuthError, 429: RateLimited, 503: Unavailable, 504: DeadlineExceeded}.get(status)
    kind = kind or (RequestError if status < 500 else ServerError)
    return kind(status, code, message, retry_after(response))


def retry_after(response: httpx.Response) -> float | None:
    """Retry-After in seconds (the delta form; an HTTP date is not what this server sends)."""
    value = response.headers.get("Retry-After")
    try:
        return max(0.0, float(value)) if value is not None else None
    except ValueError:
        return None


class Client:
    """A synchronous client; one per thread, or share one (httpx's pool is thread-safe)."""

    def __init__(self, url: str, key: str | None = None, timeout: float = 30.0, retries: int = 3,
                 backoff_s: float = 0.1, max_backoff_s: float = 10.0, transport: httpx.BaseTransport | None = None,
                 sleep: Callable[[float], None] = time.sleep, rng: random.Random | None = None) -> None:  # fmt: skip
        if not str(url).startswith(("http://", "https://")):
            raise RequestError(0, "bad_url", f"url {url!r} must start with http:// or https://")
        if retries < 0 or backoff_s < 0 or max_backoff_s < 0 or timeout <= 0:
            raise RequestError(0, "bad_settings", "retries, backoff_s and max_backoff_s must be >= 0 and timeout > 0")
        headers = {"Authorization": f"Bearer {key}"} if key else {}
        self._http = httpx.Client(base_url=str(url).rstrip("/"), headers=headers, timeout=timeout, transport=transport)
        self.retries, self.backoff_s, self.max_backoff_s = retries, backoff_s, max_backoff_s
        self._sleep, self._rng = sleep, rng or random.Random()
        self._specs: dict[str, list[str]] = {}

    def __enter__(self) -> Client:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        self._http.close()

    def delay(self, attempt: int, after: float | None) -> float:
        """Full jitter: uniform in [0, backoff * 2**attempt] (capped), added to any Retry-After."""
        jitter = self._rng.uniform(0.0, min(self.max_backoff_s, self.backoff_s * 2**attempt))
        return (after or 0.0) + jitter

    def request(self, method: str, path: str, **kwargs: Any) -> httpx.Response:
        """One call with retries; returns the 2xx response or raises its ``ClientError``."""
        attempt = 0
        while True:
            last = attempt >= self.retries
            try:
                response = self._http.request(method, path, **kwargs)
            except NEVER_SENT as exc:
                if last:
                    raise Unavailable(0, "unreachable", f"cannot connect to {self._http.base_url} ({exc})") from None
                self._sleep(self.delay(attempt, None))
                attempt += 1
                continue
            except httpx.TimeoutException as exc:
                raise DeadlineExceeded(0, "client_timeout", f"no answer within the client's timeout ({exc})") from None
            except httpx.HTTPError as exc:
                raise Unavailable(0, "transport_error", f"{type(exc).__name__}: {exc}") from None
            if response.is_success:
                return response
            error = error_for(response)
            waits = error.retry_after_s is not None and error.retry_after_s > self.max_backoff_s
            if last or response.status_code not in RETRY_STATUSES or waits:
                raise error
            self._sleep(self.delay(attempt, error.retry_after_s))
            attempt += 1

    # ----- the protocol ---------------------------------------------------------------------
    def live(self) -> bool:
        return self._probe("/v2/health/live")

    def ready(self) -> bool:
        return self._probe("/v2/health/ready")

    def _probe(self, path: str) -> bool:
        try:
            return self._http.get(path).is_success
        except httpx.HTTPError:
            return False

    def metadata(self, model: str) -> dict[str, Any]:
        return self.request("GET", f"/v2/models/{model}").json()

    def infer(self, model: str, inputs: Mapping[str, Any] | Sequence[Any], outputs: Sequence[str] | None = None,
              request_id: str | None = None) -> dict[str, np.ndarray]:  # fmt: skip
        """Run ``model`` on arrays (by input name, or in the model's input order); outputs by name."""
        if not isinstance(inputs, Mapping):
            names = self._input_names(model)
            if len(inputs) != len(names):
                raise RequestError(
                    0, "bad_input_name", f"{model!r} takes {len(names)} inputs {names}, got {len(inputs)}"
                )
            inputs = dict(zip(names, inputs, strict=True))
        body: dict[str, Any] = {
            "id": request_id or uuid.uuid4().hex,
            "inputs": [encode(n, a) for n, a in inputs.items()],
        }
        if outputs is not None:
            body["outputs"] = [{"name": n} for n in outputs]
        answer = self.request("POST", f"/v2/models/{model}/infer", json=body).json()
        return {o["name"]: decode(o) for o in answer.get("outputs", [])}

    def predict(self, model: str, data: bytes | str | Path | None = None, *, json: Any = None,
                content_type: str | None = None) -> Any:  # fmt: skip
        """The task-level route: an upload (bytes or a file path) or a JSON body; returns its records."""
        if (data is None) == (json is None):
            raise RequestError(0, "bad_request", "predict takes either data (bytes or a file path) or json=, not both")
        path = f"/v1/models/{model}:predict"
        if json is not None:
            answer = self.request("POST", path, json=json).json()
        else:
            if isinstance(data, str | Path):
                content_type = content_type or mimetypes.guess_type(str(data))[0]
                data = _read(Path(data))
            headers = {"Content-Type": content_type or "application/octet-stream"}
            answer = self.request("POST", path, content=data, headers=headers).json()
        return answer.get("predictions", answer) if isinstance(answer, dict) else answer

    def _input_names(self, model: str) -> list[str]:
        if model not in self._specs:
            self._specs[model] = [i["name"] for i in self.metadata(model).get("inputs", [])]
        return self._specs[model]


def encode(name: str, value: Any) -> dict[str, Any]:
    """One protocol input tensor: datatype from the array's dtype, data flat in row-major order."""
    array = np.asarray(value)
    if array.dtype.kind in "US":
        array = array.astype(object)
    if array.dtype.name not in BY_DTYPE:
        raise RequestError(0, "bad_datatype", f"input {name!r}: dtype {array.dtype} has no protocol datatype")
    return {
        "name": name,
        "shape": list(array.shape),
        "datatype": BY_DTYPE[array.dtype.name],
        "data": array.ravel().tolist(),
    }


def decode(output: Mapping[str, Any]) -> np.ndarray:
    """A protocol output tensor as an array of its datatype and shape."""
    try:
        return np.asarray(output["data"], dtype=DATATYPES[output["datatype"]]).reshape(output["shape"])
    except (KeyError, ValueError, TypeError) as exc:
        raise ServerError(200, "bad_response", f"output {output.get('name')!r} is not a valid tensor ({exc})") from None


def _read(path: Path) -> bytes:
    try:
        return path.read_bytes()
    except OSError as exc:
        raise RequestError(0, "bad_file", f"cannot read {str(path)!r}: {exc}") from None
