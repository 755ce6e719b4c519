"""The twin clients of the envhub REST API: :class:`EnvClient` (sync) and :class:`AsyncEnvClient`.

Both hold the same :class:`~envhub.client._protocol.Protocol` and
:class:`~envhub.client._retry.RetryPolicy` (in :class:`_ClientBase`) and run the same
:func:`~envhub.client._retry.exchange` flow; they differ only in how they send a request and
how they wait. Every public method is one line that builds an :class:`ApiCall` and runs it.
"""

from __future__ import annotations

import asyncio
import random
import time
from collections.abc import Mapping, Sequence
from enum import Enum
from types import TracebackType
from typing import Any, Self, TypeVar

import httpx

from envhub.client._http1 import Http1Transport
from envhub.client._protocol import ApiCall, HistoryArg, Protocol, StepItem
from envhub.client._retry import Reply, RetryPolicy, Sleep, TransportFailure, exchange
from envhub.client._transport import AiohttpTransport, AsyncTransport
from envhub.core.errors import ConfigurationError
from envhub.core.wire import (
    BatchResetItem,
    BatchResetResponse,
    BatchStepResponse,
    GroupCreated,
    Health,
    Readiness,
    ResetResponse,
    SessionClosed,
    SessionCreated,
    SessionState,
    StepResponse,
    TaskList,
)

__all__ = ["AsyncEnvClient", "EnvClient"]

T = TypeVar("T")


class _State(Enum):
    OPEN = "open"  # usable; connections are opened on first use
    CLOSED = "closed"  # close() was called; every call raises


class _ClientBase:
    """What the twins share: the protocol, the retry policy and the lifecycle (no I/O)."""

    def __init__(self, base_url: str, *, token: str | None, retry: RetryPolicy | None) -> None:
        if not base_url.startswith(("http://", "https://")):
            raise ConfigurationError(
                f"base_url must start with http:// or https://, got {base_url!r} "
                "(e.g. 'http://127.0.0.1:8000', where `envhub serve` listens).",
                base_url=base_url,
            )
        self.base_url = base_url.rstrip("/")
        self._proto = Protocol(token=token)
        self._retry = RetryPolicy() if retry is None else retry
        # Jitter only; a private generator keeps the global random state untouched.
        self._randoms = random.Random()
        self._state = _State.OPEN

    def _check_open(self) -> None:
        if self._state is _State.CLOSED:
            raise ConfigurationError(
                f"This {type(self).__name__} was closed and cannot be reopened; create a new one.",
                base_url=self.base_url,
            )


