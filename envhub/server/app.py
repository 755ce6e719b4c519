"""``create_app(settings)``: the env server as a FastAPI app.

The app's resources (worker pool, session manager, metrics) are created in the lifespan and
live on ``app.state``; nothing is created at import time. Routers are composed here, one per
resource (see :mod:`envhub.server.routes` and :mod:`envhub.server.openenv`).
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from fastapi import FastAPI
from starlette.types import ASGIApp, Message, Receive, Scope, Send

import envhub
from envhub.core.errors import PayloadTooLargeError
from envhub.server.body import header_value, read_body
from envhub.server.errors import error_response, install_error_handler
from envhub.server.fastpath import HotPath
from envhub.server.metrics import ServerMetrics
from envhub.server.openenv import router as openenv_router
from envhub.server.routes import batch_router, groups_router, ops_router, sessions_router, tasks_router
from envhub.server.sessions import SessionManager
from envhub.server.settings import ServerSettings
from envhub.server.workers import WorkerPool

__all__ = ["UVICORN_WS", "BodyLimit", "EnvServerApp", "check_env_id", "create_app", "uvicorn_ws_options"]

#: The WebSocket implementation uvicorn serves ``/ws`` with. The sans-I/O one answers a step
#: with about a third less server CPU than uvicorn's default (``websockets``'s asyncio
#: protocol): 53 against 78 us per step with OpenEnv's client on the 2-core machine, same
#: messages, same ASGI events.
UVICORN_WS = "websockets-sansio"


def uvicorn_ws_options(settings: ServerSettings) -> dict[str, Any]:
    """uvicorn's WebSocket options for the env server (``envhub serve`` and the test server).

    ``max_body_bytes`` binds ``/ws`` messages as it binds request bodies: a larger frame closes
    the connection with 1009 (message too big) before it is buffered, where REST answers 413.
    """
    return {"ws": UVICORN_WS, "ws_max_size": settings.max_body_bytes}


def check_env_id(env_id: str) -> None:
    """Fail at startup, not at the first session, when ``env_id`` names nothing.

    Raises:
        UnknownEnvError: neither a catalogue id/family nor an importable ``module:Class``.
    """
    from envhub.envs.registry import resolve

    resolve(env_id)


class BodyLimit:
    """ASGI middleware: answer 413 ``PAYLOAD_TOO_LARGE`` for bodies over ``limit`` bytes.

    A declared ``Content-Length`` is checked before reading anything; a chunked body is read
    up to the limit and then replayed to the app.
    """

    def __init__(self, app: ASGIApp, *, limit: int) -> None:
        self.app = app
        self.limit = limit

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        declared = header_value(scope, b"content-length")
        if declared is None and scope["method"] in ("GET", "HEAD", "DELETE", "OPTIONS"):
            await self.app(scope, receive, send)
            return
        if declared is not None and declared.isdigit() and int(declared) <= self.limit:
            await self.app(scope, receive, send)  # the app reads a body of a length it was told
            return
        try:
            body = await read_body(scope, receive, self.limit)
        except PayloadTooLargeError as error:
            app = scope.get("app")
            await error_response(error, getattr(app, "state", None))(scope, receive, send)
            return
        replayed = False

        async def replay() -> Message:
            nonlocal replayed
            if not replayed:
                replayed = True
                return {"type": "http.request", "body": body, "more_body": False}
            return await receive()

        await self.app(scope, replay, send)


class EnvServerApp(FastAPI):
    """The FastAPI app with the hot path (:mod:`envhub.server.fastpath`) checked first.

    Step requests skip the middleware stack and routing; everything else is plain FastAPI.
    """

    hot_path: HotPath | None = None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if self.hot_path is not None and scope["type"] == "http":
            scope["app"] = self
            if await self.hot_path.try_handle(scope, receive, send):
                return
        await super().__call__(scope, receive, send)


def create_app(settings: ServerSettings | None = None) -> FastAPI:
    """Build the env server app.

    Args:
        settings: how to serve; defaults to ``ServerSettings()`` (``ENVHUB_*`` variables).

    Returns:
        The FastAPI app; its lifespan starts and stops the worker pool.

    Raises:
        UnknownEnvError: ``settings.env_id`` names no env.
    """
    settings = settings or ServerSettings()
    check_env_id(settings.env_id)

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        holder: dict[str, Any] = {}
        metrics = ServerMetrics(
            settings.env_id,
            active_sessions=lambda: holder["manager"].active,
            workers_alive=lambda: sum(s.alive for s in holder["manager"].pool.slots),
        )
        pool = WorkerPool(
            env_id=settings.env_id,
            size=settings.workers,
            start_method=settings.start_method,
            step_timeout_s=settings.step_timeout,
            on_death=lambda index, generation, reason: holder["manager"].on_worker_death(
                index, generation, reason
            ),
            on_restart=lambda index: metrics.worker_restarts.inc(),
        )
        manager = SessionManager(
            pool=pool,
            env_id=settings.env_id,
            max_sessions=settings.max_sessions,
            ttl_s=settings.session_ttl,
            step_timeout_s=settings.step_timeout,
            retry_after_s=settings.retry_after,
            metrics=metrics,
        )
        holder["manager"] = manager
        app.state.metrics, app.state.manager = metrics, manager
        await manager.start()
        try:
            yield
        finally:
            await manager.stop()

    app = EnvServerApp(
        title=f"envhub env server: {settings.env_id}",
        version=envhub.__version__,
        description=(
            "Stateful sessions, GRPO groups and batch steps over any envhub environment, plus an "
            "OpenEnv-compatible surface (/reset, /step, /state, /schema, /metadata, WS /ws). Errors are "
            "{code, message, detail}; send 'Authorization: Bearer <token>' when the server has a token."
        ),
        lifespan=lifespan,
    )
    app.state.settings = settings
    install_error_handler(app)
    app.add_middleware(BodyLimit, limit=settings.max_body_bytes)
    app.hot_path = HotPath(app, max_body_bytes=settings.max_body_bytes)
    for router in (ops_router, sessions_router, groups_router, batch_router, tasks_router, openenv_router):
        app.include_router(router)
    return app
