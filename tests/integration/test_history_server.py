"""Server-side AgentOCR history on a real ALFWorld server, checked against client-side rendering.

The server records and renders in the session's worker; the test plays the same episode and
renders the same history on the client with :class:`envhub.render.OpticalHistory`. The images
must be pixel-identical, and the worker's segment-cache counts must reach ``/metrics``.
"""

from __future__ import annotations

import asyncio
import base64
import io
import json
import math
import re
from collections.abc import Iterator

import httpx
import numpy as np
import pytest
from numpy.typing import NDArray
from PIL import Image

from envhub.client import AsyncEnvClient, EnvClient
from envhub.core.errors import ConfigurationError, RequestValidationError
from envhub.core.wire import HistoryFrame, HistoryOptions, StepResponse
from envhub.envs.alfworld.data import embedded_data_dir
from envhub.render import OpticalHistory, RenderConfig
from envhub.server import ServerSettings
from envhub.server.testing import RunningServer, serve_in_thread
from tests.needs import requires_modules

pytestmark = [
    pytest.mark.integration,
    requires_modules("alfworld", extra="alfworld"),
]

DATA_DIR = str(embedded_data_dir().parent)
ENV_KWARGS = {"data_dir": DATA_DIR}
STEPS = 30


@pytest.fixture(scope="module")
def alfworld_server() -> Iterator[RunningServer]:
    with serve_in_thread(ServerSettings(env_id="envhub/ALFWorld-v0", workers=2)) as running:
        yield running


@pytest.fixture
def client(alfworld_server: RunningServer) -> Iterator[EnvClient]:
    with EnvClient(alfworld_server.base_url, timeout_s=300) as c:
        yield c


def first_task(client: EnvClient) -> str:
    return client.tasks(limit=1).task_ids[0]


def pick(admissible: list[str], t: int) -> str:
    """A deterministic walk that cannot win: only moves, opening, closing and looking."""
    choices = sorted(a for a in admissible if a.startswith(("go to ", "open ", "close ", "examine ", "look")))
    return choices[(7 * t) % len(choices)]


def pixels_of(frame: HistoryFrame | None, png: bytes | None = None) -> NDArray[np.uint8]:
    assert frame is not None
    data = png if png is not None else base64.b64decode(frame.png_base64 or "")
    return np.asarray(Image.open(io.BytesIO(data)).convert("RGB"))


def metric(text: str, name: str) -> float:
    match = re.search(rf"^{name}\{{[^}}]*\}} (\S+)$", text, re.MULTILINE)
    assert match is not None, name
    return float(match.group(1))


def scrape(base_url: str) -> str:
    return httpx.get(f"{base_url}/metrics", timeout=30).text


def test_30_step_episode_images_are_pixel_identical_to_client_rendering(
    client: EnvClient, alfworld_server: RunningServer
) -> None:
    before = scrape(alfworld_server.base_url)
    history = {"style": "ocr", "window": 50, "preset": "alfworld"}
    sid = client.create_session(ENV_KWARGS, history=history).session_id
    first = client.reset(sid, task_id=first_task(client))
    local = OpticalHistory(RenderConfig.alfworld(), window=50, style="ocr")
    observation, admissible = first.observation, first.info["admissible_actions"]
    hits = misses = 0
    for t in range(STEPS):
        action = pick(admissible, t)
        result = client.step(sid, action)
        local.record(observation, action)
        expected = local.render()
        hits, misses = hits + expected.hits, misses + expected.misses
        frame = result.history
        assert frame is not None and frame.step == t + 1 and frame.segments == t + 1
        assert frame.url is None, "inline is the default"
        got = pixels_of(frame)
        assert got.shape == expected.pixels.shape and np.array_equal(got, expected.pixels), t
        assert (frame.width, frame.height) == expected.size
        assert frame.vision_tokens == expected.vision_tokens() and frame.text_tokens > 0
        assert (frame.cache_hits, frame.cache_misses) == (expected.hits, expected.misses)
        assert result.reward == 0.0 and not result.done, "the walk must last 30 steps"
        observation, admissible = result.observation, result.info["admissible_actions"]
    assert hits > 0
    client.delete_session(sid)

    after = scrape(alfworld_server.base_url)
    assert metric(after, "envhub_history_cache_hits_total") - metric(
        before, "envhub_history_cache_hits_total"
    ) == pytest.approx(hits)
    assert metric(after, "envhub_history_cache_misses_total") - metric(
        before, "envhub_history_cache_misses_total"
    ) == pytest.approx(misses)
    assert metric(after, "envhub_history_cache_hit_rate") > 0
    assert metric(after, "envhub_history_render_seconds_count") >= STEPS


def test_link_mode_serves_the_same_image_from_the_worker(client: EnvClient) -> None:
    sid = client.create_session(ENV_KWARGS, history={"inline": False}).session_id
    first = client.reset(sid, task_id=first_task(client))
    local = OpticalHistory(RenderConfig.alfworld())
    blank = np.asarray(Image.open(io.BytesIO(client.fetch_history_png(sid))).convert("RGB"))
    assert np.array_equal(blank, local.render().pixels)
    observation, admissible = first.observation, first.info["admissible_actions"]
    for t in range(3):
        action = pick(admissible, t)
        result = client.step(sid, action)
        local.record(observation, action)
        observation, admissible = result.observation, result.info["admissible_actions"]
        assert result.history is not None and result.history.png_base64 is None
        assert result.history.url == f"/v1/sessions/{sid}/history.png"
        got = pixels_of(result.history, client.fetch_history_png(sid))
        assert np.array_equal(got, local.render().pixels)
    client.delete_session(sid)


