"""The one exception handler: every error leaves the server as ``{code, message, detail}``.

Domain errors (``EnvhubError``) keep their code and status; FastAPI's validation errors become
``VALIDATION_ERROR`` (422) with pydantic's detail; unknown routes become ``NOT_FOUND`` /
``METHOD_NOT_ALLOWED``; anything else is ``INTERNAL_ERROR`` (500) and is logged.
"""

from __future__ import annotations

import logging

from fastapi import FastAPI, Request
from fastapi.encoders import jsonable_encoder
from fastapi.exceptions import RequestValidationError as FastAPIValidationError
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException as StarletteHTTPException

from envhub.core.errors import (
    CapacityReachedError,
    EnvhubError,
    InternalServerError,
    RequestValidationError,
    RouteNotFoundError,
    UnauthorizedError,
)

__all__ = ["as_envhub_error", "handle_error", "install_error_handler"]

_log = logging.getLogger("envhub.server")


def as_envhub_error(exc: Exception, *, path: str = "", method: str = "") -> EnvhubError:
    """Translate any exception raised while serving into the envhub error it stands for."""
    if isinstance(exc, EnvhubError):
        return exc
    if isinstance(exc, FastAPIValidationError):
        # The raw input and exception objects in ctx are not JSON; the encoder makes them text.
        return RequestValidationError(jsonable_encoder(exc.errors(), custom_encoder={Exception: str}))
    if isinstance(exc, StarletteHTTPException):
        if exc.status_code in (404, 405):
            return RouteNotFoundError(path=path, method=method, status_code=exc.status_code)
        if exc.status_code < 500:
            # e.g. FastAPI's 400 for a body it cannot parse: the client's input is at fault.
            return RequestValidationError([{"loc": ["body"], "msg": str(exc.detail), "type": "invalid_body"}])
        return InternalServerError("HTTPException", str(exc.detail))
    _log.exception("unhandled error while serving %s %s", method, path, exc_info=exc)
    return InternalServerError(type(exc).__name__, str(exc))


async def handle_error(request: Request, exc: Exception) -> JSONResponse:
    """The exception handler registered for every exception type."""
    error = as_envhub_error(exc, path=request.url.path, method=request.method)
    metrics = getattr(request.app.state, "metrics", None)
    if metrics is not None:
        metrics.count_error(str(error.code))
    headers = {}
    if isinstance(error, CapacityReachedError):
        headers["Retry-After"] = str(error.retry_after_s)
    if isinstance(error, UnauthorizedError):
        headers["WWW-Authenticate"] = "Bearer"
    return JSONResponse(error.to_dict(), status_code=error.status_code, headers=headers)


def install_error_handler(app: FastAPI) -> None:
    """Register :func:`handle_error` for domain, validation, HTTP and unexpected errors."""
    for exc_type in (EnvhubError, FastAPIValidationError, StarletteHTTPException, Exception):
        app.add_exception_handler(exc_type, handle_error)  # type: ignore[arg-type]
