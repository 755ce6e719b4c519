"""``play(request, sink)``: the one way a rollout job is played (in-process envs, scripted policy)."""

from __future__ import annotations

import asyncio

from envhub.core.records import Group
from envhub.core.wire import RolloutRequest
from envhub.policy.scripted import load_scripted
from envhub.rollout.driver import GroupCollector, make_pool, play
from envhub.rollout.engine import GroupTask
from envhub.rollout.journal import group_uid
from tests.rollout.conftest import CollectingQueue

TS = "envhub/TimeSeries-v0"
HEURISTIC = "scripted:envhub.envs.timeseries.policy:HeuristicPolicy"


def request(**fields: object) -> RolloutRequest:
    body = {
        "env_id": TS,
        "split": "test",
        "group_size": 2,
        "max_steps": 3,
        "policy": HEURISTIC,
        "env_kwargs": {"images": False},
        "max_concurrent_groups": 4,
    }
    return RolloutRequest.model_validate({**body, **fields})


def test_without_a_sink_play_returns_the_groups_in_task_order() -> None:
    tasks = ["test-3", "test-0", "test-2", "test-1"]
    played = asyncio.run(play(request(task_ids=tasks), job_id="j"))
    assert [g.task_id for g in played.groups] == tasks
    assert [g.uid for g in played.groups] == [group_uid("j", slot, 0) for slot in range(4)]
    assert played.report.published == 4
    for group in played.groups:
        assert [t.traj_id for t in group.trajectories] == [f"{group.uid}:{m}" for m in range(2)]


def test_the_collector_orders_by_slot_whatever_order_groups_finish_in() -> None:
    collector = GroupCollector()

    async def put_all() -> None:
        for slot, attempt in ((2, 0), (0, 1), (1, 0)):
            await collector.put(Group(uid=group_uid("a:b", slot, attempt), env_id=TS, task_id=f"t{slot}"))

    asyncio.run(put_all())
    assert [g.task_id for g in collector.groups] == ["t0", "t1", "t2"]


def test_play_streams_to_a_sink_and_leaves_what_it_was_given_open() -> None:
    sink = CollectingQueue()
    envs = make_pool(env_id=TS, env_urls=())

    async def run() -> None:
        given = load_scripted(HEURISTIC)
        tasks = [GroupTask(0, "test-1", 11), GroupTask(1, "test-0", 12)]
        played = await play(request(count=None), sink, backend=given, envs=envs, tasks=tasks, job_id="s")
        assert played.groups == [] and played.report.published == 2
        # The pool was the caller's: still usable after play.
        assert await envs.task_ids("test", 1) == ["test-0"]
        await envs.aclose()
        await given.aclose()

    asyncio.run(run())
    assert sorted(g.task_id for g in sink.groups) == ["test-0", "test-1"]


def test_a_spec_journaled_by_an_earlier_service_still_restores() -> None:
    from envhub.rollout.jobs import persisted_spec, restored_request

    current = request(count=2, context={"history_length": 1})
    old = persisted_spec(current)
    old["context"]["max_steps"] = 50  # the shape before the context lost max_steps
    assert restored_request(old) == current


def test_a_spec_journaled_with_credentials_in_a_policy_url_restores_without_them() -> None:
    from envhub.rollout.jobs import persisted_spec, restored_request

    served = {"base_url": "http://127.0.0.1:8001/v1", "model": "m"}
    current = request(count=2, policy=served)
    old = persisted_spec(current)
    old["policy"]["base_url"] = "http://user:sk-old@127.0.0.1:8001/v1"  # saved before the refusal
    assert restored_request(old) == current
    # A role's endpoint of a multi-agent job too (user only, IPv6).
    team = {"orchestra": "search", "policies": {"verifier": {**served, "base_url": "http://[::1]:8001/v1"}}}
    current = request(count=2, env_id="envhub/SearchQA-v0", env_kwargs={}, agents=team)
    old = persisted_spec(current)
    old["agents"]["policies"]["verifier"]["base_url"] = "http://user@[::1]:8001/v1"
    assert restored_request(old) == current
