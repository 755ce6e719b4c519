"""Fixtures for the queue tests: small real-shaped groups and a unique Redis key prefix per test."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator, Callable

import pytest
import redis.asyncio as aioredis

from envhub.core.records import Group, Step, TokenSequence, Trajectory

REDIS_URL = "redis://127.0.0.1:6379/0"


def make_group(uid: str, *, n: int = 2, steps: int = 3, task_id: str = "t0") -> Group:
    """A group with token ids, float32-exact logprobs and a trajectory-mode sequence."""
    trajectories = []
    for k in range(n):
        traj_id = f"{uid}/{k}"
        rows = [
            Step(
                uid=uid,
                traj_id=traj_id,
                step_idx=i,
                anchor=f"room {i}",
                observation=f"you see {i}",
                prompt_token_ids=list(range(i, i + 8)),
                response_text="go north",
                response_token_ids=[70000 + i, 5, 6],
                response_logprobs=[-0.5, -0.25, -1.0],
                action="go north",
                reward=float(i == steps - 1),
                terminated=i == steps - 1,
                policy_version=3,
            )
            for i in range(steps)
        ]
        seq = TokenSequence(
            uid=uid,
            traj_id=traj_id,
            prompt_length=2,
            token_ids=[1, 2, 3],
            loss_mask=[0, 0, 1],
            logprobs=[0, 0, -0.5],
        )
        trajectories.append(
            Trajectory(
                uid=uid,
                traj_id=traj_id,
                env_id="envhub/Test-v0",
                task_id=task_id,
                steps=rows,
                sequences=[seq],
            )
        )
    return Group(
        uid=uid, env_id="envhub/Test-v0", task_id=task_id, trajectories=trajectories, policy_version=3
    )


@pytest.fixture
def group_factory() -> Callable[..., Group]:
    return make_group


@pytest.fixture
def prefix() -> str:
    """A key prefix no other test uses."""
    return f"envhub-test:{uuid.uuid4().hex[:12]}"


@pytest.fixture
async def redis_client(prefix: str) -> AsyncIterator[aioredis.Redis]:
    """A client on the real Redis; deletes every key under the test's prefix afterwards."""
    client = aioredis.Redis.from_url(REDIS_URL)
    try:
        await client.ping()
    except Exception as exc:  # the suite needs the real server; say so instead of erroring obscurely
        pytest.fail(f"These tests need Redis on 127.0.0.1:6379 ({exc}); start redis-server.")
    yield client
    keys = [k async for k in client.scan_iter(match=f"{prefix}*")]
    if keys:
        await client.delete(*keys)
    await client.aclose()
