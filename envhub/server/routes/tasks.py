"""``/v1/tasks``: page through the served env's task ids."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Depends, Query, Response

from envhub.core.wire import TaskList
from envhub.server.deps import ManagerDep, require_token
from envhub.server.routes._responses import ERRORS, json_bytes

__all__ = ["list_tasks", "router"]

router = APIRouter(
    prefix="/v1/tasks", tags=["tasks"], dependencies=[Depends(require_token)], responses=ERRORS
)


@router.get("", response_model=TaskList, responses={504: ERRORS[422]})
async def list_tasks(
    manager: ManagerDep,
    split: Annotated[str | None, Query(max_length=64, description="Split (default: the env's).")] = None,
    offset: Annotated[int, Query(ge=0, description="Index of the first id.")] = 0,
    limit: Annotated[int, Query(ge=1, le=10_000, description="Most ids to return.")] = 100,
) -> Response:
    """Task ids of a split, in the env's stable order (use them as ``task_id``)."""
    return json_bytes(await manager.tasks(split, offset, limit))
