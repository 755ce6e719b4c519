"""EnvClient and AsyncEnvClient against real envhub servers on loopback (every test runs both twins)."""

from __future__ import annotations

import asyncio
import json
import socket
import threading
import time

import httpx
import pytest

from envhub.client import AsyncEnvClient, HttpxAsyncTransport, RetryPolicy, slot_error
from envhub.core.errors import (
    CapacityReachedError,
    ConfigurationError,
    RequestValidationError,
    ServerUnreachableError,
    SessionExpiredError,
    SessionNotFoundError,
    UnauthorizedError,
    UnknownTaskError,
)
from envhub.core.wire import BatchResetItem, BatchStepItem
from envhub.server import ServerSettings, create_app
from envhub.server.testing import RunningServer
from tests.client.conftest import COUNTER, TOKEN, MakeClient
from tests.client.faults import Faults
from tests.clock import ManualClock, expire_idle_sessions

NO_RETRY = RetryPolicy(max_attempts=1)


def test_session_round_trip_creates_resets_steps_inspects_and_deletes(
    make_client: MakeClient, counter_server: RunningServer
) -> None:
    client = make_client(counter_server.base_url)
    created = client.create_session()
    assert created.env_id == "tests.server.envs:CounterEnv"
    first = client.reset(created.session_id, task_id="t3", seed=7)
    assert first.observation.startswith("task t3 draw ")
    assert first.info["task_id"] == "t3"
    step = client.step(created.session_id, "hello")
    assert (step.observation, step.reward, step.terminated, step.done, step.step_count) == (
        "echo hello #1",
        0.0,
        False,
        False,
        1,
    )
    state = client.state(created.session_id)
    assert (state.task_id, state.step_count, state.last_observation) == ("t3", 1, "echo hello #1")
    last = client.step(created.session_id, "stop")
    assert (last.reward, last.terminated, last.done, last.info["won"]) == (1.0, True, True, True)
    assert client.delete_session(created.session_id).closed
    with pytest.raises(SessionNotFoundError):
        client.state(created.session_id)


def test_same_seed_gives_the_same_first_observation(
    make_client: MakeClient, counter_server: RunningServer
) -> None:
    client = make_client(counter_server.base_url)
    a, b = client.create_session().session_id, client.create_session().session_id
    try:
        assert client.reset(a, seed=11).observation == client.reset(b, seed=11).observation
    finally:
        client.delete_session(a)
        client.delete_session(b)


def test_tasks_returns_a_page_of_the_split(make_client: MakeClient, counter_server: RunningServer) -> None:
    page = make_client(counter_server.base_url).tasks("train", offset=2, limit=3)
    assert (page.split, page.total, page.task_ids) == ("train", 10, ["t2", "t3", "t4"])


def test_group_members_start_identical_and_step_identically(
    make_client: MakeClient, counter_server: RunningServer
) -> None:
    client = make_client(counter_server.base_url)
    group = client.create_group(4, task_id="t5", seed=3)
    ids = [member.session_id for member in group.sessions]
    try:
        assert len(set(ids)) == 4
        assert len({member.observation for member in group.sessions}) == 1
        steps = [client.step(sid, "same") for sid in ids]
        assert len({(s.observation, s.reward, s.info["anchor"]) for s in steps}) == 1
    finally:
        for sid in ids:
            client.delete_session(sid)


def test_batch_step_reports_a_bad_item_in_its_slot_and_steps_the_rest(
    make_client: MakeClient, counter_server: RunningServer
) -> None:
    client = make_client(counter_server.base_url)
    group = client.create_group(2, task_id="t1", seed=0)
    a, b = (member.session_id for member in group.sessions)
    try:
        reply = client.batch_step(
            [(a, "x"), ("s-no-such-session", "y"), BatchStepItem(session_id=b, action="z")]
        )
        ok_a, bad, ok_b = reply.results
        assert ok_a.ok and ok_a.result is not None and ok_a.result.observation == "echo x #1"
        assert ok_b.ok and ok_b.result is not None and ok_b.result.observation == "echo z #1"
        assert not bad.ok and slot_error(ok_a) is None
        assert isinstance(slot_error(bad), SessionNotFoundError)
    finally:
        client.delete_session(a)
        client.delete_session(b)


def test_batch_reset_resets_every_session_in_request_order(
    make_client: MakeClient, counter_server: RunningServer
) -> None:
    client = make_client(counter_server.base_url)
    ids = [client.create_session().session_id for _ in range(3)]
    try:
        reply = client.batch_reset(
            [BatchResetItem(session_id=sid, task_id=f"t{i}") for i, sid in enumerate(ids)]
        )
        assert [slot.result.info["task_id"] for slot in reply.results if slot.result] == ["t0", "t1", "t2"]
        assert [slot.result.session_id for slot in reply.results if slot.result] == ids
    finally:
        for sid in ids:
            client.delete_session(sid)


