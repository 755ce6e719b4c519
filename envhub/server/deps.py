"""Request dependencies: the session manager, settings and the bearer-token check."""

from __future__ import annotations

import hmac
from typing import Annotated

from fastapi import Depends, Request, WebSocket

from envhub.core.errors import UnauthorizedError
from envhub.server.sessions import SessionManager
from envhub.server.settings import ServerSettings

__all__ = [
    "ManagerDep",
    "SettingsDep",
    "authorize",
    "get_manager",
    "get_settings",
    "require_token",
    "token_ok",
    "websocket_token_ok",
]


async def get_manager(request: Request) -> SessionManager:
    """The app's session manager (created in the lifespan)."""
    # async on purpose: FastAPI runs sync dependencies in a thread pool, costly per step.
    return request.app.state.manager  # type: ignore[no-any-return]


async def get_settings(request: Request) -> ServerSettings:
    """The settings the app was created with."""
    return request.app.state.settings  # type: ignore[no-any-return]


ManagerDep = Annotated[SessionManager, Depends(get_manager)]
SettingsDep = Annotated[ServerSettings, Depends(get_settings)]


def token_ok(settings: ServerSettings, authorization: str | None, query_token: str | None = None) -> bool:
    """Whether a request carries the server's token (always true when none is set)."""
    if settings.token is None:
        return True
    expected = settings.token.get_secret_value().encode()
    given = ""
    if authorization and authorization[:7].lower() == "bearer ":
        given = authorization[7:].strip()
    elif query_token:
        given = query_token
    # Constant-time comparison so the token cannot be guessed byte by byte from timings.
    return hmac.compare_digest(given.encode(), expected)


def authorize(settings: ServerSettings, authorization: str | None) -> None:
    """The token check of every protected request, on both request paths.

    Args:
        settings: the server's settings (no token set: every request passes).
        authorization: the request's ``Authorization`` header.

    Raises:
        UnauthorizedError: the token is missing or wrong.
    """
    if settings.token is not None and not token_ok(settings, authorization):
        raise UnauthorizedError()


async def require_token(request: Request) -> None:
    """Router-level dependency: 401 ``UNAUTHORIZED`` without the right bearer token.

    Raises:
        UnauthorizedError: the token is missing or wrong.
    """
    authorize(request.app.state.settings, request.headers.get("authorization"))


def websocket_token_ok(websocket: WebSocket) -> bool:
    """The WebSocket form: ``Authorization`` header or ``?token=`` (browsers cannot set headers)."""
    settings: ServerSettings = websocket.app.state.settings
    return token_ok(settings, websocket.headers.get("authorization"), websocket.query_params.get("token"))
