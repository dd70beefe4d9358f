"""Who may call the server: API key checks and the per-key limits, as one ``Gate``.

The server calls ``admit`` before a request does any work and ``settle`` with its measured cost
afterwards. Every refusal is a ``ServeError`` whose code is stable: ``missing_key``/``bad_key``
(401), ``revoked_key``/``wrong_env`` (403), ``rate_limited``/``quota_exceeded``/``budget_exceeded``
(429 with Retry-After). Nothing here logs or stores a presented key.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from .errors import ServeConfigError, ServeError
from .keys import ENVS, KeyWatcher, check_env
from .limits import Limits, retry_after_header

ANONYMOUS = "anonymous"
CostOf = Callable[[str, int], float]
"""The server's cost model: the cost of a request of ``batch`` samples to ``model`` (the eval
harness's machine price over the measured throughput)."""


@dataclass(frozen=True)
class Admission:
    """An admitted request: which key (``anonymous`` without a key file), its environment, and the
    budget reservation ``settle`` corrects."""

    key_name: str
    key_env: str | None
    estimate: float = 0.0
    day: str = ""


def usage_path_for(keys_path: Path) -> Path:
    """Where a key file's daily usage is kept: beside it (``keys.json`` -> ``keys.usage.json``)."""
    return keys_path.with_name(f"{keys_path.stem}.usage.json")


class Gate:
    """API keys and limits for one server; without a key file every request is admitted."""

    def __init__(self, keys_path: str | os.PathLike | None, env: str | None, cost_of: CostOf | None = None,
                 limits: Limits | None = None) -> None:  # fmt: skip
        self.env = check_env(env) if env is not None else None
        self.cost_of = cost_of
        if keys_path is None:
            if env is not None:
                raise ServeConfigError(f"--env {env} needs --keys FILE: environments belong to API keys")
            self.keys, self.limits = None, None
            return
        self.keys = KeyWatcher(keys_path)
        self.limits = limits if limits is not None else Limits(usage_path_for(Path(keys_path)))

    def admit(self, authorization: str | None, model: str) -> Admission:
        if self.keys is None:
            return Admission(ANONYMOUS, None)
        key = _bearer(authorization)
        record = self.keys.current().find(key)
        if record is None:
            raise ServeError(401, "bad_key", "the API key is not known to this server; check the key or ask for a new one",
                             {"WWW-Authenticate": 'Bearer error="invalid_token"'})  # fmt: skip
        if record.revoked is not None:
            raise ServeError(
                403, "revoked_key", f"key {record.name!r} was revoked at {record.revoked}; ask for a new one"
            )
        if self.env is not None and record.env != self.env:
            raise ServeError(
                403, "wrong_env", f"key {record.name!r} is a {record.env} key; this server accepts {self.env} keys only"
            )
        estimate = (
            float(self.cost_of(model, 1)) if self.cost_of is not None and record.budget_per_day is not None else 0.0
        )
        refusal = self.limits.reserve(record, estimate)
        if refusal is not None:
            raise ServeError(
                429, refusal.code, refusal.message, {"Retry-After": retry_after_header(refusal.retry_after_s)}
            )
        return Admission(record.name, record.env, estimate, self.limits.day)

    def settle(self, admission: Admission, cost: float) -> None:
        """Charge the measured ``cost`` of an admitted request to its key's daily budget."""
        if self.limits is not None and admission.day:  # a keyless server's admissions have no day
            self.limits.settle(admission.key_name, admission.day, admission.estimate, float(cost))

    def close(self) -> None:
        """Write the day's usage (graceful shutdown)."""
        if self.limits is not None:
            self.limits.flush()


def _bearer(authorization: str | None) -> str:
    if not authorization:
        raise ServeError(401, "missing_key", "this server needs an API key: send 'Authorization: Bearer KEY'",
                         {"WWW-Authenticate": "Bearer"})  # fmt: skip
    scheme, _, key = authorization.strip().partition(" ")
    if scheme.lower() != "bearer" or not key.strip():
        raise ServeError(401, "bad_key", "the Authorization header must be 'Bearer KEY'",
                         {"WWW-Authenticate": 'Bearer error="invalid_request"'})  # fmt: skip
    return key.strip()


__all__ = ["ANONYMOUS", "ENVS", "Admission", "Gate", "usage_path_for"]
