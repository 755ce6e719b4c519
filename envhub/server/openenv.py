"""The OpenEnv-compatible surface: ``/reset``, ``/step``, ``/state``, ``/schema``, ``/metadata``, ``WS /ws``.

Shapes follow ``openenv-core`` 0.3.0 so its clients work unmodified (reference notes:
``shared/reference/anchors_hubs.md`` §4.1). The action object is ``{"action": "<text>"}``
(``{"message": ...}`` is read as an alias); the observation object carries the text, the
gymnasium flags and the env's ``info`` (OpenEnv drops metadata; envhub keeps it).

Plain HTTP ``/reset`` and ``/step`` are stateless, as in OpenEnv: each runs on a fresh env that
is closed afterwards (``/step`` resets it first, since envhub envs need a reset). Giving a
session id (body ``session_id`` or header ``X-Session-Id``, from ``POST /v1/sessions``) makes
them act on that session instead. ``WS /ws`` is one session per connection, as in OpenEnv.
Errors on WebSocket use OpenEnv's codes (``INVALID_JSON``, ``UNKNOWN_TYPE``,
``VALIDATION_ERROR``, ``EXECUTION_ERROR``, ``CAPACITY_REACHED``, ``FACTORY_ERROR``,
``SESSION_ERROR``) with envhub's own code alongside as ``envhub_code``.
"""

from __future__ import annotations

import contextlib
import inspect
import json
from functools import cache
from typing import Annotated, Any

from fastapi import APIRouter, Depends, Header, Request, Response, WebSocket, WebSocketDisconnect
from pydantic import ValidationError

import envhub
from envhub.core.errors import (
    CapacityReachedError,
    EnvhubError,
    RequestValidationError,
    UnauthorizedError,
    error_from_wire,
)
from envhub.core.wire import (
    OpenEnvAction,
    OpenEnvMetadata,
    OpenEnvObservation,
    OpenEnvResetRequest,
    OpenEnvSchema,
    OpenEnvState,
    OpenEnvStepRequest,
    OpenEnvStepResponse,
)
from envhub.server.deps import ManagerDep, require_token, websocket_token_ok
from envhub.server.errors import error_response
from envhub.server.messages import ResetOp, StepOp
from envhub.server.routes._responses import AUTH_ERRORS, SESSION_ERRORS, json_bytes
from envhub.server.sessions import SessionManager

__all__ = [
    "SessionHeader",
    "metadata",
    "parse_action",
    "reset",
    "router",
    "schema",
    "state",
    "step",
    "websocket_session",
]

router = APIRouter(tags=["openenv"])

SessionHeader = Annotated[
    str | None, Header(alias="X-Session-Id", max_length=255, description="Act on this envhub session.")
]


def parse_action(action: dict[str, Any]) -> str:
    """The text of an OpenEnv action object.

    Raises:
        RequestValidationError: the object is not ``{"action": str}`` (or ``{"message": str}``).
    """
    if "action" not in action and "message" in action:
        action = {"action": action["message"], **{k: v for k, v in action.items() if k != "message"}}
    try:
        return OpenEnvAction.model_validate(action).action
    except ValidationError as exc:
        errors = [{**e, "loc": ["body", "action", *e["loc"]]} for e in exc.errors(include_url=False)]
        raise RequestValidationError(json.loads(json.dumps(errors, default=str))) from exc


def _reset_args(body: OpenEnvResetRequest) -> tuple[int | None, str | None, dict[str, Any]]:
    options = (body.model_extra or {}).get("options")
    return body.seed, body.task_id, dict(options) if isinstance(options, dict) else {}


def _unwrap(result: tuple[bool, Any]) -> bytes:
    ok, payload = result
    if ok:
        return payload  # type: ignore[no-any-return]
    raise error_from_wire(payload["code"], payload["message"], payload.get("detail"))


