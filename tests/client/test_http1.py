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