def test_unknown_session_raises_session_not_found(
    make_client: MakeClient, counter_server: RunningServer
) -> None:
    with pytest.raises(SessionNotFoundError) as caught:
        make_client(counter_server.base_url).step("s-never-created", "x")
    assert caught.value.status_code == 404
    assert caught.value.detail["session_id"] == "s-never-created"
    assert "POST /v1/sessions" in str(caught.value)


def test_unknown_task_raises_unknown_task_error(
    make_client: MakeClient, counter_server: RunningServer
) -> None:
    client = make_client(counter_server.base_url)
    sid = client.create_session().session_id
    try:
        with pytest.raises(UnknownTaskError):
            client.reset(sid, task_id="no-such-task")
    finally:
        client.delete_session(sid)


def test_bad_argument_raises_request_validation_before_sending(
    make_client: MakeClient, counter_server: RunningServer
) -> None:
    faults = Faults()
    client = make_client(counter_server.base_url, faults=faults)
    with pytest.raises(RequestValidationError, match="seed"):
        client.reset("s-any", seed=-1)
    with pytest.raises(RequestValidationError, match="group_size"):
        client.create_group(0)
    assert faults.sent == []


def test_idle_session_raises_session_expired(
    make_client: MakeClient, ttl_server: RunningServer, ttl_clock: ManualClock
) -> None:
    client = make_client(ttl_server.base_url)
    sid = client.create_session().session_id
    client.reset(sid, task_id="t0")
    expire_idle_sessions(ttl_server, ttl_clock)
    with pytest.raises(SessionExpiredError) as caught:
        client.step(sid, "too late")
    assert caught.value.status_code == 410


def test_missing_token_raises_unauthorized(make_client: MakeClient, tight_server: RunningServer) -> None:
    with pytest.raises(UnauthorizedError) as caught:
        make_client(tight_server.base_url).create_session()
    assert caught.value.status_code == 401
    assert "Bearer" in str(caught.value)
    with pytest.raises(UnauthorizedError):
        make_client(tight_server.base_url, token="wrong").create_session()


def test_token_opens_the_api(make_client: MakeClient, tight_server: RunningServer) -> None:
    client = make_client(tight_server.base_url, token=TOKEN)
    sid = client.create_session().session_id
    assert client.reset(sid, task_id="t0").info["task_id"] == "t0"
    client.delete_session(sid)


def test_full_server_raises_capacity_reached_with_retry_after(
    make_client: MakeClient, tight_server: RunningServer
) -> None:
    client = make_client(tight_server.base_url, token=TOKEN, retry=NO_RETRY)
    held = [client.create_session().session_id for _ in range(2)]
    try:
        with pytest.raises(CapacityReachedError) as caught:
            client.create_session()
        assert caught.value.status_code == 503
        assert caught.value.retry_after_s >= 1
        assert caught.value.detail["max_sessions"] == 2
    finally:
        for sid in held:
            client.delete_session(sid)


def test_capacity_retry_backs_off_and_succeeds_once_a_slot_frees(
    make_client: MakeClient, tight_server: RunningServer
) -> None:
    faults = Faults()
    client = make_client(
        tight_server.base_url, token=TOKEN, faults=faults, retry=RetryPolicy(max_attempts=10)
    )
    helper = make_client(tight_server.base_url, token=TOKEN)
    held = [helper.create_session().session_id for _ in range(2)]
    victim = held.pop()

    def free_a_slot_after_the_first_refusal() -> None:
        # Free the slot only once the client has been refused, however slow the machine.
        assert faults.refused.wait(timeout=120), "the client was never refused"
        helper.delete_session(victim)

    freer = threading.Thread(target=free_a_slot_after_the_first_refusal)
    freer.start()
    try:
        started = time.monotonic()
        created = client.create_session()
        waited = time.monotonic() - started
        held.append(created.session_id)
    finally:
        freer.join(timeout=150)
        for sid in held:
            helper.delete_session(sid)
    assert [path for path, _ in faults.sent].count("/v1/sessions") >= 2  # refused first, then created
    assert waited >= 1.0  # the server's Retry-After (1 s) was honoured


