"""``/v1/sessions``: create, reset, step, inspect and delete one session."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Depends, Path, Response

from envhub.core.wire import (
    ResetRequest,
    ResetResponse,
    SessionClosed,
    SessionCreate,
    SessionCreated,
    SessionState,
    StepRequest,
    StepResponse,
)
from envhub.server.deps import ManagerDep, require_token
from envhub.server.routes._responses import ERRORS, SESSION_ERRORS, json_bytes

__all__ = [
    "SessionId",
    "create_session",
    "delete_session",
    "get_session",
    "history_png",
    "reset_session",
    "router",
    "step_session",
]

router = APIRouter(
    prefix="/v1/sessions", tags=["sessions"], dependencies=[Depends(require_token)], responses=ERRORS
)

SessionId = Annotated[str, Path(max_length=255, description="The id POST /v1/sessions returned.")]


@router.post("", status_code=201, response_model=SessionCreated)
async def create_session(body: SessionCreate, manager: ManagerDep) -> SessionCreated:
    """Create a session (an env instance on one worker). Reset it before stepping."""
    record = await manager.create(body.env_kwargs, history=body.history)
    return SessionCreated(session_id=record.session_id, env_id=manager.env_id, expires_at=record.expires_at)


@router.post("/{session_id}/reset", response_model=ResetResponse, responses=SESSION_ERRORS)
async def reset_session(session_id: SessionId, body: ResetRequest, manager: ManagerDep) -> Response:
    """Start an episode: ``task_id`` picks the task, ``seed`` makes it reproducible."""
    payload = await manager.reset(
        session_id, seed=body.seed, task_id=body.task_id, options=body.options, request_id=body.request_id
    )
    return json_bytes(payload)


@router.post("/{session_id}/step", response_model=StepResponse, responses=SESSION_ERRORS)
async def step_session(session_id: SessionId, body: StepRequest, manager: ManagerDep) -> Response:
    """Apply one text action. A retry with the same ``request_id`` returns the stored result."""
    return json_bytes(await manager.step(session_id, body.action, request_id=body.request_id))


@router.get(
    "/{session_id}/history.png",
    response_class=Response,
    responses={**SESSION_ERRORS, 200: {"content": {"image/png": {}}}},
)
async def history_png(session_id: SessionId, manager: ManagerDep) -> Response:
    """The session's latest history image (rendered after its last step; the blank page before).

    Only for sessions created with ``history``; ``X-History-Step`` says which step it follows.
    """
    png, step = await manager.history_png(session_id)
    return Response(png, media_type="image/png", headers={"X-History-Step": str(step)})


@router.get("/{session_id}", response_model=SessionState, responses=SESSION_ERRORS)
async def get_session(session_id: SessionId, manager: ManagerDep) -> Response:
    """Where the session stands: task, step count, last observation, expiry."""
    return json_bytes(await manager.state(session_id))


@router.delete("/{session_id}", response_model=SessionClosed, responses=SESSION_ERRORS)
async def delete_session(session_id: SessionId, manager: ManagerDep) -> SessionClosed:
    """Close the session and free its slot."""
    await manager.close(session_id)
    return SessionClosed(session_id=session_id)