@router.post(
    "/reset",
    response_model=OpenEnvStepResponse,
    dependencies=[Depends(require_token)],
    responses=SESSION_ERRORS,
)
async def reset(
    manager: ManagerDep, x_session_id: SessionHeader = None, body: OpenEnvResetRequest | None = None
) -> Response:
    """OpenEnv reset: stateless unless a session id is given."""
    body = body or OpenEnvResetRequest()
    seed, task_id, options = _reset_args(body)
    sid = body.session_id or x_session_id
    extra: dict[str, Any] = {"episode_id": body.episode_id}
    if sid is not None:
        extra["session_id"] = sid
        return json_bytes(
            await manager.reset(
                sid, seed=seed, task_id=task_id, options=options, style="openenv", extra=extra
            )
        )
    extra["expires_at"] = 0.0
    (result,) = await manager.oneshot([ResetOp("@", seed, task_id, options, None, "openenv", extra)])
    return json_bytes(_unwrap(result))


@router.post(
    "/step",
    response_model=OpenEnvStepResponse,
    dependencies=[Depends(require_token)],
    responses=SESSION_ERRORS,
)
async def step(body: OpenEnvStepRequest, manager: ManagerDep, x_session_id: SessionHeader = None) -> Response:
    """OpenEnv step: on a fresh, freshly reset env unless a session id is given."""
    action = parse_action(body.action)
    sid = body.session_id or x_session_id
    if sid is not None:
        return json_bytes(
            await manager.step(
                sid, action, request_id=body.request_id, style="openenv", extra={"session_id": sid}
            )
        )
    extra = {"expires_at": 0.0}
    _reset_result, result = await manager.oneshot(
        [
            ResetOp("@", None, None, {}, None, "openenv", extra),
            StepOp("@", action, None, "openenv", extra),
        ]
    )
    _unwrap(_reset_result)
    return json_bytes(_unwrap(result))


@router.get(
    "/state", response_model=OpenEnvState, dependencies=[Depends(require_token)], responses=SESSION_ERRORS
)
async def state(manager: ManagerDep, x_session_id: SessionHeader = None) -> Response:
    """OpenEnv state: a fresh env's (stateless) or the session's given by ``X-Session-Id``."""
    if x_session_id is None:
        return json_bytes(OpenEnvState().model_dump_json().encode())
    return json_bytes(await manager.state(x_session_id, style="openenv"))


@router.get(
    "/schema", response_model=OpenEnvSchema, dependencies=[Depends(require_token)], responses=AUTH_ERRORS
)
async def schema() -> OpenEnvSchema:
    """JSON schemas of the action, observation and state objects."""
    return OpenEnvSchema(
        action=OpenEnvAction.model_json_schema(),
        observation=OpenEnvObservation.model_json_schema(),
        state=OpenEnvState.model_json_schema(),
    )


@router.get(
    "/metadata", response_model=OpenEnvMetadata, dependencies=[Depends(require_token)], responses=AUTH_ERRORS
)
async def metadata(request: Request) -> OpenEnvMetadata:
    """Name, description and README (the env class's docstring) of the served env."""
    return _metadata(request.app.state.settings.env_id)


@cache
def _metadata(env_id: str) -> OpenEnvMetadata:
    from envhub.core.registry import load_entry_point
    from envhub.envs.registry import resolve

    description, entry_point = f"envhub environment {env_id}", env_id
    with contextlib.suppress(EnvhubError):
        spec = resolve(env_id)
        description, entry_point = spec.description, spec.entry_point
    readme = None
    with contextlib.suppress(Exception):  # metadata must answer even if the env cannot import here
        readme = inspect.getdoc(load_entry_point(entry_point))
        if description.startswith("envhub environment") and readme:
            description = readme.splitlines()[0]
    return OpenEnvMetadata(
        name=env_id,
        description=description,
        readme_content=readme,
        version=envhub.__version__,
        author="envhub",
    )


# -- WebSocket ----------------------------------------------------------------------------------

_WS_CODES = {
    "VALIDATION_ERROR": "VALIDATION_ERROR",
    "CAPACITY_REACHED": "CAPACITY_REACHED",
    "SESSION_NOT_FOUND": "SESSION_ERROR",
    "SESSION_EXPIRED": "SESSION_ERROR",
    "SESSION_LOST": "SESSION_ERROR",
    "STEP_TIMEOUT": "SESSION_ERROR",
}


