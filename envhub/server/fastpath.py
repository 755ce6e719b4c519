"""Hot-path dispatch for the two requests a rollout sends thousands of times a second.

``POST /v1/sessions/{id}/step`` and ``POST /v1/batch/step`` are answered here, before FastAPI
sees them, because FastAPI's per-request machinery (middlewares, routing through included
routers, dependency solving) costs several times more CPU than the step itself. Measured on
the 2-core machine: about 400 µs of server CPU per REST step through FastAPI, about 100 µs
here (of which the middleware stack alone was 30 µs, hence the check before it).
The semantics are the FastAPI routes' exactly, and shared with them rather than restated:
the same pydantic models validate the body, the same token check
(:func:`envhub.server.deps.authorize`), the same body limit
(:func:`envhub.server.body.read_body`), the same :class:`SessionManager` calls and the same
error response (:func:`envhub.server.errors.error_response`). The route tests run on both
paths. The
routes stay declared in FastAPI for ``/openapi.json`` and ``/docs``, and every request this
layer does not recognise goes to FastAPI untouched.
"""

from __future__ import annotations

import json
from typing import Any

from pydantic import TypeAdapter, ValidationError
from starlette.types import Receive, Scope, Send

from envhub.core.errors import RequestValidationError
from envhub.core.wire import MAX_BATCH_ITEMS, BatchStepItem, StepRequest
from envhub.server.body import header_value, read_body
from envhub.server.deps import authorize
from envhub.server.errors import as_envhub_error, error_response
from envhub.server.routes.batch import render_slots

__all__ = ["HotPath"]

_STEP_PREFIX = "/v1/sessions/"
_STEP_SUFFIX = "/step"
_BATCH_STEP = "/v1/batch/step"
_BATCH_ITEMS: TypeAdapter[list[BatchStepItem]] = TypeAdapter(list[BatchStepItem])
_JSON_HEADERS = [(b"content-type", b"application/json")]


class HotPath:
    """Answers session steps and batch steps without FastAPI's routing and middlewares.

    :class:`envhub.server.app.EnvServerApp` calls :meth:`try_handle` first for every request;
    it returns ``False`` for anything that is not one of the two hot requests.

    Args:
        app: the FastAPI app (its ``state`` holds the manager, settings and metrics).
        max_body_bytes: the body limit (the ``BodyLimit`` middleware's, applied here too).
    """

    def __init__(self, app: Any, *, max_body_bytes: int) -> None:
        self.app = app
        self.limit = max_body_bytes

    async def try_handle(self, scope: Scope, receive: Receive, send: Send) -> bool:
        """Answer the request if it is a hot one; ``False`` means "not mine, route it"."""
        if scope["type"] != "http" or scope["method"] != "POST":
            return False
        path: str = scope["path"]
        if path == _BATCH_STEP:
            await self._answer(scope, receive, send, None)
            return True
        if path.startswith(_STEP_PREFIX) and path.endswith(_STEP_SUFFIX):
            sid = path[len(_STEP_PREFIX) : -len(_STEP_SUFFIX)]
            # Anything unusual in the id (a slash, too long) takes the documented slow path.
            if sid and "/" not in sid and len(sid) <= 255:
                await self._answer(scope, receive, send, sid)
                return True
        return False

    async def _answer(self, scope: Scope, receive: Receive, send: Send, sid: str | None) -> None:
        state = self.app.state
        try:
            authorize(state.settings, header_value(scope, b"authorization"))
            body = await read_body(scope, receive, self.limit)
            manager = state.manager
            if sid is not None:
                request = _validate(StepRequest.model_validate_json, body)
                payload = await manager.step(sid, request.action, request_id=request.request_id)
            else:
                items = _validate(_BATCH_ITEMS.validate_json, body)
                if len(items) > MAX_BATCH_ITEMS:
                    raise RequestValidationError(
                        [{"loc": ["body"], "msg": f"at most {MAX_BATCH_ITEMS} items", "type": "too_long"}]
                    )
                payload = render_slots(await manager.batch_step(items))
        except Exception as exc:  # every failure leaves as {code, message, detail}, as in FastAPI
            error = as_envhub_error(exc, path=scope["path"], method="POST")
            await error_response(error, state)(scope, receive, send)
            return
        await _send_json(send, 200, payload, _JSON_HEADERS)


def _validate(parse: Any, body: bytes) -> Any:
    try:
        return parse(body)
    except ValidationError as exc:
        # Same error locations FastAPI reports: the body's fields under "body".
        errors = [{**e, "loc": ["body", *e["loc"]]} for e in exc.errors(include_url=False)]
        raise RequestValidationError(json.loads(json.dumps(errors, default=str))) from exc


async def _send_json(send: Send, status: int, body: bytes, headers: list[tuple[bytes, bytes]]) -> None:
    # An explicit length keeps uvicorn from chunking the body (an extra frame and write per step).
    headers = [*headers, (b"content-length", str(len(body)).encode())]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})
