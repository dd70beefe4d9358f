"""Request bodies read defensively: a size cap checked before and while reading, a read deadline
(a client that trickles its body is cut off instead of holding a worker), JSON parsed to a 400."""

from __future__ import annotations

import asyncio
import json
from typing import Any

from starlette.requests import Request

from .errors import ServeError


def _too_large(limit: int) -> ServeError:
    return ServeError(413, "body_too_large", f"the request body is over {limit} bytes (server.max_body_bytes)")


async def _read(request: Request, limit: int) -> bytes:
    declared = request.headers.get("content-length")
    if declared is not None and (not declared.isdigit() or int(declared) > limit):
        raise (
            _too_large(limit)
            if declared.isdigit()
            else ServeError(400, "bad_request", "Content-Length is not a number")
        )
    chunks, size = [], 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > limit:
            raise _too_large(limit)
        chunks.append(chunk)
    return b"".join(chunks)


async def read_body(request: Request, limit: int, timeout_s: float) -> bytes:
    """The whole body, at most ``limit`` bytes, read within ``timeout_s`` seconds."""
    try:
        return await asyncio.wait_for(_read(request, limit), timeout_s)
    except TimeoutError:
        raise ServeError(408, "body_timeout", f"the request body did not arrive within {timeout_s:g} s") from None


def parse_json(body: bytes) -> Any:
    try:
        return json.loads(body)
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ServeError(400, "bad_json", f"the body is not valid JSON ({exc})") from None
    except RecursionError:
        raise ServeError(400, "bad_json", "the JSON body nests too deeply") from None
