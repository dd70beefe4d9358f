"""Checks on every output before it leaves the server, and the review queue failures go to.

A record that fails a check is still answered (the caller asked for it), but a copy goes to the
review queue, a JSON-lines file a person works through: the seed's human takeover. Checks: the
task's schema (fields and types), value ranges (``score`` is a probability by default; every
number finite), and optionally a regex every text field must match and words none may contain.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import re
import threading
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from .errors import ServeConfigError

NUMBER = (int, float)
SCHEMAS: dict[str, dict[str, type | tuple[type, ...]]] = {
    "vision.cls": {"class_id": int, "label": str, "score": NUMBER, "topk": list},
    "ocr.rec": {"label": str, "score": NUMBER},
    "ocr.cls": {"label": str, "score": NUMBER},
}
"""Fields every record of a task has (what its ``postprocess`` returns); other tasks are checked
for JSON objects, ranges and text only, plus what ``checks.require`` adds."""
TYPES: dict[str, type | tuple[type, ...]] = {
    "int": int,
    "number": NUMBER,
    "str": str,
    "list": list,
    "dict": dict,
    "bool": bool,
}
DEFAULT_RANGES = {"score": (0.0, 1.0)}
DEFAULT_TEXT_FIELDS = ("label", "text")
SETTINGS = {"require", "ranges", "regex", "deny", "text_fields", "max_text_len"}
SECRET_FIELDS = {"authorization", "api_key", "apikey", "key", "token", "password", "secret", "cookie"}


class OutputCheck:
    """The checks of one model, built from the task name and the model's ``checks`` settings."""

    def __init__(self, task: str, settings: Mapping[str, Any] | None = None) -> None:
        settings = dict(settings or {})
        unknown = sorted(set(settings) - SETTINGS)
        if unknown:
            raise ServeConfigError(f"checks: unknown settings {unknown}; known: {sorted(SETTINGS)}")
        self.task = task
        self.schema = dict(SCHEMAS.get(task, {}))
        for field, name in _mapping(settings, "require").items():
            if name not in TYPES:
                raise ServeConfigError(f"checks.require.{field}: type {name!r} is not one of {sorted(TYPES)}")
            self.schema[str(field)] = TYPES[name]
        self.ranges = dict(DEFAULT_RANGES)
        for field, bounds in _mapping(settings, "ranges").items():
            if not (isinstance(bounds, Sequence) and len(bounds) == 2 and all(_is_number(b) for b in bounds)
                    and bounds[0] <= bounds[1]):  # fmt: skip
                raise ServeConfigError(
                    f"checks.ranges.{field}: expected [low, high] numbers with low <= high, got {bounds!r}"
                )
            self.ranges[str(field)] = (float(bounds[0]), float(bounds[1]))
        try:
            self.regex = re.compile(settings["regex"]) if settings.get("regex") is not None else None
        except (re.error, TypeError) as exc:
            raise ServeConfigError(f"checks.regex: {settings['regex']!r} is not a regular expression ({exc})") from None
        self.deny = [w.casefold() for w in _strings(settings, "deny")]
        self.text_fields = set(_strings(settings, "text_fields") or DEFAULT_TEXT_FIELDS)
        self.max_text_len = settings.get("max_text_len")
        if self.max_text_len is not None and not (isinstance(self.max_text_len, int) and self.max_text_len > 0):
            raise ServeConfigError(f"checks.max_text_len must be a positive integer, got {self.max_text_len!r}")

    def problems(self, records: Sequence[Any]) -> list[str]:
        """One line per problem, naming the record and field; empty when every record passes."""
        out: list[str] = []
        for i, record in enumerate(records):
            if not isinstance(record, Mapping):
                out.append(f"record {i}: expected an object, got {type(record).__name__}")
                continue
            for field, kind in self.schema.items():
                value = record.get(field)
                if field not in record:
                    out.append(f"record {i}: missing field {field!r}")
                elif not isinstance(value, kind) or (kind is not bool and isinstance(value, bool)):
                    out.append(f"record {i}: field {field!r} is {type(value).__name__}, not {_type_name(kind)}")
            self._walk(record, f"record {i}", out)
        return out

    def _walk(self, value: Any, where: str, out: list[str], field: str | None = None) -> None:
        if isinstance(value, Mapping):
            for k, v in value.items():
                self._walk(v, f"{where}.{k}", out, str(k))
        elif isinstance(value, list | tuple):
            for j, v in enumerate(value):
                self._walk(v, f"{where}[{j}]", out, field)
        elif _is_number(value):
            if not math.isfinite(value):
                out.append(f"{where}: {value} is not finite")
            elif field in self.ranges and not self.ranges[field][0] <= value <= self.ranges[field][1]:
                low, high = self.ranges[field]
                out.append(f"{where}: {value:g} is outside [{low:g}, {high:g}]")
        elif isinstance(value, str) and field in self.text_fields:
            self._text(value, where, out)

    def _text(self, text: str, where: str, out: list[str]) -> None:
        if self.max_text_len is not None and len(text) > self.max_text_len:
            out.append(f"{where}: text of {len(text)} characters is over {self.max_text_len}")
        if self.regex is not None and not self.regex.fullmatch(text):
            out.append(f"{where}: {text[:80]!r} does not match {self.regex.pattern!r}")
        folded = text.casefold()
        for word in self.deny:
            if word in folded:
                out.append(f"{where}: contains the denied word {word!r}")


