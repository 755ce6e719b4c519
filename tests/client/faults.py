"""Transports that forward to the real server but break connections on purpose.

They stand between a client and a real server to produce the two network failures a
retry policy must tell apart: a connection refused before anything was sent, and a reply lost
after the server acted. The server itself is never replaced.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping
from dataclasses import dataclass, field

import httpx

from envhub.client import AiohttpTransport
from envhub.client._retry import Reply, TransportFailure


@dataclass
class Faults:
    """Which requests fail, and a log of what was sent.

    Attributes:
        refuse_first: this many requests fail as "connection refused", never reaching the server.
        lose_reply_to: a path suffix (e.g. ``"/step"``); the first request whose path ends with it
            reaches the server, which acts, and then its reply is lost.
        sent: the body of every request that reached the server, in order, with its path.
        refused: set once the server has answered any request with 503 (capacity reached).
    """

    refuse_first: int = 0
    lose_reply_to: str | None = None
    sent: list[tuple[str, bytes]] = field(default_factory=list)
    refused: threading.Event = field(default_factory=threading.Event)

    def refuse_now(self) -> bool:
        if self.refuse_first > 0:
            self.refuse_first -= 1
            return True
        return False

    def lose_now(self, path: str) -> bool:
        if self.lose_reply_to is not None and path.split("?")[0].endswith(self.lose_reply_to):
            self.lose_reply_to = None
            return True
        return False


class FaultySyncTransport(httpx.BaseTransport):
    """An httpx transport over a real connection pool, with :class:`Faults` applied."""

    def __init__(self, faults: Faults) -> None:
        self.faults = faults
        self._inner = httpx.HTTPTransport()

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        if self.faults.refuse_now():
            raise httpx.ConnectError("injected: connection refused", request=request)
        request.read()
        self.faults.sent.append((request.url.path, request.content))
        response = self._inner.handle_request(request)
        response.read()
        if response.status_code == 503:
            self.faults.refused.set()
        if self.faults.lose_now(request.url.path):
            raise httpx.ReadError("injected: connection reset after the request was sent", request=request)
        return response

    def close(self) -> None:
        self._inner.close()


class FaultyAsyncTransport:
    """An :class:`AiohttpTransport` with :class:`Faults` applied."""

    def __init__(self, base_url: str, faults: Faults) -> None:
        self.faults = faults
        self._inner = AiohttpTransport(base_url)

    async def send(
        self, method: str, path: str, headers: Mapping[str, str], body: bytes | None
    ) -> Reply | TransportFailure:
        if self.faults.refuse_now():
            return TransportFailure(request_sent=False, reason="injected: connection refused")
        self.faults.sent.append((path.split("?")[0], body or b""))
        reply = await self._inner.send(method, path, headers, body)
        if isinstance(reply, Reply) and reply.status == 503:
            self.faults.refused.set()
        if self.faults.lose_now(path):
            return TransportFailure(request_sent=True, reason="injected: connection reset after sending")
        return reply

    async def close(self) -> None:
        await self._inner.close()
