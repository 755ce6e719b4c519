"""Shared response helpers and the documented error responses of each route."""

from __future__ import annotations

from typing import Any

from fastapi import Response

from envhub.core.wire import ErrorBody

__all__ = ["AUTH_ERRORS", "ERRORS", "SESSION_ERRORS", "json_bytes"]


def json_bytes(body: bytes, status_code: int = 200) -> Response:
    """A JSON response from bytes already rendered by a worker (no second serialization)."""
    return Response(content=body, status_code=status_code, media_type="application/json")


def _doc(*codes: int) -> dict[int | str, dict[str, Any]]:
    return {code: {"model": ErrorBody} for code in codes}


#: Errors of routes that only read server state.
AUTH_ERRORS = _doc(401)
#: Errors any /v1 route can answer.
ERRORS = _doc(400, 401, 413, 422, 500, 503)
#: Errors of routes that address one session.
SESSION_ERRORS = _doc(400, 401, 404, 409, 410, 413, 422, 500, 503, 504)
