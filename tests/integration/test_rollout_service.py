"""The rollout service against a real env server: submit, progress, cancel, typed errors."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from fastapi.testclient import TestClient

from envhub.core.records import Group
from envhub.core.wire import RolloutRequest
from envhub.rollout.jobs import load_request
from envhub.rollout.journal import EngineJournal, MemoryJournal
from envhub.rollout.service import RolloutServiceSettings, create_app
from envhub.server import ServerSettings
from envhub.server.testing import RunningServer, serve_in_thread
from tests.integration.rollout_service_proc import SCRIPTED
from tests.rollout.conftest import CollectingQueue

pytestmark = pytest.mark.integration

HEURISTIC = "scripted:timeseries-heuristic"  # built in: requests name registered policies only


@pytest.fixture(scope="module")
def env_server() -> Iterator[RunningServer]:
    with serve_in_thread(ServerSettings(env_id="envhub/TimeSeries-v0", workers=2)) as running:
        yield running


@pytest.fixture
def service() -> Iterator[tuple[TestClient, CollectingQueue]]:
    queue = CollectingQueue()
    with TestClient(create_app(RolloutServiceSettings(scripted_policies=SCRIPTED), queue=queue)) as client:
        yield client, queue


def job(server: RunningServer, **fields: Any) -> dict[str, Any]:
    body = {
        "env_urls": [server.base_url],
        "count": 3,
        "split": "test",
        "group_size": 2,
        "env_kwargs": {"images": False},
        "policy": HEURISTIC,
        "policy_version": 7,
    }
    return {**body, **fields}


def wait(client: TestClient, job_id: str, *, until: set[str], timeout_s: float = 60) -> dict[str, Any]:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        progress = client.get(f"/v1/rollouts/{job_id}").json()
        if progress["status"] in until:
            return progress  # type: ignore[no-any-return]
        time.sleep(0.05)
    raise AssertionError(f"job {job_id} still {progress['status']} after {timeout_s} s")


def test_a_job_runs_to_completion_and_its_groups_are_in_the_queue(
    env_server: RunningServer, service: tuple[TestClient, CollectingQueue]
) -> None:
    client, queue = service
    created = client.post("/v1/rollouts", json=job(env_server))
    assert created.status_code == 201, created.text
    job_id = created.json()["job_id"]
    progress = wait(client, job_id, until={"done", "failed"})
    assert progress["status"] == "done" and progress["env_id"] == "envhub/TimeSeries-v0"
    assert progress["total"] == 3 and progress["published"] == 3 and progress["dropped"] == 0
    assert progress["steps"] == sum(t.length for g in queue.groups for t in g.trajectories) > 0
    assert sorted(g.uid for g in queue.groups) == [f"{job_id}:{i}:0" for i in range(3)]
    assert all(g.job_id == job_id and g.policy_version == 7 for g in queue.groups)
    metrics = client.get("/metrics").text
    assert 'envhub_rollout_groups_total{outcome="published"} 3.0' in metrics
    assert "envhub_rollout_policy_latency_seconds_bucket" in metrics
    assert client.get("/health").json() == {"status": "healthy", "redis": "none", "env_replicas": {}}
    assert client.get("/v1/rollouts").json()["count"] == 1


def test_delete_cancels_a_running_job_and_nothing_more_is_published(
    env_server: RunningServer, service: tuple[TestClient, CollectingQueue]
) -> None:
    client, queue = service
    body = job(
        env_server,
        count=12,
        max_concurrent_groups=2,
        policy="scripted:slow_heuristic",
    )
    job_id = client.post("/v1/rollouts", json=body).json()["job_id"]
    time.sleep(0.5)
    cancelled = client.delete(f"/v1/rollouts/{job_id}")
    assert cancelled.status_code == 200 and cancelled.json()["status"] == "cancelled"
    published = len(queue.groups)
    assert published < 12
    time.sleep(0.5)
    assert len(queue.groups) == published
    assert all(len(g.trajectories) == 2 for g in queue.groups)


def test_bad_input_is_a_typed_4xx(
    env_server: RunningServer, service: tuple[TestClient, CollectingQueue]
) -> None:
    client, _ = service
    both = client.post("/v1/rollouts", json=job(env_server, task_ids=["test-0"]))
    assert both.status_code == 422 and both.json()["code"] == "VALIDATION_ERROR"
    assert "exactly one of task_ids" in both.json()["message"]
    missing = client.get("/v1/rollouts/nope")
    assert missing.status_code == 404 and missing.json()["code"] == "JOB_NOT_FOUND"
    bad_policy = client.post("/v1/rollouts", json=job(env_server, policy="scripted:no_such_module:x"))
    assert bad_policy.status_code == 422 and bad_policy.json()["code"] == "NOT_REGISTERED"
    unknown_task = client.post("/v1/rollouts", json=job(env_server, count=None, task_ids=["no-such-task"]))
    assert unknown_task.status_code == 201
    failed = wait(client, unknown_task.json()["job_id"], until={"done", "failed"})
    assert failed["status"] == "failed" and failed["error"]["code"] == "UNKNOWN_TASK"


def test_a_down_policy_endpoint_is_a_clear_error_and_creates_no_job(
    env_server: RunningServer, service: tuple[TestClient, CollectingQueue]
) -> None:
    client, queue = service
    endpoint = {"base_url": "http://127.0.0.1:9/v1", "model": "tiny"}
    reply = client.post("/v1/rollouts", json=job(env_server, policy=endpoint))
    assert reply.status_code == 503 and reply.json()["code"] == "POLICY_UNAVAILABLE"
    assert "does not answer" in reply.json()["message"] and "no job was created" in reply.json()["message"]
    assert client.get("/v1/rollouts").json()["count"] == 0 and queue.groups == []


def test_a_policy_that_dies_mid_job_fails_the_job_and_publishes_only_whole_groups(
    env_server: RunningServer, service: tuple[TestClient, CollectingQueue]
) -> None:
    client, queue = service
    body = job(
        env_server,
        count=6,
        max_concurrent_groups=1,
        policy="scripted:dies_after_a_while",
    )
    job_id = client.post("/v1/rollouts", json=body).json()["job_id"]
    progress = wait(client, job_id, until={"done", "failed"})
    assert progress["status"] == "failed" and progress["error"]["code"] == "POLICY_UNAVAILABLE"
    assert "went away" in progress["error"]["message"]
    assert 0 < len(queue.groups) < 6 and progress["published"] == len(queue.groups)
    for group in queue.groups:
        assert len(group.trajectories) == 2 and all(t.steps[-1].terminated for t in group.trajectories)


def test_on_startup_the_service_resumes_unfinished_jobs_from_the_journal(env_server: RunningServer) -> None:
    queue = CollectingQueue()
    journal = EngineJournal(MemoryJournal(), queue)
    spec = RolloutRequest.model_validate({**job(env_server), "env_id": "envhub/TimeSeries-v0"})

    async def before_the_crash() -> None:
        await journal.save_job("old", spec.model_dump(mode="json"))
        # Slot 1 was published before the service died.
        await journal.commit_group(
            "old", 1, Group(uid="old:1:0", env_id="envhub/TimeSeries-v0", task_id="test-1")
        )

    asyncio.run(before_the_crash())
    settings = RolloutServiceSettings(scripted_policies=SCRIPTED)
    with TestClient(create_app(settings, queue=queue, journal=journal)) as client:
        progress = wait(client, "old", until={"done", "failed"})
    assert progress["status"] == "done" and progress["total"] == 3 and progress["published"] == 3
    assert sorted(g.uid for g in queue.groups) == ["old:0:0", "old:1:0", "old:2:0"]  # slot 1 once
    assert asyncio.run(journal.jobs()) == []  # finished: nothing left to resume


def test_a_journaled_job_that_does_not_load_keeps_no_other_job_from_resuming(
    env_server: RunningServer, caplog: pytest.LogCaptureFixture
) -> None:
    queue = CollectingQueue()
    journal = EngineJournal(MemoryJournal(), queue)
    spec = RolloutRequest.model_validate({**job(env_server), "env_id": "envhub/TimeSeries-v0"})
    # No version of the service reads these; the first holds a key in a URL the log must not show.
    broken = {**spec.model_dump(mode="json"), "env_urls": ["ftp://u:sk-SECRET@127.0.0.1:9"]}
    not_a_url = {**spec.model_dump(mode="json"), "policy": {"base_url": "http://[::1:8001/v1", "model": "m"}}

    async def before_the_crash() -> None:
        await journal.save_job("broken", broken)
        await journal.save_job("not-a-url", not_a_url)
        await journal.save_job("old", spec.model_dump(mode="json"))

    asyncio.run(before_the_crash())
    settings = RolloutServiceSettings(scripted_policies=SCRIPTED)
    with TestClient(create_app(settings, queue=queue, journal=journal)) as client:
        progress = wait(client, "old", until={"done", "failed"})
        client.portal.call(client.app.state.jobs.resume_all)  # the housekeeping's next look
    assert progress["status"] == "done" and progress["published"] == 3
    said = [r.getMessage() for r in caplog.records if "does not load" in r.getMessage()]
    assert len(said) == 2, said  # once each, though resume_all looked twice
    assert "job broken" in said[0] and "env url" in said[0] and "SECRET" not in said[0]
    assert "job not-a-url" in said[1]
    assert dict(asyncio.run(journal.jobs()))["broken"] == broken  # left for an operator


def test_a_job_yaml_posted_to_the_service_is_the_request_the_cli_loads(
    env_server: RunningServer, service: tuple[TestClient, CollectingQueue], tmp_path: Path
) -> None:
    client, _ = service
    document = job(
        env_server,
        count=2,
        max_steps=3,
        sampling={"temperature": 0.7, "top_p": 0.9},
        context={"history_length": 1},
        step_timeout_s=30,
        on_failure="drop",
    )
    path = tmp_path / "job.yaml"
    path.write_text(yaml.safe_dump(document), encoding="utf-8")
    loaded = load_request(path, ["group_size=3"])  # what `envhub rollout --config --set` plays
    created = client.post("/v1/rollouts", json={**yaml.safe_load(path.read_text()), "group_size": 3})
    assert created.status_code == 201, created.text
    job_id = created.json()["job_id"]
    assert wait(client, job_id, until={"done", "failed"})["status"] == "done"
    stored: RolloutRequest = client.app.state.jobs.jobs[job_id].request  # type: ignore[attr-defined]
    # The service fills in what it resolves (the env its servers serve, the registered policy's path).
    assert stored.model_copy(update={"env_id": None, "policy": loaded.policy}) == loaded


def test_the_service_seeds_each_step_of_a_job_that_asks_for_it(
    env_server: RunningServer, service: tuple[TestClient, CollectingQueue]
) -> None:
    """``seed_each_step`` (the trainer's ``rollout.sampling_seed``) is honoured on the service too."""
    client, queue = service

    def seeds(**fields: Any) -> dict[tuple[int, int], set[str]]:
        body = job(env_server, count=2, max_steps=3, policy="scripted:seed_echo", **fields)
        created = client.post("/v1/rollouts", json=body)
        assert created.status_code == 201, created.text
        job_id = created.json()["job_id"]
        assert wait(client, job_id, until={"done", "failed"})["status"] == "done"
        out: dict[tuple[int, int], set[str]] = {}
        for group in (g for g in queue.groups if g.job_id == job_id):
            slot = int(group.uid.split(":")[1])
            for step in (s for t in group.trajectories for s in t.steps):
                out.setdefault((slot, step.step_idx), set()).add(step.response_text)
        return out

    seeded = seeds(sampling={"seed": 5}, seed_each_step=True)
    assert len(seeded) == 6 and all(len(texts) == 1 for texts in seeded.values())  # one call per step
    assert len(set.union(*seeded.values())) == 6  # every group step its own seed
    assert seeds(sampling={"seed": 5}, seed_each_step=True) == seeded  # a second job draws alike
    assert set.union(*seeds(sampling={"seed": 5}).values()) == {
        "<think>seed=5</think><action>stats[0:10]</action>"
    }
    refused = client.post("/v1/rollouts", json=job(env_server, seed_each_step=True))
    assert refused.status_code == 422 and "set sampling.seed" in refused.json()["message"]
