"""Retry with exponential backoff and jitter for a shared SQLite tracking store.

Several evaluations logging to one ``mlflow.db`` collide on SQLite's single writer lock
("database is locked"); waiting and retrying the whole (idempotent) logging step loses nothing.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable
from typing import TypeVar

T = TypeVar("T")

TRANSIENT = ("database is locked", "database table is locked", "database schema has changed")


def is_transient(exc: BaseException) -> bool:
    """True when ``exc`` (or anything it was raised from) is a lock collision worth retrying."""
    seen: BaseException | None = exc
    while seen is not None:
        if any(marker in str(seen).lower() for marker in TRANSIENT):
            return True
        seen = seen.__cause__ or seen.__context__
    return False


def with_backoff(
    action: Callable[[], T],
    *,
    attempts: int = 10,
    base_s: float = 0.1,
    cap_s: float = 3.0,
    retry_if: Callable[[BaseException], bool] = is_transient,
    sleep: Callable[[float], None] = time.sleep,
) -> T:
    """Call ``action`` until it succeeds, retrying transient failures with full-jitter backoff."""
    if attempts < 1:
        raise ValueError(f"attempts must be at least 1, got {attempts}")
    for attempt in range(attempts):
        try:
            return action()
        except Exception as exc:
            if attempt == attempts - 1 or not retry_if(exc):
                raise
            sleep(random.uniform(0, min(cap_s, base_s * 2**attempt)))
    raise AssertionError("unreachable: the last attempt either returned or raised")
