"""A lean HTTP/1.1 keep-alive connection for ``serve bench``: prebuilt requests, the least parsing.

The load generator shares the machine with the server it measures, so every CPU cycle it spends
is taken from the server: a general client (httpx: ~5 ms of CPU a request, measured on LeNet at
concurrency 32) capped every server near the same rate and pulled all ratios toward 1. This one
sends a request built once from bytes, reads the status line and the few headers that frame the
body (``Content-Length``, chunked ``Transfer-Encoding``, ``Connection: close``), and leaves the
body to the caller. Each connection is used by one worker at a time; a connection the server
closed while it was idle is reopened and the request sent again, as every keep-alive client does.
"""

from __future__ import annotations

import asyncio
import ssl
from dataclasses import dataclass
from urllib.parse import urlsplit


class ProtocolError(Exception):
    """The server's answer is not HTTP/1.1 this client can read."""


@dataclass(frozen=True)
class Origin:
    host: str
    port: int
    tls: bool

    @classmethod
    def parse(cls, url: str) -> Origin:
        parts = urlsplit(url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ValueError(f"{url!r} is not an http:// or https:// URL")
        tls = parts.scheme == "https"
        return cls(parts.hostname, parts.port or (443 if tls else 80), tls)

    def request_head(self, method: str, path: str, headers: dict[str, str]) -> bytes:
        """The request line and headers up to (not including) Content-Length and the blank line."""
        lines = [f"{method} {path} HTTP/1.1", f"Host: {self.host}:{self.port}"]
        lines += [f"{name}: {value}" for name, value in headers.items()]
        return ("\r\n".join(lines) + "\r\n").encode("latin-1")


def request_bytes(head: bytes, extra_headers: bytes, body: bytes) -> bytes:
    """``head`` (from ``Origin.request_head``), per-request header lines, then the framed body."""
    return b"%s%sContent-Length: %d\r\n\r\n%s" % (head, extra_headers, len(body), body)


class Connection:
    def __init__(self, origin: Origin) -> None:
        self.origin = origin
        self._reader: asyncio.StreamReader | None = None
        self._writer: asyncio.StreamWriter | None = None
        self._used = False  # answered at least once: a closed socket may be the server's idle timeout

    async def _open(self) -> None:
        context = ssl.create_default_context() if self.origin.tls else None
        self._reader, self._writer = await asyncio.open_connection(self.origin.host, self.origin.port, ssl=context)
        self._used = False

    def close(self) -> None:
        if self._writer is not None:
            self._writer.close()
        self._reader = self._writer = None

    async def exchange(self, request: bytes) -> tuple[int, dict[bytes, bytes], bytes]:
        """Send ``request`` and return (status, headers by lowercased name, body). On any
        failure the connection is closed, so the next call opens a new one."""
        try:
            if self._writer is None:
                await self._open()
            self._writer.write(request)
            try:
                head = await self._reader.readuntil(b"\r\n\r\n")
            except (asyncio.IncompleteReadError, ConnectionResetError) as exc:
                if getattr(exc, "partial", b"") or not self._used:
                    raise
                self.close()  # the server closed the idle connection before reading this request
                await self._open()
                self._writer.write(request)
                head = await self._reader.readuntil(b"\r\n\r\n")
            status, headers, body = await self._answer(head)
        except BaseException:
            self.close()
            raise
        self._used = True
        if headers.get(b"connection", b"").lower() == b"close":
            self.close()
        return status, headers, body

    async def _answer(self, head: bytes) -> tuple[int, dict[bytes, bytes], bytes]:
        status_line, *fields = head[:-4].split(b"\r\n")
        parts = status_line.split(None, 2)
        if len(parts) < 2 or not parts[0].startswith(b"HTTP/1.") or not parts[1].isdigit():
            raise ProtocolError(f"not an HTTP/1.1 status line: {status_line[:80]!r}")
        headers = {}
        for field in fields:
            name, sep, value = field.partition(b":")
            if sep:
                headers[name.strip().lower()] = value.strip()
        if b"content-length" in headers:
            body = await self._reader.readexactly(int(headers[b"content-length"]))
        elif headers.get(b"transfer-encoding", b"").lower() == b"chunked":
            body = await self._chunked()
        else:
            raise ProtocolError("an answer without Content-Length or chunked Transfer-Encoding")
        return int(parts[1]), headers, body

    async def _chunked(self) -> bytes:
        chunks = []
        while True:
            size = int((await self._reader.readuntil(b"\r\n")).split(b";")[0], 16)
            if size == 0:
                await self._trailer()
                return b"".join(chunks)
            chunks.append(await self._reader.readexactly(size))
            await self._reader.readexactly(2)

    async def _trailer(self) -> None:
        while await self._reader.readuntil(b"\r\n") != b"\r\n":
            pass
