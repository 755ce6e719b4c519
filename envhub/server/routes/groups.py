"""``/v1/groups``: GRPO-style groups of sessions that start from the identical state."""

from __future__ import annotations

import json
import secrets

from fastapi import APIRouter, Depends

from envhub.core.wire import GroupCreate, GroupCreated, GroupMember
from envhub.server.deps import ManagerDep, require_token
from envhub.server.routes._responses import SESSION_ERRORS

__all__ = ["create_group", "router"]

router = APIRouter(prefix="/v1/groups", tags=["groups"], dependencies=[Depends(require_token)])


@router.post("", status_code=201, response_model=GroupCreated, responses=SESSION_ERRORS)
async def create_group(body: GroupCreate, manager: ManagerDep) -> GroupCreated:
    """Create ``group_size`` sessions reset with the same task and seed (all or none).

    Every member gets the identical first observation, and identical actions give identical
    transitions, which is what GRPO/GiGPO/HGPO groups need.
    """
    # Without a seed the server draws one, so the group is still reproducible from the answer.
    seed = body.seed if body.seed is not None else secrets.randbelow(2**31)
    records, payloads = await manager.create_group(
        group_size=body.group_size,
        task_id=body.task_id,
        seed=seed,
        split=body.split,
        env_kwargs=body.env_kwargs,
        history=body.history,
    )
    members = []
    for payload in payloads:
        first = json.loads(payload)
        members.append(
            GroupMember(session_id=first["session_id"], observation=first["observation"], info=first["info"])
        )
    task_id = members[0].info.get("task_id") if members else body.task_id
    return GroupCreated(
        group_id="g-" + secrets.token_urlsafe(9),
        task_id=None if task_id is None else str(task_id),
        seed=seed,
        expires_at=min(r.expires_at for r in records),
        sessions=members,
    )
