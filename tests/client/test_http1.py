"""``Http1Transport`` against raw HTTP servers on loopback that answer the less common ways.

The envhub server is covered by the rest of the client suite (the async twin runs over this
transport by default); these servers exercise what uvicorn rarely sends: chunked bodies,
``Connection: close``, a body split over many packets, an idle connection the server dropped,
a reply that never comes, and a connection refused.
"""

from __future__ import annotations

import asyncio
import socket
from collections.abc import Awaitable, Callable

import pytest

from envhub.client import Http1Transport
from envhub.client._retry import Reply, TransportFailure
from envhub.core.errors import ConfigurationError

Handler = Callable[[asyncio.StreamReader, asyncio.StreamWriter], Awaitable[None]]


async def _read_request(reader: asyncio.StreamReader) -> tuple[bytes, bytes]:
    head = await reader.readuntil(b"\r\n\r\n")
    length = 0
    for line in head.split(b"\r\n"):
        if line.lower().startswith(b"content-length:"):
            length = int(line.split(b":", 1)[1])
    return head, await reader.readexactly(length)


async def _serve(handler: Handler) -> tuple[asyncio.Server, str]:
    server = await asyncio.start_server(handler, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    return server, f"http://127.0.0.1:{port}"


async def test_reads_chunked_bodies_split_over_many_packets() -> None:
    async def handler(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        while True:
            try:
                await _read_request(reader)
            except asyncio.IncompleteReadError:
                return
            writer.write(b"HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\ncontent-type: text/plain\r\n\r\n")
            for part in (b"5\r\nhello\r\n", b"1;ext=1\r\n", b" \r\n", b"5\r\nworld\r\n0\r\n", b"\r\n"):
                writer.write(part)
                await writer.drain()
                await asyncio.sleep(0.005)

    server, url = await _serve(handler)
    transport = Http1Transport(url)
    try:
        for _ in range(2):  # the second request reuses the connection
            reply = await transport.send("GET", "/x", {"user-agent": "t"}, None)
            assert isinstance(reply, Reply)
            assert (reply.status, reply.body, reply.headers["content-type"]) == (
                200,
                b"hello world",
                "text/plain",
            )
    finally:
        await transport.close()
        server.close()


async def test_connection_close_and_read_until_eof_replies() -> None:
    connections = 0

    async def handler(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        nonlocal connections
        connections += 1
        await _read_request(reader)
        # No length: the body runs until the server closes (HTTP/1.0 style).
        writer.write(b"HTTP/1.1 503 Service Unavailable\r\nretry-after: 2\r\nconnection: close\r\n\r\nbusy")
        await writer.drain()
        writer.close()

    server, url = await _serve(handler)
    transport = Http1Transport(url)
    try:
        for _ in range(2):
            reply = await transport.send("POST", "/v1/sessions", {}, b"{}")
            assert isinstance(reply, Reply)
            assert (reply.status, reply.body, reply.headers["retry-after"]) == (503, b"busy", "2")
        assert connections == 2  # a closed connection is never reused
    finally:
        await transport.close()
        server.close()


async def test_a_dropped_idle_connection_is_not_reused() -> None:
    async def handler(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await _read_request(reader)
        writer.write(b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\nok")
        await writer.drain()
        writer.close()  # keep-alive promised, then dropped while idle

    server, url = await _serve(handler)
    transport = Http1Transport(url)
    try:
        first = await transport.send("GET", "/a", {}, None)
        await asyncio.sleep(0.05)  # the close reaches the client
        second = await transport.send("GET", "/b", {}, None)
        assert isinstance(first, Reply) and isinstance(second, Reply)
        assert second.body == b"ok"
    finally:
        await transport.close()
        server.close()


async def test_a_reply_that_never_comes_is_a_timeout_after_sending() -> None:
    async def handler(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await _read_request(reader)
        await asyncio.sleep(5)

    server, url = await _serve(handler)
    transport = Http1Transport(url, timeout_s=0.2)
    try:
        failure = await transport.send("POST", "/v1/sessions/s/step", {}, b"{}")
        assert isinstance(failure, TransportFailure)
        assert failure.request_sent and "TimeoutError" in failure.reason
        # The caller's task is not left cancelled by the transport's own deadline.
        await asyncio.sleep(0)
    finally:
        await transport.close()
        server.close()


async def test_a_refused_connection_was_not_sent() -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    transport = Http1Transport(f"http://127.0.0.1:{port}")
    failure = await transport.send("POST", "/v1/sessions", {}, b"{}")
    assert isinstance(failure, TransportFailure) and not failure.request_sent
    await transport.close()


async def test_the_pool_limit_queues_requests_instead_of_opening_more_connections() -> None:
    connections = 0

    async def handler(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        nonlocal connections
        connections += 1
        while True:
            try:
                await _read_request(reader)
            except asyncio.IncompleteReadError:
                return
            await asyncio.sleep(0.002)
            writer.write(b"HTTP/1.1 200 OK\r\ncontent-length: 1\r\n\r\nk")

    server, url = await _serve(handler)
    transport = Http1Transport(url, max_connections=3)
    try:
        replies = await asyncio.gather(*(transport.send("GET", f"/{i}", {}, None) for i in range(40)))
        assert all(isinstance(r, Reply) and r.body == b"k" for r in replies)
        assert connections <= 3
    finally:
        await transport.close()
        server.close()


async def test_a_reply_that_is_not_http_fails_the_request() -> None:
    async def handler(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await _read_request(reader)
        writer.write(b"SSH-2.0-OpenSSH\r\n\r\n")
        await writer.drain()

    server, url = await _serve(handler)
    transport = Http1Transport(url)
    try:
        failure = await transport.send("GET", "/", {}, None)
        assert isinstance(failure, TransportFailure) and failure.request_sent
        assert "not an HTTP/1.x reply" in failure.reason
    finally:
        await transport.close()
        server.close()


def test_https_urls_are_refused_with_the_fix() -> None:
    with pytest.raises(ConfigurationError, match="aiohttp for https"):
        Http1Transport("https://example.org")


async def _serve_counting(replies: list[bytes], *, per_byte: bool = False, close_after: bool = False):  # type: ignore[no-untyped-def]
    """A server answering request i with ``replies[i]`` (across connections); counts connections."""
    state = {"connections": 0, "next": 0}

    async def handler(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        state["connections"] += 1
        while True:
            try:
                await _read_request(reader)
            except (asyncio.IncompleteReadError, ConnectionError):
                return
            reply = replies[state["next"]]
            state["next"] += 1
            if per_byte:
                for i in range(len(reply)):
                    writer.write(reply[i : i + 1])
                    await writer.drain()
                    await asyncio.sleep(0.0005)
            else:
                writer.write(reply)
                await writer.drain()
            if close_after:
                writer.close()
                return

    server, url = await _serve(handler)
    return server, url, state


async def test_a_reply_split_byte_by_byte_is_read_whole_and_the_connection_kept() -> None:
    reply = (
        b"HTTP/1.1 100 Continue\r\n\r\n"
        b"HTTP/1.1 201 Created\r\ncontent-type: application/json\r\nx-multi: a\r\nX-Multi: b\r\n"
        b'content-length: 12\r\n\r\n{"ok": true}'
    )
    server, url, state = await _serve_counting([reply, reply], per_byte=True)
    transport = Http1Transport(url)
    try:
        for _ in range(2):
            got = await transport.send("POST", "/v1/sessions", {}, b"{}")
            assert isinstance(got, Reply), got
            assert (got.status, got.body) == (201, b'{"ok": true}')
            assert got.headers["content-type"] == "application/json"
            assert got.headers["x-multi"] == "a, b"
        assert state["connections"] == 1
    finally:
        await transport.close()
        server.close()


async def test_chunked_replies_with_trailers_keep_the_connection() -> None:
    reply = (
        b"HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\ntrailer: x-checksum\r\n\r\n"
        b"3\r\nabc\r\n4;name=v\r\ndefg\r\n0\r\nx-checksum: 123\r\n\r\n"
    )
    server, url, state = await _serve_counting(
        [reply, reply, b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\nok"]
    )
    transport = Http1Transport(url)
    try:
        for _ in range(2):
            got = await transport.send("GET", "/x", {}, None)
            assert isinstance(got, Reply) and got.body == b"abcdefg", got
        last = await transport.send("GET", "/y", {}, None)
        assert isinstance(last, Reply) and last.body == b"ok"
        assert state["connections"] == 1  # the trailers were consumed: the connection stays in step
    finally:
        await transport.close()
        server.close()


async def test_no_body_replies_head_204_304_keep_the_connection_in_step() -> None:
    replies = [
        b"HTTP/1.1 200 OK\r\ncontent-length: 5\r\n\r\n",  # HEAD: a length but no body
        b"HTTP/1.1 204 No Content\r\n\r\n",
        b"HTTP/1.1 304 Not Modified\r\ncontent-length: 7\r\n\r\n",
        b"HTTP/1.1 200 OK\r\ncontent-length: 4\r\n\r\nlast",
    ]
    server, url, state = await _serve_counting(replies)
    transport = Http1Transport(url)
    try:
        head = await transport.send("HEAD", "/", {}, None)
        assert isinstance(head, Reply) and (head.status, head.body) == (200, b""), head
        for status in (204, 304):
            got = await transport.send("GET", "/", {}, None)
            assert isinstance(got, Reply) and (got.status, got.body) == (status, b""), got
        last = await transport.send("GET", "/", {}, None)
        assert isinstance(last, Reply) and last.body == b"last", last
    finally:
        await transport.close()
        server.close()


async def test_a_malformed_reply_is_a_clear_failure_and_the_connection_is_dropped() -> None:
    replies = [
        b"HTTP/1.1 200 OK\r\ncontent-length: twelve\r\n\r\nhello world!",
        b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\nok",
    ]
    server, url, state = await _serve_counting(replies)
    transport = Http1Transport(url)
    try:
        failure = await transport.send("GET", "/", {}, None)
        assert isinstance(failure, TransportFailure) and failure.request_sent, failure
        assert "malformed HTTP/1.1 reply" in failure.reason and "content-length" in failure.reason.lower()
        after = await transport.send("GET", "/", {}, None)
        assert isinstance(after, Reply) and after.body == b"ok"
        assert state["connections"] == 2  # the broken connection was not reused
    finally:
        await transport.close()
        server.close()


@pytest.mark.parametrize(
    "partial",
    [
        b"HTTP/1.1 200 OK\r\ncontent-length: 10\r\n\r\nabc",
        b"HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n5\r\nab",
        b"HTTP/1.1 200 OK\r\ncontent-le",
    ],
)
async def test_a_server_that_closes_mid_reply_is_a_failure_after_sending(partial: bytes) -> None:
    server, url, state = await _serve_counting(
        [partial, b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\nok"], close_after=True
    )
    transport = Http1Transport(url)
    try:
        failure = await transport.send("POST", "/v1/sessions/s/step", {}, b"{}")
        assert isinstance(failure, TransportFailure) and failure.request_sent, failure
        assert "closed the connection before its reply ended" in failure.reason
        after = await transport.send("GET", "/", {}, None)
        assert isinstance(after, Reply) and after.body == b"ok"
    finally:
        await transport.close()
        server.close()
