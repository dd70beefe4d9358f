"""The API key file: names, environments, limits and the SHA-256 of each key, never the key.

A key is 32 random bytes (``secrets.token_urlsafe``), so an unsalted SHA-256 cannot be reversed
by guessing; lookups compare digests with ``hmac.compare_digest``. The file is JSON, rewritten
atomically with mode 0600; a revoked key stays in it so the server can answer 403 "revoked"
instead of 401 "unknown". The server re-reads the file when it changes, so revocation needs no
restart.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import re
import secrets
import threading
from dataclasses import asdict, dataclass, field, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from paddlectl.framework.utils.fileio import atomic_write

from .errors import ServeConfigError as ConfigError

ENVS = ("dev", "test", "prod")
FORMAT = 1
KEY_PREFIX = "pdk_"
NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,63}")
_PER = {"s": 1.0, "sec": 1.0, "m": 60.0, "min": 60.0, "h": 3600.0, "hour": 3600.0}


@dataclass(frozen=True)
class Rate:
    """``tokens`` requests per ``per_s`` seconds; the bucket holds ``tokens`` (the allowed burst)."""

    tokens: float
    per_s: float

    def __str__(self) -> str:
        unit = {1.0: "s", 60.0: "min", 3600.0: "h"}[self.per_s]
        return f"{self.tokens:g}/{unit}"


@dataclass(frozen=True)
class KeyRecord:
    name: str
    env: str
    sha256: str
    created: str
    rate: Rate | None = None
    quota_per_day: int | None = None
    budget_per_day: float | None = None
    revoked: str | None = None
    """When the key was revoked (ISO time), None while it is valid."""

    def to_dict(self) -> dict[str, Any]:
        out = {k: v for k, v in asdict(self).items() if v is not None and k != "name"}
        if self.rate is not None:
            out["rate"] = str(self.rate)
        return out


@dataclass
class KeyFile:
    path: Path
    keys: dict[str, KeyRecord] = field(default_factory=dict)

    def find(self, key: str) -> KeyRecord | None:
        """The record whose hash matches ``key`` (every record is compared: no early-exit timing)."""
        digest = hash_key(key)
        found = None
        for record in self.keys.values():
            if hmac.compare_digest(record.sha256, digest):
                found = record
        return found


def hash_key(key: str) -> str:
    return hashlib.sha256(key.encode("utf-8", "surrogatepass")).hexdigest()


def new_key() -> str:
    return KEY_PREFIX + secrets.token_urlsafe(32)


def parse_rate(text: str) -> Rate:
    """``10/s``, ``600/min`` or ``1000/h``."""
    match = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*/\s*([a-z]+)\s*", str(text))
    if not match or match.group(2) not in _PER or float(match.group(1)) <= 0:
        raise ConfigError(f"rate {text!r} is not N/s, N/min or N/h with N > 0 (e.g. --rate 10/s)")
    return Rate(float(match.group(1)), _PER[match.group(2)])


def parse_daily(text: str, what: str, integer: bool) -> float:
    """``10000/day`` (a quota, whole requests) or ``5.00/day`` (a budget in the cost model's currency)."""
    number = r"\d+" if integer else r"\d+(?:\.\d+)?"
    match = re.fullmatch(rf"\s*({number})\s*(?:/\s*(?:day|d))?\s*", str(text))
    if not match:
        example = "--quota 10000/day" if integer else "--budget 5.00/day"
        raise ConfigError(f"{what} {text!r} is not a {'whole ' if integer else ''}number per day (e.g. {example})")
    return int(match.group(1)) if integer else float(match.group(1))


def check_name(name: str) -> str:
    if not NAME.fullmatch(name or ""):
        raise ConfigError(
            f"key name {name!r} must be 1-64 letters, digits, '_', '.' or '-', starting with a letter or digit"
        )
    return name


def check_env(env: str) -> str:
    if env not in ENVS:
        raise ConfigError(f"environment {env!r} is not one of {', '.join(ENVS)}")
    return env


def load(path: str | os.PathLike) -> KeyFile:
    """Read and validate a key file; a missing file is an empty one (``keys add`` creates it)."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return KeyFile(path)
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"cannot read the key file {str(path)!r}: {exc}") from None
    try:
        data = json.loads(text)
    except (ValueError, RecursionError):
        raise ConfigError(f"key file {str(path)!r} is not JSON; recreate it with `paddlectl serve keys add`") from None
    if not isinstance(data, dict) or data.get("format") != FORMAT or not isinstance(data.get("keys"), dict):
        raise ConfigError(
            f"key file {str(path)!r} is not a format-{FORMAT} key file (an object with 'format' and 'keys')"
        )
    return KeyFile(path, {name: _record(path, name, entry) for name, entry in data["keys"].items()})


def _record(path: Path, name: str, entry: Any) -> KeyRecord:
    where = f"key file {str(path)!r}, key {name!r}"
    if not isinstance(entry, dict) or set(entry) - {f for f in KeyRecord.__dataclass_fields__ if f != "name"}:
        raise ConfigError(f"{where}: expected an object with env, sha256, created and optional limits")
    digest = entry.get("sha256")
    if not (isinstance(digest, str) and re.fullmatch(r"[0-9a-f]{64}", digest)):
        raise ConfigError(f"{where}: 'sha256' must be 64 lowercase hex digits")
    try:
        check_name(name)
        check_env(entry.get("env"))
        rate = parse_rate(entry["rate"]) if entry.get("rate") is not None else None
        quota = parse_daily(entry["quota_per_day"], "quota", True) if entry.get("quota_per_day") is not None else None
        budget = (
            parse_daily(entry["budget_per_day"], "budget", False) if entry.get("budget_per_day") is not None else None
        )
    except ConfigError as exc:
        raise ConfigError(f"{where}: {exc}") from None
    return KeyRecord(
        name, entry["env"], digest, str(entry.get("created", "")), rate, quota, budget, entry.get("revoked")
    )


def save(keys: KeyFile) -> None:
    """Rewrite the file atomically, readable by its owner only (it lists who may call the server)."""
    data = {"format": FORMAT, "keys": {name: r.to_dict() for name, r in sorted(keys.keys.items())}}
    with atomic_write(keys.path, "w", encoding="utf-8", private=True) as handle:
        handle.write(json.dumps(data, indent=2) + "\n")


def add(path: str | os.PathLike, name: str, env: str, rate: str | None = None, quota: str | None = None,
        budget: str | None = None) -> tuple[KeyRecord, str]:  # fmt: skip
    """Create a key; returns its record and the key itself, which exists nowhere else afterwards."""
    record = KeyRecord(
        check_name(name), check_env(env), "", _now(),
        parse_rate(rate) if rate is not None else None,
        int(parse_daily(quota, "quota", True)) if quota is not None else None,
        parse_daily(budget, "budget", False) if budget is not None else None,
    )  # fmt: skip
    keys = load(path)
    if name in keys.keys:
        state = "a revoked key" if keys.keys[name].revoked else "a key"
        raise ConfigError(f"{state} named {name!r} is already in {str(path)!r}; pick another name")
    key = new_key()
    keys.keys[name] = replace(record, sha256=hash_key(key))
    save(keys)
    return keys.keys[name], key


def revoke(path: str | os.PathLike, name: str) -> KeyRecord:
    keys = load(path)
    if name not in keys.keys:
        known = ", ".join(sorted(keys.keys)) or "none"
        raise ConfigError(f"no key named {name!r} in {str(path)!r} (known: {known})")
    if keys.keys[name].revoked is None:
        keys.keys[name] = replace(keys.keys[name], revoked=_now())
        save(keys)
    return keys.keys[name]


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


class KeyWatcher:
    """The key file as the server sees it: re-read when its size or mtime changes (revocation
    takes effect on the next request); a broken rewrite keeps the last good version."""

    def __init__(self, path: str | os.PathLike) -> None:
        self.path = Path(path)
        self._lock = threading.Lock()
        self._stamp = self._stat()
        self._keys = load(self.path)
        if not self.path.is_file():
            raise ConfigError(
                f"key file {str(self.path)!r} does not exist; create a key with `paddlectl serve keys add`"
            )

    def _stat(self) -> tuple[int, int] | None:
        try:
            st = self.path.stat()
        except OSError:
            return None
        return st.st_mtime_ns, st.st_size

    def current(self) -> KeyFile:
        stamp = self._stat()
        if stamp == self._stamp:
            return self._keys
        with self._lock:
            if stamp != self._stamp and stamp is not None:
                try:
                    self._keys = load(self.path)
                except ConfigError:
                    return self._keys  # mid-edit by hand: keep serving with the last good file
                self._stamp = stamp
        return self._keys