class ReviewQueue:
    """A JSON-lines file of outputs a person should look at; each entry is one ``write`` of one
    line to a file opened with O_APPEND (0600), so concurrent writers never interleave. Fields named
    like credentials are replaced by "[redacted]"; payloads over ``max_bytes`` keep a head and a hash."""

    def __init__(self, path: str | os.PathLike, max_bytes: int = 65536) -> None:
        self.path = Path(path)
        self.max_bytes = max_bytes
        self._lock = threading.Lock()
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise ServeConfigError(f"review queue {str(self.path)!r}: cannot create its folder ({exc})") from None

    def put(self, request_id: str, model: str, reason: str | Sequence[str], payload: Any) -> None:
        entry = {
            "time": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
            "request_id": str(request_id),
            "model": str(model),
            "reasons": [reason] if isinstance(reason, str) else [str(r) for r in reason],
            "payload": self._bounded(_redact(payload)),
        }
        line = (json.dumps(entry, ensure_ascii=False, default=str) + "\n").encode("utf-8")
        with self._lock:
            fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
            try:
                os.write(fd, line)
            finally:
                os.close(fd)

    def _bounded(self, payload: Any) -> Any:
        text = json.dumps(payload, ensure_ascii=False, default=str)
        data = text.encode("utf-8")
        if len(data) <= self.max_bytes:
            return payload
        return {"truncated": True, "bytes": len(data), "sha256": hashlib.sha256(data).hexdigest(), "head": text[:1024]}

    def entries(self) -> list[dict[str, Any]]:
        """The queue's entries, oldest first (for review tools and tests)."""
        try:
            lines = self.path.read_text(encoding="utf-8").splitlines()
        except FileNotFoundError:
            return []
        return [json.loads(line) for line in lines if line.strip()]


def _redact(value: Any) -> Any:
    if isinstance(value, Mapping):
        return {k: "[redacted]" if str(k).casefold() in SECRET_FIELDS else _redact(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_redact(v) for v in value]
    return value


def _mapping(settings: Mapping[str, Any], name: str) -> Mapping[str, Any]:
    value = settings.get(name) or {}
    if not isinstance(value, Mapping):
        raise ServeConfigError(f"checks.{name} must be a mapping, got {type(value).__name__}")
    return value


def _strings(settings: Mapping[str, Any], name: str) -> list[str]:
    value = settings.get(name) or []
    if not (isinstance(value, list) and all(isinstance(v, str) and v for v in value)):
        raise ServeConfigError(f"checks.{name} must be a list of non-empty strings, got {value!r}")
    return value


def _is_number(value: Any) -> bool:
    return isinstance(value, NUMBER) and not isinstance(value, bool)


def _type_name(kind: type | tuple[type, ...]) -> str:
    return "number" if kind == NUMBER else kind.__name__
