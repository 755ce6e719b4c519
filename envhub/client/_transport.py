"""Async transports: the one thing :class:`~envhub.client.AsyncEnvClient` does I/O through.

A transport sends one request and returns a :class:`~envhub.client._retry.Reply`, or a
:class:`~envhub.client._retry.TransportFailure` when no reply came; each library's own
exceptions are translated here, once.

:class:`~envhub.client.Http1Transport` (:mod:`envhub.client._http1`) is the default for
``http://`` URLs, several times cheaper per request than aiohttp; :class:`AiohttpTransport` is
the default for ``https://``. Measured on this project's 2-core machine against
one uvicorn worker, ``httpx.AsyncClient`` (0.28) served 64 concurrent request loops at about
370 requests/s and 1,000 at about 140, while aiohttp served the same loads at about 6,700
and 4,100: httpx's connection pool does not hold thousands of concurrent sessions (the
NeMo-Gym "aiohttp vs httpx" lesson, see ``shared/reference/anchors_hubs.md`` §5 and §7).
:class:`HttpxAsyncTransport` remains for in-process tests (``httpx.ASGITransport``) and for
callers that already hold an httpx transport.
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping
from types import ModuleType
from typing import TYPE_CHECKING, Protocol, runtime_checkable

import httpx

from envhub.client._retry import Reply, TransportFailure
from envhub.core.errors import DependencyMissingError

if TYPE_CHECKING:
    import aiohttp

__all__ = ["AiohttpTransport", "AsyncTransport", "HttpxAsyncTransport"]


@runtime_checkable
class AsyncTransport(Protocol):
    """Sends requests to one server; implement both methods to plug in another library."""

    async def send(
        self, method: str, path: str, headers: Mapping[str, str], body: bytes | None
    ) -> Reply | TransportFailure:
        """Send one request (``path`` is relative to the server's base URL) and read the whole reply."""
        ...

    async def close(self) -> None:
        """Release connections; the transport is not used afterwards."""
        ...


def _import_aiohttp() -> ModuleType:
    """aiohttp, or an error that says which extra installs it."""
    try:
        return importlib.import_module("aiohttp")
    except ImportError as exc:
        raise DependencyMissingError("aiohttp", extra="client") from exc


class AiohttpTransport:
    """An aiohttp connection pool for one server.

    Args:
        base_url: ``http://host:port`` of the env server.
        max_connections: pooled connections at most (0: no limit). Requests beyond it wait
            for a free connection instead of failing, so thousands of sessions share a few
            hundred sockets (and the server stays under common 1,024-descriptor limits).
        timeout_s: total time allowed for one request, reply included.

    Raises:
        DependencyMissingError: aiohttp is not installed (``pip install 'envhub-rl[client]'``).
    """

    def __init__(self, base_url: str, *, max_connections: int = 512, timeout_s: float = 60.0) -> None:
        self._aiohttp = _import_aiohttp()
        self.base_url = base_url.rstrip("/")
        self._max_connections = max_connections
        self._timeout = self._aiohttp.ClientTimeout(total=timeout_s)
        # aiohttp sessions must be created inside a running event loop, so this is lazy.
        self._session: aiohttp.ClientSession | None = None

    def _ensure_session(self) -> aiohttp.ClientSession:
        if self._session is None:
            connector = self._aiohttp.TCPConnector(limit=self._max_connections, limit_per_host=0)
            self._session = self._aiohttp.ClientSession(connector=connector, timeout=self._timeout)
        return self._session

    async def send(
        self, method: str, path: str, headers: Mapping[str, str], body: bytes | None
    ) -> Reply | TransportFailure:
        session = self._ensure_session()
        errors = self._aiohttp
        try:
            async with session.request(method, self.base_url + path, headers=headers, data=body) as response:
                content = await response.read()
                return Reply(response.status, response.headers, content)
        except errors.ClientConnectorError as exc:
            return TransportFailure(request_sent=False, reason=f"{type(exc).__name__}: {exc}")
        except (errors.ClientError, TimeoutError) as exc:
            return TransportFailure(request_sent=True, reason=f"{type(exc).__name__}: {exc}")

    async def close(self) -> None:
        if self._session is not None:
            await self._session.close()
            self._session = None


class HttpxAsyncTransport:
    """An ``httpx.AsyncClient`` for one server (use it with ``httpx.ASGITransport`` in tests).

    Args:
        base_url: the server's base URL (any host for an ASGI transport).
        transport: an httpx async transport; None uses httpx's own connection pool.
        timeout_s: time allowed for each phase of a request.
    """

    def __init__(
        self, base_url: str, *, transport: httpx.AsyncBaseTransport | None = None, timeout_s: float = 60.0
    ) -> None:
        self.base_url = base_url.rstrip("/")
        self._client = httpx.AsyncClient(base_url=self.base_url, transport=transport, timeout=timeout_s)

    async def send(
        self, method: str, path: str, headers: Mapping[str, str], body: bytes | None
    ) -> Reply | TransportFailure:
        try:
            response = await self._client.request(method, path, headers=headers, content=body)
        except (httpx.ConnectError, httpx.ConnectTimeout) as exc:
            return TransportFailure(request_sent=False, reason=f"{type(exc).__name__}: {exc}")
        except httpx.TransportError as exc:
            return TransportFailure(request_sent=True, reason=f"{type(exc).__name__}: {exc}")
        return Reply(response.status_code, response.headers, response.content)

    async def close(self) -> None:
        await self._client.aclose()
