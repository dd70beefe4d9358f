"""Request bodies read defensively: a size cap checked before and while reading, a read deadline
(a client that trickles its body is cut off instead of holding a worker), JSON parsed to a 400;
JSON answers rendered by orjson.

orjson, not the standard library: JSON is most of a small model's request (a 28x28 LeNet input is
784 numbers of text; the stdlib parser took a third of the server's CPU at concurrency 32), orjson
parses it several times faster and writes output tensors straight from their NumPy arrays."""

from __future__ import annotations

import asyncio
from typing import Any

import orjson
from starlette.requests import Request
from starlette.responses import JSONResponse

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
        async with asyncio.timeout(timeout_s):  # not wait_for: that wraps the read in a task of its own
            return await _read(request, limit)
    except TimeoutError:
        raise ServeError(408, "body_timeout", f"the request body did not arrive within {timeout_s:g} s") from None


def parse_json(body: bytes) -> Any:
    """The body's JSON; a 400 ``bad_json`` for invalid JSON or UTF-8, NaN literals, or nesting over 1024."""
    try:
        return orjson.loads(body)
    except orjson.JSONDecodeError as exc:
        raise ServeError(400, "bad_json", f"the body is not valid JSON ({exc})") from None


class OrjsonResponse(JSONResponse):
    """A JSON answer; NumPy arrays and scalars in it are written directly (non-finite floats as null)."""

    def render(self, content: Any) -> bytes:
        return orjson.dumps(content, option=orjson.OPT_SERIALIZE_NUMPY)
