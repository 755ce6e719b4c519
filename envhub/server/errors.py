"""The one exception handler: every error leaves the server as ``{code, message, detail}``.

Domain errors (``EnvhubError``) keep their code and status; FastAPI's validation errors become
``VALIDATION_ERROR`` (422) with pydantic's detail; unknown routes become ``NOT_FOUND`` /
``METHOD_NOT_ALLOWED``; anything else is ``INTERNAL_ERROR`` (500) and is logged.

:func:`error_response` is the one HTTP form of an error (body, status, ``Retry-After`` and
``WWW-Authenticate`` headers, the error metric); the FastAPI handler, the body-limit
middleware and the hot path (:mod:`envhub.server.fastpath`) all answer through it.
"""

from __future__ import annotations

import json
import logging
from typing import Any

from fastapi import FastAPI, Request
from fastapi.encoders import jsonable_encoder
from fastapi.exceptions import RequestValidationError as FastAPIValidationError
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.responses import Response

from envhub.core.errors import (
    CapacityReachedError,
    EnvhubError,
    InternalServerError,
    RequestValidationError,
    RouteNotFoundError,
    UnauthorizedError,
)
from envhub.core.wire import redact

__all__ = ["as_envhub_error", "error_response", "handle_error", "install_error_handler"]

_log = logging.getLogger("envhub.server")


def as_envhub_error(exc: Exception, *, path: str = "", method: str = "") -> EnvhubError:
    """Translate any exception raised while serving into the envhub error it stands for."""
    if isinstance(exc, EnvhubError):
        return exc
    if isinstance(exc, FastAPIValidationError):
        # The raw input and exception objects in ctx are not JSON; the encoder makes them text.
        # Credentials a refused body carries (a policy's api_key, an env_token) are masked.
        errors = [{**e, "input": redact(e["input"])} if "input" in e else e for e in exc.errors()]
        return RequestValidationError(jsonable_encoder(errors, custom_encoder={Exception: str}))
    if isinstance(exc, StarletteHTTPException):
        if exc.status_code in (404, 405):
            return RouteNotFoundError(path=path, method=method, status_code=exc.status_code)
        if exc.status_code < 500:
            # e.g. FastAPI's 400 for a body it cannot parse: the client's input is at fault.
            return RequestValidationError([{"loc": ["body"], "msg": str(exc.detail), "type": "invalid_body"}])
        return InternalServerError("HTTPException", str(exc.detail))
    _log.exception("unhandled error while serving %s %s", method, path, exc_info=exc)
    return InternalServerError(type(exc).__name__, str(exc))


def error_response(error: EnvhubError, state: Any) -> Response:
    """The HTTP answer for ``error``, counted in the app's error metric.

    Args:
        error: what went wrong.
        state: the app's ``state`` (its ``metrics``, once the lifespan made them, count the code).

    Returns:
        A JSON response (also an ASGI app: ``await response(scope, receive, send)``).
    """
    metrics = getattr(state, "metrics", None)
    if metrics is not None:
        metrics.count_error(str(error.code))
    headers = {}
    if isinstance(error, CapacityReachedError):
        headers["Retry-After"] = str(error.retry_after_s)
    if isinstance(error, UnauthorizedError):
        headers["WWW-Authenticate"] = "Bearer"
    # default=str: a detail value JSON cannot hold must not turn an error into a crash.
    body = json.dumps(error.to_dict(), default=str, ensure_ascii=False, separators=(",", ":"))
    return Response(body, status_code=error.status_code, headers=headers, media_type="application/json")


async def handle_error(request: Request, exc: Exception) -> Response:
    """The exception handler registered for every exception type."""
    error = as_envhub_error(exc, path=request.url.path, method=request.method)
    return error_response(error, request.app.state)


def install_error_handler(app: FastAPI) -> None:
    """Register :func:`handle_error` for domain, validation, HTTP and unexpected errors."""
    for exc_type in (EnvhubError, FastAPIValidationError, StarletteHTTPException, Exception):
        app.add_exception_handler(exc_type, handle_error)  # type: ignore[arg-type]