def _ws_error(code: str, message: str, **extra: Any) -> str:
    return json.dumps({"type": "error", "data": {"message": message, "code": code, **extra}}, default=str)


def _ws_envhub_error(error: EnvhubError) -> str:
    code = _WS_CODES.get(str(error.code), "EXECUTION_ERROR")
    return _ws_error(code, error.message, envhub_code=str(error.code), detail=error.detail)


@router.websocket("/ws")
async def websocket_session(websocket: WebSocket) -> None:
    """One OpenEnv session per connection: messages ``reset``, ``step``, ``state``, ``close``."""
    if not websocket_token_ok(websocket):
        if "websocket.http.response" in websocket.scope.get("extensions", {}):
            # The handshake is refused with REST's typed answer: 401 UNAUTHORIZED and the fix.
            await websocket.send_denial_response(error_response(UnauthorizedError(), websocket.app.state))
        else:  # a server without the denial-response extension: the handshake fails with 403
            await websocket.close(code=1008, reason="envhub: missing or wrong bearer token (--token)")
        return
    await websocket.accept()
    manager: SessionManager = websocket.app.state.manager
    try:
        record = await manager.create({})
    except EnvhubError as exc:
        code = "CAPACITY_REACHED" if isinstance(exc, CapacityReachedError) else "FACTORY_ERROR"
        await websocket.send_text(_ws_error(code, exc.message, envhub_code=str(exc.code)))
        await websocket.close()
        return
    sid = record.session_id
    try:
        while True:
            reply = await _ws_reply(manager, sid, await _receive_text(websocket))
            if reply is None:
                break
            await websocket.send_text(reply)
    except WebSocketDisconnect:
        pass
    finally:
        with contextlib.suppress(EnvhubError):
            await manager.close(sid)
    with contextlib.suppress(RuntimeError, WebSocketDisconnect):  # the client may have gone already
        await websocket.close()


async def _receive_text(websocket: WebSocket) -> str:
    """The next message as text; a binary frame is read as UTF-8 rather than failing the socket.

    Raises:
        WebSocketDisconnect: the client went away.
    """
    message = await websocket.receive()
    if message["type"] == "websocket.disconnect":
        raise WebSocketDisconnect(message.get("code", 1000), message.get("reason"))
    text = message.get("text")
    if text is not None:
        return str(text)
    # Not UTF-8 JSON: the replacement characters make it an INVALID_JSON answer, not a crash.
    return bytes(message.get("bytes") or b"").decode("utf-8", errors="replace")


async def _ws_reply(manager: SessionManager, sid: str, raw: str) -> str | None:
    """The answer to one WebSocket message (``None``: the client asked to close)."""
    try:
        message = json.loads(raw)
    except json.JSONDecodeError as exc:
        return _ws_error("INVALID_JSON", f"Invalid JSON: {exc}")
    kind = message.get("type", "") if isinstance(message, dict) else ""
    data = message.get("data") if isinstance(message, dict) else None
    data = data if isinstance(data, dict) else {}
    try:
        if kind == "step":
            payload = await manager.step(sid, parse_action(data), style="openenv", extra={"session_id": sid})
            return '{"type":"observation","data":' + payload.decode() + "}"
        if kind == "reset":
            body = OpenEnvResetRequest.model_validate(data)
            seed, task_id, options = _reset_args(body)
            extra = {"episode_id": body.episode_id, "session_id": sid}
            payload = await manager.reset(
                sid, seed=seed, task_id=task_id, options=options, style="openenv", extra=extra
            )
            return '{"type":"observation","data":' + payload.decode() + "}"
        if kind == "state":
            return '{"type":"state","data":' + (await manager.state(sid, style="openenv")).decode() + "}"
        if kind == "close":
            return None
    except ValidationError as exc:
        return _ws_error("VALIDATION_ERROR", "Invalid message", errors=exc.errors(include_url=False))
    except EnvhubError as exc:
        return _ws_envhub_error(exc)
    return _ws_error("UNKNOWN_TYPE", f"Unknown message type: {kind}")
