"""A lean HTTP/1.1 keep-alive transport for :class:`~envhub.client.AsyncEnvClient` (plain http).

Why it exists: a rollout steps an env thousands of times a second, and on a small machine the
client shares the cores with the server. Measured on the project's 2-core machine
(``bench/server_load.py``), aiohttp spent about 100 µs of client CPU per REST step, more than the
server's whole step; most of it is machinery an env client never uses (cookies, redirects,
proxies, compression, tracing, per-request header objects). This transport writes a request
as one pre-rendered byte string and reads the reply with ``httptools`` (llhttp, the parser
uvicorn uses), on an ``asyncio.Protocol`` per connection: no task, no stream object, one
future per request.

What it supports is what the envhub server speaks: HTTP/1.1 on ``http://``, keep-alive, bodies
by ``Content-Length`` or ``Transfer-Encoding: chunked`` (or until the server closes),
``Connection: close``, no body on HEAD, 1xx, 204 and 304. ``https://`` URLs use
:class:`~envhub.client.AiohttpTransport` instead (``AsyncEnvClient`` picks it).

Failures follow :class:`~envhub.client.AsyncTransport`'s contract: a connection that could not
be made is ``request_sent=False`` (safe to retry any call); a connection lost after the request
was written, or a request past its time, is ``request_sent=True`` (only replay-safe calls are
retried).
"""

from __future__ import annotations

import asyncio
import collections
from collections.abc import Mapping
from urllib.parse import urlsplit

import httptools

from envhub.client._retry import Reply, TransportFailure
from envhub.core.errors import ConfigurationError

__all__ = ["Http1Transport"]


class _ProtocolFailure(Exception):
    """The reply is not HTTP/1.1 as this transport reads it."""


class _Connection(asyncio.Protocol):
    """One keep-alive connection; at most one request in flight on it.

    ``httptools.HttpResponseParser`` (llhttp) reads the replies and calls the ``on_*`` methods
    below; they collect the status, headers and body and settle the request's future.
    """

    __slots__ = (
        "_body",
        "_head_done",
        "_headers",
        "_parser",
        "_skip_body",
        "_started",
        "closed",
        "future",
        "keep_alive",
        "transport",
    )

    def __init__(self) -> None:
        self.transport: asyncio.Transport | None = None
        self.future: asyncio.Future[Reply] | None = None
        self.closed = False
        self.keep_alive = True
        self._parser = httptools.HttpResponseParser(self)
        self._skip_body = False  # a reply to HEAD: headers only, whatever they announce
        self._reset_reply()

    def _reset_reply(self) -> None:
        self._started = False  # a status line has begun
        self._head_done = False
        self._headers: dict[str, str] = {}
        self._body: list[bytes] = []

    # -- asyncio.Protocol -------------------------------------------------------------------

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport  # type: ignore[assignment]

    def connection_lost(self, exc: Exception | None) -> None:
        self.closed = True
        future = self.future
        if future is None or future.done():
            return
        if self._head_done and self._until_close():
            self._finish()  # no length, not chunked: the body ran until the close
            return
        self.future = None
        future.set_exception(ConnectionResetError("the server closed the connection before its reply ended"))

    def data_received(self, data: bytes) -> None:
        if self.future is None:  # nothing asked: a server talking out of turn
            self._drop()
            return
        try:
            self._parser.feed_data(data)
        except httptools.HttpParserError as exc:
            future, self.future = self.future, None
            self._drop()
            if future is not None and not future.done():
                future.set_exception(self._failure(exc, data))

    def eof_received(self) -> bool | None:
        return False  # close the transport; connection_lost settles the reply

    # -- httptools callbacks ----------------------------------------------------------------

    def on_message_begin(self) -> None:
        if self.future is None:  # bytes beyond the reply: do not trust this connection
            self.keep_alive = False
            raise _ProtocolFailure("the server sent more than one reply")
        self._reset_reply()

    def on_status(self, status: bytes) -> None:
        self._started = True

    def on_header(self, name: bytes, value: bytes) -> None:
        headers = self._headers
        key = name.decode("latin-1").lower()
        text = value.decode("latin-1").strip()
        headers[key] = f"{headers[key]}, {text}" if key in headers else text

    def on_headers_complete(self) -> None:
        self._head_done = True
        if not self._parser.should_keep_alive():
            self.keep_alive = False
        if self._skip_body and self._parser.get_status_code() >= 200:
            # llhttp cannot be told that a reply to HEAD has no body: settle it now, and let
            # the connection go (a parser would read the next reply as this one's body).
            self.keep_alive = False
            self._finish()

    def on_body(self, body: bytes) -> None:
        self._body.append(body)

    def on_message_complete(self) -> None:
        if self._parser.get_status_code() < 200:  # 100 Continue and friends: the reply follows
            return
        self._finish()

    # -- helpers ----------------------------------------------------------------------------

    def _until_close(self) -> bool:
        headers = self._headers
        return "content-length" not in headers and "chunked" not in headers.get("transfer-encoding", "")

    def _finish(self) -> None:
        future, self.future = self.future, None
        if future is not None and not future.done():
            body = self._body
            future.set_result(
                Reply(
                    self._parser.get_status_code(),
                    self._headers,
                    body[0] if len(body) == 1 else b"".join(body),
                )
            )

    def _drop(self) -> None:
        self.keep_alive = False
        if self.transport is not None:
            self.transport.close()

    def _failure(self, exc: httptools.HttpParserError, data: bytes) -> _ProtocolFailure:
        cause = exc.__context__ if isinstance(exc.__context__, _ProtocolFailure) else None
        if cause is not None:
            return cause
        if not self._started:
            return _ProtocolFailure(f"not an HTTP/1.x reply: {data[:60]!r}")
        return _ProtocolFailure(f"malformed HTTP/1.1 reply ({exc}); the connection was dropped")


