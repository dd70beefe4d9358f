"""The bench's lean HTTP/1.1 connection against a scripted server: framing by Content-Length and by
chunks, ``Connection: close``, and a keep-alive connection the server closed while it was idle."""

from __future__ import annotations

import asyncio

import pytest

from paddlectl.serving.http1 import Connection, Origin, ProtocolError, request_bytes


def run_against(answers: list[bytes], requests: int, close_after_first: bool = False):
    """Serve ``answers`` in order (one per request read, each on the connection it came on); returns
    what the client got for ``requests`` exchanges and how many connections the server saw."""
    seen = []

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        seen.append(writer)
        while answers:
            try:
                head = await reader.readuntil(b"\r\n\r\n")
            except asyncio.IncompleteReadError:  # the client closed this connection
                break
            length = int(next(h for h in head.split(b"\r\n") if h.lower().startswith(b"content-length")).split(b":")[1])
            await reader.readexactly(length)
            writer.write(answers.pop(0))
            await writer.drain()
            if close_after_first:  # like an idle keep-alive timeout, before the next request
                writer.close()
                return
        writer.close()

    async def main():
        server = await asyncio.start_server(handle, "127.0.0.1", 0)
        origin = Origin.parse(f"http://127.0.0.1:{server.sockets[0].getsockname()[1]}")
        connection = Connection(origin)
        got = []
        for i in range(requests):
            request = request_bytes(origin.request_head("POST", "/x", {"A": "b"}), b"", b"body %d" % i)
            if close_after_first and i:
                await asyncio.sleep(0.05)  # the server's close has arrived
            got.append(await connection.exchange(request))
        connection.close()
        server.close()
        return got

    return asyncio.run(main()), len(seen)


def test_answers_framed_by_length_and_by_chunks_share_one_connection():
    plain = b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\nX-Request-Id: R1\r\n\r\nhello"
    chunked = b"HTTP/1.1 404 Not Found\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n2;x=y\r\nde\r\n0\r\n\r\n"
    got, connections = run_against([plain, chunked], 2)
    assert [(status, body) for status, _, body in got] == [(200, b"hello"), (404, b"abcde")]
    assert got[0][1][b"x-request-id"] == b"R1" and connections == 1


def test_a_connection_closed_while_idle_is_reopened_and_the_request_sent_again():
    answer = b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok"
    got, connections = run_against([answer, answer, answer], 3, close_after_first=True)
    assert [body for _, _, body in got] == [b"ok"] * 3 and connections == 3


def test_connection_close_opens_a_new_connection_for_the_next_request():
    close = b"HTTP/1.1 200 OK\r\nContent-Length: 1\r\nConnection: close\r\n\r\na"
    got, connections = run_against([close, close], 2)
    assert [body for _, _, body in got] == [b"a", b"a"] and connections == 2


def test_what_is_not_http_is_a_protocol_error():
    with pytest.raises(ProtocolError, match="status line"):
        run_against([b"SSH-2.0-OpenSSH\r\n\r\n"], 1)
    with pytest.raises(ProtocolError, match="Content-Length"):
        run_against([b"HTTP/1.1 200 OK\r\n\r\n"], 1)
    with pytest.raises(ValueError, match="http"):
        Origin.parse("ftp://host/")
