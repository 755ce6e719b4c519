"""``/v1/batch``: step or reset many sessions in one request, one slot per item."""

from __future__ import annotations

import json
from typing import Annotated

from fastapi import APIRouter, Body, Depends, Response

from envhub.core.wire import (
    MAX_BATCH_ITEMS,
    BatchResetItem,
    BatchResetResponse,
    BatchStepItem,
    BatchStepResponse,
)
from envhub.server.deps import ManagerDep, require_token
from envhub.server.messages import OpResult
from envhub.server.routes._responses import ERRORS, json_bytes

__all__ = ["ResetItems", "StepItems", "batch_reset", "batch_step", "render_slots", "router"]

router = APIRouter(
    prefix="/v1/batch", tags=["batch"], dependencies=[Depends(require_token)], responses=ERRORS
)

StepItems = Annotated[list[BatchStepItem], Body(max_length=MAX_BATCH_ITEMS, description="Items, in order.")]
ResetItems = Annotated[list[BatchResetItem], Body(max_length=MAX_BATCH_ITEMS, description="Items, in order.")]


def render_slots(results: list[OpResult]) -> bytes:
    """``{"results": [...]}`` from worker results: ok payloads are already JSON bytes."""
    parts = []
    for ok, payload in results:
        if ok:
            parts.append(b'{"ok":true,"result":' + payload + b',"error":null}')
        else:
            parts.append(b'{"ok":false,"result":null,"error":' + json.dumps(payload).encode() + b"}")
    return b'{"results":[' + b",".join(parts) + b"]}"


@router.post("/step", response_model=BatchStepResponse)
async def batch_step(items: StepItems, manager: ManagerDep) -> Response:
    """Step many sessions concurrently across workers (one message per worker).

    Results come back in request order; an item that fails (unknown session, env error) gets an
    error in its slot and does not fail the others. The HTTP status is 200 either way.
    """
    return json_bytes(render_slots(await manager.batch_step(items)))


@router.post("/reset", response_model=BatchResetResponse)
async def batch_reset(items: ResetItems, manager: ManagerDep) -> Response:
    """Reset many sessions concurrently; same slot rules as ``/v1/batch/step``."""
    return json_bytes(render_slots(await manager.batch_reset(items)))
