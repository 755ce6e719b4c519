"""AgentOCR rendered by the env server (``render_at="server"``) gives the engine's own images.

One scripted ALFWorld group is played twice through a real ``envhub serve`` on loopback: once
rendering the history on the client (the engine's :class:`~envhub.render.OpticalHistory`), once
on the server (the session's ``history`` option, images in the step responses). Every step's
image, vision tokens and text tokens must be the same, and so must everything the env saw.
"""

from __future__ import annotations

import asyncio
import importlib.util
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from envhub.core.records import Group
from envhub.core.wire import ContextConfig, RolloutRequest
from envhub.policy.scripted import ScriptedBackend
from envhub.rollout.engine import GroupTask, RolloutEngine
from envhub.rollout.envpool import RemoteEnvPool
from envhub.server import ServerSettings
from envhub.server.testing import RunningServer, serve_in_thread
from tests.rollout.conftest import CollectingQueue

pytestmark = [
    pytest.mark.integration,
    pytest.mark.skipif(
        importlib.util.find_spec("alfworld") is None, reason="the alfworld extra is not installed"
    ),
]

ALF = "envhub/ALFWorld-v0"


@pytest.fixture(scope="module")
def server() -> Iterator[RunningServer]:
    with serve_in_thread(ServerSettings(env_id=ALF, workers=1)) as running:
        yield running


def with_tag(action: str) -> str:
    """A completion whose action carries a compression tag (inside the action, on purpose)."""
    return f"<think>scripted</think><action>{action}<compression>2.5</compression></action>"


def play(server: RunningServer, render_at: str, *, compression: bool = False) -> Group:
    from envhub.envs.alfworld.data import embedded_data_dir
    from envhub.envs.alfworld.policy import WalkthroughPolicy

    task_id = httpx.get(f"{server.base_url}/v1/tasks", params={"limit": 1}).json()["task_ids"][0]
    queue = CollectingQueue()
    envs = RemoteEnvPool([server.base_url], env_id=ALF)
    engine = RolloutEngine(
        envs=envs,
        backend=ScriptedBackend(make_policy=WalkthroughPolicy, **({"wrap": with_tag} if compression else {})),
        config=RolloutRequest(
            group_size=2,
            env_kwargs={"data_dir": str(embedded_data_dir().parent)},
            context=ContextConfig(
                agentocr=True,
                render_at=render_at,  # type: ignore[arg-type]
                compression=compression,
                inline_images=True,
            ),
            max_steps=6,
        ),
        queue=queue,
        job_id=f"ocr-{render_at}",
    )

    async def main() -> None:
        try:
            await engine.run([GroupTask(0, task_id, 7)])
        finally:
            await envs.aclose()

    asyncio.run(main())
    assert len(queue.groups) == 1
    return queue.groups[0]


def renders(server: RunningServer) -> float:
    """History images the server has rendered so far (its /metrics counter)."""
    text = httpx.get(f"{server.base_url}/metrics").text
    return sum(
        float(line.rsplit(" ", 1)[1])
        for line in text.splitlines()
        if line.startswith("envhub_history_renders_total")
    )


def rows(group: Group) -> list[tuple[Any, ...]]:
    return [
        (
            s.history_image_ref,
            s.history_image,
            s.vision_tokens,
            s.text_tokens,
            s.observation,
            s.action,
            s.reward,
            s.is_action_valid,
            s.terminated,
        )
        for t in group.trajectories
        for s in t.steps
    ]


@pytest.mark.parametrize("compression", [False, True], ids=["plain", "compression"])
def test_server_and_client_rendering_give_identical_steps(server: RunningServer, compression: bool) -> None:
    before = renders(server)
    client = play(server, "client", compression=compression)
    assert renders(server) == before  # the engine rendered those
    served = play(server, "server", compression=compression)
    assert renders(server) - before == len(rows(served))  # one server render per step
    assert len(rows(client)) >= 2 * 3  # the walkthrough wins this task in a few steps
    assert rows(served) == rows(client)
    first = client.trajectories[0].steps
    assert first[0].history_image is not None and first[0].history_image.startswith(b"\x89PNG")
    assert len({s.history_image_ref for s in first}) == len(first)  # each step shows a new page
    assert all(s.vision_tokens and s.text_tokens is not None for s in first)


def test_compression_tags_are_stripped_before_the_env_on_both_paths(server: RunningServer) -> None:
    plain = play(server, "client")
    for render_at in ("client", "server"):
        tagged = play(server, render_at, compression=True)
        # The env saw the same actions (no tag), so it answered the same...
        assert [(s.action, s.observation, s.reward) for t in tagged.trajectories for s in t.steps] == [
            (s.action, s.observation, s.reward) for t in plain.trajectories for s in t.steps
        ]
        assert all("compression" not in s.action for t in tagged.trajectories for s in t.steps)
        # ...while the factor 2.5 shrank the images after the first step.
        later = [s.vision_tokens or 0 for s in tagged.trajectories[0].steps[1:]]
        full = [s.vision_tokens or 0 for s in plain.trajectories[0].steps[1:]]
        assert sum(later) < sum(full)
