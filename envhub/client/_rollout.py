"""The twin clients of the rollout service (``envhub serve-rollouts``): :class:`RolloutClient`
(sync) and :class:`AsyncRolloutClient`.

Both hold one :class:`_RolloutProtocol`, which builds every request and parses every reply
without I/O (errors come back as the :mod:`envhub.core.errors` class the service raised, or
the code it sent); the twins only send and sleep. A request that never reached the service
(connection refused) is retried with backoff; one that may have reached it is not, so a
submit is never doubled.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Mapping
from dataclasses import dataclass
from types import TracebackType
from typing import Any, Self, TypeVar

import httpx
from pydantic import BaseModel, SecretStr, ValidationError

from envhub.core.errors import (
    ConfigurationError,
    EnvhubError,
    ProtocolError,
    ServerUnreachableError,
    error_from_wire,
)
from envhub.core.wire import RolloutJobCreated, RolloutJobList, RolloutJobProgress

__all__ = ["AsyncRolloutClient", "RolloutClient", "RolloutJobTimeout"]

M = TypeVar("M", bound=BaseModel)

#: Statuses a job never leaves on its own (a failed job leaves it only by retry).
FINAL = frozenset({"done", "failed", "cancelled"})


class RolloutJobTimeout(EnvhubError):
    """``wait`` gave up before the job finished (the job keeps running)."""

    code = "JOB_WAIT_TIMEOUT"
    status_code = 504


@dataclass(frozen=True)
class _Call:
    method: str
    path: str
    body: bytes | None
    expect: int
    model: type[BaseModel]


def _request_body(request: Mapping[str, Any] | BaseModel) -> bytes:
    """The JSON of a ``RolloutRequest`` (or a dict of one), secrets included (they are the caller's)."""
    if isinstance(request, BaseModel):
        data = request.model_dump(mode="json")
        policy = getattr(request, "policy", None)
        secret = getattr(policy, "api_key", None)
        if isinstance(secret, SecretStr) and isinstance(data.get("policy"), dict):
            data["policy"]["api_key"] = secret.get_secret_value()  # model_dump masks it
    else:
        data = dict(request)
    return json.dumps(data).encode()


class _RolloutProtocol:
    """What the twins share: requests, replies, errors and the retry schedule (no I/O)."""

    def __init__(self, base_url: str, *, token: str | None, attempts: int = 4) -> None:
        if not base_url.startswith(("http://", "https://")):
            raise ConfigurationError(
                f"The rollout service URL must start with http:// or https://, got {base_url!r} "
                "(e.g. 'http://127.0.0.1:8100', where `envhub serve-rollouts` listens).",
                base_url=base_url,
            )
        self.base_url = base_url.rstrip("/")
        self.headers = {"Content-Type": "application/json", "Accept": "application/json"}
        if token:
            self.headers["Authorization"] = f"Bearer {token}"
        self.attempts = attempts

    def submit(self, request: Mapping[str, Any] | BaseModel) -> _Call:
        return _Call("POST", "/v1/rollouts", _request_body(request), 201, RolloutJobCreated)

    def get(self, job_id: str) -> _Call:
        return _Call("GET", f"/v1/rollouts/{job_id}", None, 200, RolloutJobProgress)

    def list(self) -> _Call:
        return _Call("GET", "/v1/rollouts", None, 200, RolloutJobList)

    def cancel(self, job_id: str) -> _Call:
        return _Call("DELETE", f"/v1/rollouts/{job_id}", None, 200, RolloutJobProgress)

    def retry(self, job_id: str) -> _Call:
        return _Call("POST", f"/v1/rollouts/{job_id}/retry", None, 200, RolloutJobProgress)

    def backoff(self, attempt: int) -> float:
        return min(0.2 * 2**attempt, 2.0)

    def unreachable(self, attempts: int, exc: Exception) -> ServerUnreachableError:
        error = ServerUnreachableError(
            url=self.base_url, attempts=attempts, reason=f"{type(exc).__name__}: {exc}"
        )
        error.message = error.message.replace("`envhub serve`", "`envhub serve-rollouts`")
        return error

    def parse(self, call: _Call, status: int, content: bytes) -> Any:
        """The reply's model, or the error the service sent (as its envhub class)."""
        try:
            data = json.loads(content) if content else None
        except ValueError:
            data = None
        if status != call.expect:
            if isinstance(data, dict) and "code" in data and "message" in data:
                raise error_from_wire(
                    str(data["code"]), str(data["message"]), data.get("detail"), status_code=status
                )
            raise ProtocolError(
                method=call.method,
                path=f"{self.base_url}{call.path}",
                status=status,
                reason="no {code, message} error body (is an envhub rollout service listening there?)",
                body=content[:200].decode(errors="replace"),
            )
        try:
            return call.model.model_validate(data)
        except ValidationError as exc:
            raise ProtocolError(
                method=call.method,
                path=f"{self.base_url}{call.path}",
                status=status,
                reason=f"not a {call.model.__name__} ({exc.errors()[0].get('msg')}); same versions?",
                body=content[:200].decode(errors="replace"),
            ) from exc

    @staticmethod
    def finished(progress: RolloutJobProgress) -> bool:
        return progress.status in FINAL

    def timed_out(self, job_id: str, timeout_s: float, progress: RolloutJobProgress) -> RolloutJobTimeout:
        return RolloutJobTimeout(
            f"Rollout job {job_id} is still {progress.status} after {timeout_s:g} s "
            f"({progress.published}/{progress.total} groups); wait longer or GET /v1/rollouts/{job_id}.",
            job_id=job_id,
            status=progress.status,
        )


class RolloutClient:
    """Synchronous client of the rollout service.

    Args:
        base_url: the service, e.g. ``"http://127.0.0.1:8100"``.
        token: its bearer token (``ENVHUB_TOKEN`` of the service), if it has one.
        timeout_s: time allowed for each request.
        transport: an httpx transport instead of the network (tests).

    Example:
        >>> with RolloutClient("http://127.0.0.1:8100") as client:  # doctest: +SKIP
        ...     job = client.submit({"env_urls": ["http://127.0.0.1:8000"], "count": 4, "policy": ...})
        ...     final = client.wait(job.job_id)
    """

    def __init__(
        self,
        base_url: str,
        *,
        token: str | None = None,
        timeout_s: float = 60.0,
        transport: httpx.BaseTransport | None = None,
    ) -> None:
        self._proto = _RolloutProtocol(base_url, token=token)
        self._http = httpx.Client(base_url=self._proto.base_url, timeout=timeout_s, transport=transport)

    def _run(self, call: _Call) -> Any:
        for attempt in range(self._proto.attempts):
            try:
                reply = self._http.request(
                    call.method, call.path, content=call.body, headers=self._proto.headers
                )
            except (httpx.ConnectError, httpx.ConnectTimeout) as exc:  # never reached the service
                if attempt + 1 == self._proto.attempts:
                    raise self._proto.unreachable(attempt + 1, exc) from exc
                time.sleep(self._proto.backoff(attempt))
                continue
            except httpx.TransportError as exc:
                raise self._proto.unreachable(attempt + 1, exc) from exc
            return self._proto.parse(call, reply.status_code, reply.content)
        raise AssertionError("unreachable")  # pragma: no cover

    def submit(self, request: Mapping[str, Any] | BaseModel) -> RolloutJobCreated:
        """Start a job (``POST /v1/rollouts``); 422 errors name what to fix."""
        return self._run(self._proto.submit(request))  # type: ignore[no-any-return]

    def get(self, job_id: str) -> RolloutJobProgress:
        """Where a job stands."""
        return self._run(self._proto.get(job_id))  # type: ignore[no-any-return]

    def list(self) -> RolloutJobList:
        """Every job the service knows."""
        return self._run(self._proto.list())  # type: ignore[no-any-return]

    def cancel(self, job_id: str) -> RolloutJobProgress:
        """Cancel a job (the only way a job becomes ``cancelled``)."""
        return self._run(self._proto.cancel(job_id))  # type: ignore[no-any-return]

    def retry(self, job_id: str) -> RolloutJobProgress:
        """Run a failed job again; its published groups are kept."""
        return self._run(self._proto.retry(job_id))  # type: ignore[no-any-return]

    def wait(self, job_id: str, *, timeout_s: float | None = None, poll_s: float = 0.5) -> RolloutJobProgress:
        """Poll until the job is done, failed or cancelled; returns its final progress.

        Raises:
            RolloutJobTimeout: ``timeout_s`` passed first (the job keeps running).
        """
        deadline = None if timeout_s is None else time.monotonic() + timeout_s
        while not self._proto.finished(progress := self.get(job_id)):
            if deadline is not None and time.monotonic() >= deadline:
                raise self._proto.timed_out(job_id, float(timeout_s or 0), progress)
            time.sleep(poll_s)
        return progress

    def close(self) -> None:
        self._http.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()


class AsyncRolloutClient:
    """Asynchronous twin of :class:`RolloutClient` (same methods, awaited; ``async with``)."""

    def __init__(
        self,
        base_url: str,
        *,
        token: str | None = None,
        timeout_s: float = 60.0,
        transport: httpx.AsyncBaseTransport | None = None,
    ) -> None:
        self._proto = _RolloutProtocol(base_url, token=token)
        self._http = httpx.AsyncClient(base_url=self._proto.base_url, timeout=timeout_s, transport=transport)

    async def _run(self, call: _Call) -> Any:
        for attempt in range(self._proto.attempts):
            try:
                reply = await self._http.request(
                    call.method, call.path, content=call.body, headers=self._proto.headers
                )
            except (httpx.ConnectError, httpx.ConnectTimeout) as exc:
                if attempt + 1 == self._proto.attempts:
                    raise self._proto.unreachable(attempt + 1, exc) from exc
                await asyncio.sleep(self._proto.backoff(attempt))
                continue
            except httpx.TransportError as exc:
                raise self._proto.unreachable(attempt + 1, exc) from exc
            return self._proto.parse(call, reply.status_code, reply.content)
        raise AssertionError("unreachable")  # pragma: no cover

    async def submit(self, request: Mapping[str, Any] | BaseModel) -> RolloutJobCreated:
        """Start a job (``POST /v1/rollouts``); 422 errors name what to fix."""
        return await self._run(self._proto.submit(request))  # type: ignore[no-any-return]

    async def get(self, job_id: str) -> RolloutJobProgress:
        """Where a job stands."""
        return await self._run(self._proto.get(job_id))  # type: ignore[no-any-return]

    async def list(self) -> RolloutJobList:
        """Every job the service knows."""
        return await self._run(self._proto.list())  # type: ignore[no-any-return]

    async def cancel(self, job_id: str) -> RolloutJobProgress:
        """Cancel a job (the only way a job becomes ``cancelled``)."""
        return await self._run(self._proto.cancel(job_id))  # type: ignore[no-any-return]

    async def retry(self, job_id: str) -> RolloutJobProgress:
        """Run a failed job again; its published groups are kept."""
        return await self._run(self._proto.retry(job_id))  # type: ignore[no-any-return]

    async def wait(
        self, job_id: str, *, timeout_s: float | None = None, poll_s: float = 0.5
    ) -> RolloutJobProgress:
        """Poll until the job is done, failed or cancelled; returns its final progress.

        Raises:
            RolloutJobTimeout: ``timeout_s`` passed first (the job keeps running).
        """
        deadline = None if timeout_s is None else time.monotonic() + timeout_s
        while not self._proto.finished(progress := await self.get(job_id)):
            if deadline is not None and time.monotonic() >= deadline:
                raise self._proto.timed_out(job_id, float(timeout_s or 0), progress)
            await asyncio.sleep(poll_s)
        return progress

    async def close(self) -> None:
        await self._http.aclose()

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self.close()

    def __enter__(self) -> None:
        raise TypeError(
            "AsyncRolloutClient is asynchronous: use `async with AsyncRolloutClient(...)`, or RolloutClient."
        )

    def __exit__(self, *args: object) -> None:  # pragma: no cover - __enter__ always raises
        pass