class EnvClient(_ClientBase):
    """Synchronous client of an envhub server (``envhub serve``) over ``httpx.Client``.

    Args:
        base_url: the server, e.g. ``"http://127.0.0.1:8000"``.
        token: bearer token, when the server was started with ``--token``.
        retry: retry policy (default: :class:`RetryPolicy()`); ``RetryPolicy(max_attempts=1)``
            disables retries.
        timeout_s: time allowed for each phase of a request.
        transport: an httpx transport to use instead of a network connection pool (tests
            pass ``httpx.WSGITransport``/``MockTransport``; production leaves it None).

    Raises:
        ConfigurationError: ``base_url`` is not an http(s) URL.

    Example:
        >>> with EnvClient("http://127.0.0.1:8000") as client:  # doctest: +SKIP
        ...     sid = client.create_session().session_id
        ...     first = client.reset(sid, seed=0)
        ...     result = client.step(sid, "stats")
    """

    def __init__(
        self,
        base_url: str,
        *,
        token: str | None = None,
        retry: RetryPolicy | None = None,
        timeout_s: float = 60.0,
        transport: httpx.BaseTransport | None = None,
    ) -> None:
        super().__init__(base_url, token=token, retry=retry)
        self._http = httpx.Client(base_url=self.base_url, transport=transport, timeout=timeout_s)

    def _run(self, call: ApiCall[T]) -> T:
        self._check_open()
        flow = exchange(call, self._retry, base_url=self.base_url, randoms=self._randoms)
        instruction = next(flow)
        while True:
            feedback: Reply | TransportFailure | None = None
            if isinstance(instruction, Sleep):
                time.sleep(instruction.seconds)
            else:
                feedback = self._send(call)
            try:
                instruction = flow.send(feedback)
            except StopIteration as done:
                return done.value  # type: ignore[no-any-return]

    def _send(self, call: ApiCall[Any]) -> Reply | TransportFailure:
        try:
            response = self._http.request(
                call.method, call.path, headers=self._proto.headers, content=call.body
            )
        except (httpx.ConnectError, httpx.ConnectTimeout) as exc:
            return TransportFailure(request_sent=False, reason=f"{type(exc).__name__}: {exc}")
        except httpx.TransportError as exc:
            return TransportFailure(request_sent=True, reason=f"{type(exc).__name__}: {exc}")
        return Reply(response.status_code, response.headers, response.content)

    # -- sessions ---------------------------------------------------------------------------

    def create_session(
        self, env_kwargs: Mapping[str, Any] | None = None, *, history: HistoryArg | None = None
    ) -> SessionCreated:
        """Create a session (``POST /v1/sessions``); reset it before stepping.

        Args:
            env_kwargs: env constructor arguments.
            history: server-side AgentOCR history (:class:`HistoryOptions` or its fields, e.g.
                ``{"style": "ocr", "window": 50, "preset": "alfworld"}``); each step result then
                carries ``history`` (:class:`HistoryFrame`).

        Raises:
            CapacityReachedError: still full after every retry.
            RequestValidationError: ``history`` has an unknown style, preset or field.
        """
        return self._run(self._proto.create_session(env_kwargs, history=history))

    def reset(
        self,
        session_id: str,
        *,
        seed: int | None = None,
        task_id: str | None = None,
        options: Mapping[str, Any] | None = None,
        request_id: str | None = None,
    ) -> ResetResponse:
        """Start an episode in ``session_id``.

        Args:
            session_id: from :meth:`create_session` or :meth:`create_group`.
            seed: seeds the env (and picks the task when ``task_id`` is None).
            task_id: the task to play.
            options: further ``env.reset`` options (e.g. ``{"split": "test"}``).
            request_id: idempotency key; generated when None, and reused by every retry.

        Raises:
            SessionNotFoundError, SessionExpiredError, SessionLostError: the session is gone.
            UnknownTaskError: no such task.
        """
        call = self._proto.reset(
            session_id, seed=seed, task_id=task_id, options=options, request_id=request_id
        )
        return self._run(call)

    def step(self, session_id: str, action: str, *, request_id: str | None = None) -> StepResponse:
        """Apply one text action; a retried step is answered from the server's store, not re-applied.

        Raises:
            SessionNotFoundError, SessionExpiredError, SessionLostError: the session is gone.
            StepTimeoutError: the env took longer than the server's step timeout.
        """
        return self._run(self._proto.step(session_id, action, request_id=request_id))

    def state(self, session_id: str) -> SessionState:
        """Where ``session_id`` stands (task, step count, last observation, expiry)."""
        return self._run(self._proto.state(session_id))

    def delete_session(self, session_id: str) -> SessionClosed:
        """Close ``session_id`` and free its slot."""
        return self._run(self._proto.delete_session(session_id))

    def fetch_history_png(self, session_id: str) -> bytes:
        """The PNG of ``session_id``'s latest history image (for sessions created with ``history``).

        Raises:
            ConfigurationError: the session was created without history.
        """
        return self._run(self._proto.history_png(session_id))

    def tasks(self, split: str | None = None, *, offset: int = 0, limit: int = 100) -> TaskList:
        """One page of the task ids of ``split`` (the env's default split when None)."""
        return self._run(self._proto.tasks(split, offset=offset, limit=limit))

    # -- groups and batches -----------------------------------------------------------------

    def create_group(
        self,
        group_size: int,
        *,
        task_id: str | None = None,
        seed: int | None = None,
        split: str | None = None,
        env_kwargs: Mapping[str, Any] | None = None,
        history: HistoryArg | None = None,
    ) -> GroupCreated:
        """Create ``group_size`` sessions reset to one identical initial state (a GRPO group).

        ``history`` turns on server-side AgentOCR history for every member (see :meth:`create_session`).
        """
        call = self._proto.create_group(
            group_size, task_id=task_id, seed=seed, split=split, env_kwargs=env_kwargs, history=history
        )
        return self._run(call)

    def batch_step(self, items: Sequence[StepItem]) -> BatchStepResponse:
        """Step many sessions in one request; slot i answers item i, errors stay in their slot.

        Args:
            items: :class:`BatchStepItem` or ``(session_id, action)`` pairs.
        """
        return self._run(self._proto.batch_step(items))

    def batch_reset(self, items: Sequence[BatchResetItem]) -> BatchResetResponse:
        """Reset many sessions in one request; slot i answers item i."""
        return self._run(self._proto.batch_reset(items))

    # -- operations and lifecycle -----------------------------------------------------------

    def health(self) -> Health:
        """``GET /health``: liveness."""
        return self._run(self._proto.health())

    def ready(self) -> Readiness:
        """``GET /ready``: capacity and workers (``ready`` False instead of an exception when not ready)."""
        return self._run(self._proto.ready())

    def close(self) -> None:
        """Close the connection pool (sessions on the server are left to the caller or its TTL)."""
        if self._state is not _State.CLOSED:
            self._state = _State.CLOSED
            self._http.close()

    def __enter__(self) -> Self:
        self._check_open()
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()