class Http1Transport:
    """HTTP/1.1 keep-alive connections to one ``http://`` server.

    Args:
        base_url: ``http://host:port`` (a path prefix is kept: requests go under it).
        max_connections: open connections at most (0: no limit); requests beyond it wait for
            a free connection, so thousands of sessions share a few hundred sockets.
        timeout_s: total time for one request, waiting for a connection included.

    Raises:
        ConfigurationError: the URL is not ``http://`` (use :class:`AiohttpTransport` for TLS).
    """

    def __init__(self, base_url: str, *, max_connections: int = 512, timeout_s: float = 60.0) -> None:
        parts = urlsplit(base_url)
        if parts.scheme != "http" or not parts.hostname:
            raise ConfigurationError(
                f"Http1Transport speaks plain http://host:port only, got {base_url!r}; "
                "AsyncEnvClient uses aiohttp for https:// URLs.",
                base_url=base_url,
            )
        self.base_url = base_url.rstrip("/")
        self._host = parts.hostname
        self._port = parts.port or 80
        self._prefix = parts.path.rstrip("/")
        host_header = parts.netloc.encode("idna") if not parts.netloc.isascii() else parts.netloc.encode()
        self._host_line = b"host: " + host_header + b"\r\n"
        self._limit = max_connections
        self._timeout = timeout_s
        self._idle: collections.deque[_Connection] = collections.deque()
        self._open = 0
        self._waiters: collections.deque[asyncio.Future[None]] = collections.deque()
        self._header_cache: tuple[Mapping[str, str] | None, bytes] = (None, b"")
        self._closed = False

    def _header_block(self, headers: Mapping[str, str]) -> bytes:
        cached, block = self._header_cache
        if cached is headers:
            return block
        lines = [self._host_line]
        for name, value in headers.items():
            if name.lower() in ("host", "content-length", "transfer-encoding", "connection"):
                continue
            lines.append(f"{name}: {value}\r\n".encode("latin-1"))
        block = b"".join(lines)
        self._header_cache = (headers, block)
        return block

    async def _acquire(self) -> _Connection | None:
        """An idle connection, or None when the caller may open a new one (a slot is taken)."""
        idle = self._idle
        while idle:
            connection = idle.pop()
            if not connection.closed:
                return connection
            self._open -= 1
        while self._limit and self._open >= self._limit:
            waiter = asyncio.get_running_loop().create_future()
            self._waiters.append(waiter)
            try:
                await waiter
            except BaseException:
                if not waiter.cancelled() and waiter.done():
                    self._wake()  # pass the slot we were given on
                raise
            while idle:
                connection = idle.pop()
                if not connection.closed:
                    return connection
                self._open -= 1
        self._open += 1
        return None

    def _wake(self) -> None:
        while self._waiters:
            waiter = self._waiters.popleft()
            if not waiter.done():
                waiter.set_result(None)
                return

    def _release(self, connection: _Connection | None) -> None:
        if connection is not None and connection.keep_alive and not connection.closed and not self._closed:
            self._idle.append(connection)
        else:
            if connection is not None and connection.transport is not None:
                connection.transport.close()
            self._open -= 1
        self._wake()

    async def send(
        self, method: str, path: str, headers: Mapping[str, str], body: bytes | None
    ) -> Reply | TransportFailure:
        """Send one request and read the whole reply (see :class:`AsyncTransport`)."""
        if self._closed:
            return TransportFailure(request_sent=False, reason="the transport was closed")
        loop = asyncio.get_running_loop()
        task = asyncio.current_task()
        expired = _Expiry(task)
        timer = loop.call_later(self._timeout, expired.fire)
        connection: _Connection | None = None
        sent = opening = False
        try:
            connection = await self._acquire()
            if connection is None:
                opening = True  # a slot is ours: give it back if the connection never comes
                try:
                    _transport, connection = await loop.create_connection(_Connection, self._host, self._port)
                except OSError as exc:
                    opening = False
                    self._open -= 1
                    self._wake()
                    return TransportFailure(request_sent=False, reason=f"{type(exc).__name__}: {exc}")
            payload = body or b""
            head = b"%s %s HTTP/1.1\r\n%scontent-length: %d\r\n\r\n" % (
                method.encode("ascii"),
                (self._prefix + path).encode("utf-8"),
                self._header_block(headers),
                len(payload),
            )
            connection._skip_body = method == "HEAD"
            future: asyncio.Future[Reply] = loop.create_future()
            connection.future = future
            assert connection.transport is not None
            connection.transport.write(head + payload)
            sent = True
            reply = await future
        except asyncio.CancelledError:
            if connection is not None:
                _discard(connection)
                self._release(connection)
                connection = None
            elif opening:
                self._open -= 1
                self._wake()
            if not expired.fired:
                raise
            if task is not None:
                task.uncancel()  # our own deadline, not the caller's cancellation
            return TransportFailure(
                request_sent=True, reason=f"TimeoutError: no reply within {self._timeout:g} s"
            )
        except (ConnectionError, _ProtocolFailure) as exc:
            if connection is not None:
                _discard(connection)
                self._release(connection)
                connection = None
            return TransportFailure(request_sent=sent, reason=f"{type(exc).__name__}: {exc}")
        finally:
            timer.cancel()
        self._release(connection)
        return reply

    async def close(self) -> None:
        """Close every connection; the transport is not used afterwards."""
        self._closed = True
        while self._idle:
            connection = self._idle.pop()
            if connection.transport is not None:
                connection.transport.close()
        for waiter in self._waiters:
            if not waiter.done():
                waiter.cancel()
        self._waiters.clear()


def _discard(connection: _Connection) -> None:
    connection.keep_alive = False
    connection.future = None
    if connection.transport is not None:
        connection.transport.close()


class _Expiry:
    """A request's deadline: cancels the task that sends it, and remembers that it did."""

    __slots__ = ("fired", "task")

    def __init__(self, task: asyncio.Task[object] | None) -> None:
        self.task = task
        self.fired = False

    def fire(self) -> None:
        if self.task is not None and not self.task.done():
            self.fired = True
            self.task.cancel()