def test_step_retried_after_a_lost_reply_is_applied_once(
    make_client: MakeClient, counter_server: RunningServer
) -> None:
    faults = Faults()
    client = make_client(counter_server.base_url, faults=faults)
    sid = client.create_session().session_id
    try:
        client.reset(sid, task_id="t2")
        faults.lose_reply_to = "/step"
        step = client.step(sid, "once")
        step_bodies = [json.loads(body) for path, body in faults.sent if path.endswith("/step")]
        assert len(step_bodies) == 2  # sent, reply lost, sent again
        assert step_bodies[0]["request_id"] == step_bodies[1]["request_id"]
        assert (step.observation, step.step_count) == ("echo once #1", 1)
        assert client.state(sid).step_count == 1
        assert client.step(sid, "next").observation == "echo next #2"
    finally:
        client.delete_session(sid)


def test_refused_connections_are_retried_until_the_server_answers(
    make_client: MakeClient, counter_server: RunningServer
) -> None:
    faults = Faults(refuse_first=2)
    client = make_client(counter_server.base_url, faults=faults)
    sid = client.create_session().session_id
    assert faults.refuse_first == 0
    assert [path for path, _ in faults.sent] == ["/v1/sessions"]
    client.delete_session(sid)


def test_create_session_is_not_replayed_after_a_lost_reply(
    make_client: MakeClient, counter_server: RunningServer
) -> None:
    faults = Faults(lose_reply_to="/v1/sessions")
    client = make_client(counter_server.base_url, faults=faults)
    before = client.ready().active_sessions
    with pytest.raises(ServerUnreachableError):
        client.create_session()
    # The server did create one session; a blind retry would have made it two.
    assert client.ready().active_sessions == before + 1


def test_unreachable_server_raises_after_the_last_attempt(make_client: MakeClient) -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]  # bound, never listening: connections are refused
        client = make_client(f"http://127.0.0.1:{port}", retry=RetryPolicy(max_attempts=3, backoff_s=0.01))
        with pytest.raises(ServerUnreachableError) as caught:
            client.health()
    assert caught.value.detail["attempts"] == 3
    assert "envhub serve" in str(caught.value)


def test_health_and_ready_report_the_server_state(
    make_client: MakeClient, counter_server: RunningServer
) -> None:
    client = make_client(counter_server.base_url)
    assert client.health().status == "healthy"
    ready = client.ready()
    assert ready.ready and ready.workers_alive == ready.workers_total == 1


def test_closed_client_refuses_further_calls(make_client: MakeClient, counter_server: RunningServer) -> None:
    client = make_client(counter_server.base_url)
    client.close()
    with pytest.raises(ConfigurationError, match="closed"):
        client.health()


def test_base_url_without_scheme_is_a_configuration_error(make_client: MakeClient) -> None:
    with pytest.raises(ConfigurationError, match="http://"):
        make_client("127.0.0.1:8000")


def test_async_client_refuses_a_plain_with_and_says_what_to_use() -> None:
    client = AsyncEnvClient("http://127.0.0.1:1")
    with pytest.raises(TypeError, match="async with"), client:
        pass


async def test_async_client_also_runs_over_httpx(counter_server: RunningServer) -> None:
    transport = HttpxAsyncTransport(counter_server.base_url)
    async with AsyncEnvClient(counter_server.base_url, transport=transport) as client:
        sid = (await client.create_session()).session_id
        await client.reset(sid, task_id="t0")
        assert (await client.step(sid, "via httpx")).observation == "echo via httpx #1"
        await client.delete_session(sid)


async def test_async_client_serves_hundreds_of_sessions_over_a_small_pool(
    counter_server: RunningServer,
) -> None:
    async with AsyncEnvClient(counter_server.base_url, max_connections=16) as client:
        sids = [s.session_id for s in await asyncio.gather(*(client.create_session() for _ in range(300)))]

        async def play(sid: str) -> list[str]:
            await client.reset(sid, task_id="t0")
            return [(await client.step(sid, f"a{k}")).observation for k in range(3)]

        try:
            episodes = await asyncio.gather(*(play(sid) for sid in sids))
        finally:
            await asyncio.gather(*(client.delete_session(sid) for sid in sids))
    assert all(episode == ["echo a0 #1", "echo a1 #2", "echo a2 #3"] for episode in episodes)


async def test_async_client_runs_in_process_over_an_asgi_transport() -> None:
    app = create_app(ServerSettings(env_id=COUNTER, workers=1))
    async with app.router.lifespan_context(app):  # ASGITransport does not run the lifespan itself
        transport = HttpxAsyncTransport("http://envhub.test", transport=httpx.ASGITransport(app=app))
        async with AsyncEnvClient("http://envhub.test", transport=transport) as client:
            sid = (await client.create_session()).session_id
            await client.reset(sid, task_id="t0")
            assert (await client.step(sid, "in process")).observation == "echo in process #1"
            with pytest.raises(SessionNotFoundError):
                await client.state("s-missing")