class AsyncEnvClient(_ClientBase):
    """The asyncio twin of :class:`EnvClient`: same methods, awaited.

    Args:
        base_url: the server, e.g. ``"http://127.0.0.1:8000"``.
        token: bearer token, when the server was started with ``--token``.
        retry: retry policy (default: :class:`RetryPolicy()`).
        timeout_s: total time allowed for one request.
        max_connections: connection pool size of the default transport; calls beyond it queue
            for a connection (sessions are not connections: 512 sockets serve thousands of
            sessions, since the server, not the socket count, is the limit).
        transport: an :class:`AsyncTransport` instead of the default (:class:`Http1Transport`
            for ``http://``, :class:`AiohttpTransport` for ``https://``); tests pass
            ``HttpxAsyncTransport(url, transport=httpx.ASGITransport(app))``.

    Raises:
        ConfigurationError: ``base_url`` is not an http(s) URL.

    Example:
        >>> async with AsyncEnvClient("http://127.0.0.1:8000") as client:  # doctest: +SKIP
        ...     group = await client.create_group(8, seed=0)
        ...     results = await client.batch_step([(m.session_id, "stats") for m in group.sessions])
    """

    def __init__(
        self,
        base_url: str,
        *,
        token: str | None = None,
        retry: RetryPolicy | None = None,
        timeout_s: float = 60.0,
        max_connections: int = 512,
        transport: AsyncTransport | None = None,
    ) -> None:
        super().__init__(base_url, token=token, retry=retry)
        if transport is None:
            # Plain http (the env servers of a rollout, on loopback or a cluster network): the
            # lean transport, several times cheaper per request than aiohttp; TLS: aiohttp.
            kind = Http1Transport if self.base_url.startswith("http://") else AiohttpTransport
            transport = kind(self.base_url, max_connections=max_connections, timeout_s=timeout_s)
        self._transport: AsyncTransport = transport

    async def _run(self, call: ApiCall[T]) -> T:
        self._check_open()
        flow = exchange(call, self._retry, base_url=self.base_url, randoms=self._randoms)
        instruction = next(flow)
        while True:
            feedback: Reply | TransportFailure | None = None
            if isinstance(instruction, Sleep):
                await asyncio.sleep(instruction.seconds)
            else:
                feedback = await self._transport.send(call.method, call.path, self._proto.headers, call.body)
            try:
                instruction = flow.send(feedback)
            except StopIteration as done:
                return done.value  # type: ignore[no-any-return]

    async def create_session(
        self, env_kwargs: Mapping[str, Any] | None = None, *, history: HistoryArg | None = None
    ) -> SessionCreated:
        """See :meth:`EnvClient.create_session`."""
        return await self._run(self._proto.create_session(env_kwargs, history=history))

    async def reset(
        self,
        session_id: str,
        *,
        seed: int | None = None,
        task_id: str | None = None,
        options: Mapping[str, Any] | None = None,
        request_id: str | None = None,
    ) -> ResetResponse:
        """See :meth:`EnvClient.reset`."""
        call = self._proto.reset(
            session_id, seed=seed, task_id=task_id, options=options, request_id=request_id
        )
        return await self._run(call)

    async def step(self, session_id: str, action: str, *, request_id: str | None = None) -> StepResponse:
        """See :meth:`EnvClient.step`."""
        return await self._run(self._proto.step(session_id, action, request_id=request_id))

    async def state(self, session_id: str) -> SessionState:
        """See :meth:`EnvClient.state`."""
        return await self._run(self._proto.state(session_id))

    async def delete_session(self, session_id: str) -> SessionClosed:
        """See :meth:`EnvClient.delete_session`."""
        return await self._run(self._proto.delete_session(session_id))

    async def fetch_history_png(self, session_id: str) -> bytes:
        """See :meth:`EnvClient.fetch_history_png`."""
        return await self._run(self._proto.history_png(session_id))

    async def tasks(self, split: str | None = None, *, offset: int = 0, limit: int = 100) -> TaskList:
        """See :meth:`EnvClient.tasks`."""
        return await self._run(self._proto.tasks(split, offset=offset, limit=limit))

    async def create_group(
        self,
        group_size: int,
        *,
        task_id: str | None = None,
        seed: int | None = None,
        split: str | None = None,
        env_kwargs: Mapping[str, Any] | None = None,
        history: HistoryArg | None = None,
    ) -> GroupCreated:
        """See :meth:`EnvClient.create_group`."""
        call = self._proto.create_group(
            group_size, task_id=task_id, seed=seed, split=split, env_kwargs=env_kwargs, history=history
        )
        return await self._run(call)

    async def batch_step(self, items: Sequence[StepItem]) -> BatchStepResponse:
        """See :meth:`EnvClient.batch_step`."""
        return await self._run(self._proto.batch_step(items))

    async def batch_reset(self, items: Sequence[BatchResetItem]) -> BatchResetResponse:
        """See :meth:`EnvClient.batch_reset`."""
        return await self._run(self._proto.batch_reset(items))

    async def health(self) -> Health:
        """See :meth:`EnvClient.health`."""
        return await self._run(self._proto.health())

    async def ready(self) -> Readiness:
        """See :meth:`EnvClient.ready`."""
        return await self._run(self._proto.ready())

    async def close(self) -> None:
        """Close the transport's connections (server sessions are left to the caller or its TTL)."""
        if self._state is not _State.CLOSED:
            self._state = _State.CLOSED
            await self._transport.close()

    async def __aenter__(self) -> Self:
        self._check_open()
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self.close()

    def __enter__(self) -> None:
        # A plain `with` would skip closing the pool's connections; say what to use instead.
        raise TypeError(
            "AsyncEnvClient is asynchronous: use `async with AsyncEnvClient(...)`, or use EnvClient."
        )

    def __exit__(self, *args: object) -> None:  # pragma: no cover - __enter__ always raises
        pass