def test_group_and_batch_step_carry_identical_histories(client: EnvClient) -> None:
    group = client.create_group(4, task_id=first_task(client), env_kwargs=ENV_KWARGS, history={})
    sids = [m.session_id for m in group.sessions]
    observation, admissible = group.sessions[0].observation, group.sessions[0].info["admissible_actions"]
    local = OpticalHistory(RenderConfig.alfworld())
    for t in range(5):
        action = pick(admissible, t)
        reply = client.batch_step([(sid, action) for sid in sids])
        results: list[StepResponse] = [slot.result for slot in reply.results if slot.result is not None]
        assert len(results) == 4
        local.record(observation, action)
        expected = local.render().pixels
        for result in results:
            assert np.array_equal(pixels_of(result.history), expected)
        observation, admissible = results[0].observation, results[0].info["admissible_actions"]
    for sid in sids:
        client.delete_session(sid)


def test_self_compression_shrinks_the_next_image_and_reports_its_reward_separately(
    client: EnvClient,
) -> None:
    sid = client.create_session(ENV_KWARGS, history={"compression": True}).session_id
    first = client.reset(sid, task_id=first_task(client))
    local = OpticalHistory(RenderConfig.alfworld())
    action = pick(first.info["admissible_actions"], 0)
    result = client.step(sid, action + " <compression>2.0</compression>")
    assert result.info["admissible_actions"], "the env played the action without its tag"
    local.record(first.observation, action, compression=2.0)
    expected = local.render()
    assert result.history is not None and result.history.compression == 2.0
    assert result.history.compression_valid is True
    assert np.array_equal(pixels_of(result.history), expected.pixels)
    assert result.history.compression_rewards is None, "only the step that ends the episode has them"
    assert result.reward == 0.0  # the env reward is never changed
    client.delete_session(sid)


def test_bad_history_option_is_a_422_naming_the_choices(client: EnvClient) -> None:
    for bad, word in (
        ({"preset": "nope"}, "preset"),
        ({"style": "fancy"}, "style"),
        ({"colour": 1}, "colour"),
    ):
        reply = httpx.post(
            f"{client.base_url}/v1/sessions", json={"env_kwargs": ENV_KWARGS, "history": bad}, timeout=30
        )
        assert reply.status_code == 422, reply.text
        assert reply.json()["code"] == "VALIDATION_ERROR" and word in reply.text
    reply = httpx.post(
        f"{client.base_url}/v1/groups", json={"group_size": 2, "history": {"preset": "nope"}}, timeout=30
    )
    assert reply.status_code == 422 and "alfworld" in reply.text
    with pytest.raises(RequestValidationError):
        client.create_session(ENV_KWARGS, history={"preset": "nope"})


def test_a_session_without_history_pays_nothing(client: EnvClient, alfworld_server: RunningServer) -> None:
    sid = client.create_session(ENV_KWARGS).session_id
    first = client.reset(sid, task_id=first_task(client))
    reply = httpx.post(
        f"{client.base_url}/v1/sessions/{sid}/step",
        json={"action": first.info["admissible_actions"][0]},
        timeout=60,
    )
    assert reply.status_code == 200 and "history" not in reply.json()
    with pytest.raises(ConfigurationError, match="without history"):
        client.fetch_history_png(sid)
    client.delete_session(sid)


def test_async_client_creates_history_groups_and_fetches_pngs(alfworld_server: RunningServer) -> None:
    async def run() -> tuple[list[StepResponse], list[bytes], str]:
        async with AsyncEnvClient(alfworld_server.base_url, timeout_s=300) as client:
            task = (await client.tasks(limit=1)).task_ids[0]
            group = await client.create_group(
                2, task_id=task, env_kwargs=ENV_KWARGS, history=HistoryOptions(inline=False)
            )
            first = group.sessions[0]
            action = pick(first.info["admissible_actions"], 0)
            reply = await client.batch_step([(m.session_id, action) for m in group.sessions])
            results = [slot.result for slot in reply.results if slot.result is not None]
            pngs = [await client.fetch_history_png(m.session_id) for m in group.sessions]
            for member in group.sessions:
                await client.delete_session(member.session_id)
            return results, pngs, first.observation + "\n" + action

    results, pngs, seen = asyncio.run(run())
    observation, action = seen.rsplit("\n", 1)
    local = OpticalHistory(RenderConfig.alfworld())
    local.record(observation, action)
    expected = local.render().pixels
    assert len(results) == 2 and all(r.history is not None and r.history.url for r in results)
    for png in pngs:
        assert np.array_equal(np.asarray(Image.open(io.BytesIO(png)).convert("RGB")), expected)


def test_a_won_episode_with_self_compression_returns_the_compression_rewards(client: EnvClient) -> None:
    trials = sorted(embedded_data_dir().glob("*/*/*"), key=lambda p: (p / "game.tw-pddl").stat().st_size)
    plan = json.loads((trials[0] / "game.tw-pddl").read_text())["walkthrough"]
    task = trials[0].relative_to(embedded_data_dir()).as_posix()
    sid = client.create_session(ENV_KWARGS, history={"compression": True}).session_id
    client.reset(sid, task_id=task)
    for action in plan:
        result = client.step(sid, f"{action}<compression>1.5</compression>")
    assert result.done and result.reward == 10.0 and result.info["won"] is True
    assert result.history is not None and result.history.compression_rewards is not None
    assert result.history.compression_rewards == pytest.approx([10.0 + 0.01 * math.log(1.5)] * len(plan))
    client.delete_session(sid)
