"""The staleness bound at consumption, runs that share a stream, and a resume over Redis.

Real trainers (the small tiny model, in process or as a killed subprocess), a real env whose
episodes differ in length (:mod:`tests.train.uneven_env`) and the real Redis on 127.0.0.1:6379,
on streams of the tests' own. What each update used is read from the trainer's own records
(``rollouts/iter_<k>.jsonl``: iteration k trains at version k - 1) and from the raw stream.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import redis
import torch

from envhub.train.checkpoint import latest_checkpoint
from envhub.train.config import load_config
from envhub.train.rollouts import run_label
from envhub.train.schedule import TaskSchedule
from envhub.train.tracking import read_metrics
from envhub.train.trainer import train
from tests.integration.rollout_service_proc import redis_up
from tests.needs import require
from tests.train.uneven_env import episode_length

ROOT = Path(__file__).resolve().parents[2]
REDIS = "redis://127.0.0.1:6379/0"
UNEVEN = "tests.train.uneven_env:UnevenEnv"
#: Eleven training tasks, one of them long (t7): at most one long group is in flight at a time.
TASKS = [f"t{i}" for i in range(13) if i % 4 != 3 or i == 7]
SEED = 0  # its task order puts t7 second, then sixteen short tasks (checked below)


def _config(model: Path, run: Path, **over: Any) -> Any:
    base = {
        "env": UNEVEN,
        "algo": "grpo",
        "model.path": str(model),
        "seed": SEED,
        "output.run_dir": str(run),
        "output.tensorboard": False,
        "rollout.group_size": 2,
        "rollout.batch_tasks": 2,
        "rollout.max_steps": 2000,  # a held long task ends by the trainer, not by truncation
        "rollout.task_ids": TASKS,
        "rollout.max_tokens": 4,
        "rollout.context.family": "envhub/SearchQA-v0",
        "rollout.context.projection": "think_action",
        "optim.lr": 1e-4,
        "optim.micro_batch_rows": 8,
    }
    base.update(over)
    return load_config(None, base)


def _used(run: Path) -> dict[int, list[dict[str, Any]]]:
    """Iteration -> the groups it trained on (version, task, uid, job), from the run's records."""
    out: dict[int, list[dict[str, Any]]] = {}
    for path in sorted((run / "rollouts").glob("iter_*.jsonl")):
        groups = [json.loads(line) for line in path.read_text().splitlines()]
        out[int(path.stem.split("_")[1])] = [
            {k: g[k] for k in ("policy_version", "task_id", "uid", "job_id")} for g in groups
        ]
    return out


def _state(run: Path) -> dict[str, Any]:
    checkpoint = latest_checkpoint(run)
    assert checkpoint is not None
    state: dict[str, Any] = torch.load(checkpoint / "trainer_state.pt", weights_only=False)["state"]
    return state


def test_the_schedule_the_tests_rely_on() -> None:
    order = [str(t.task_id) for t in TaskSchedule(TASKS, seed=SEED).take(18)]
    assert [episode_length(t) > 1 for t in order] == [False, True] + [False] * 16


def test_no_group_more_than_k_versions_old_is_trained_on_and_the_late_ones_are_counted(
    small_model_dir: Path, tmp_path: Path
) -> None:
    # k = 1. The long task's group (the second admitted, at version 0) goes on until the trainer
    # has finished three more iterations, so it comes back at least two versions late: dropped.
    run = tmp_path / "k1"
    late = {"progress": str(run / "metrics.jsonl"), "outlast": 3}
    result = train(
        _config(small_model_dir, run, iterations=8, max_staleness=1, **{"rollout.env_kwargs": late})
    )
    assert result.policy_version == 8
    used = _used(run)
    assert sorted(used) == list(range(1, 9))
    for iteration, groups in used.items():
        for g in groups:
            lag = (iteration - 1) - g["policy_version"]
            assert 0 <= lag <= 1, (iteration, g)
            assert episode_length(g["task_id"]) == 1, (iteration, g)  # no long group came in time
    rows = read_metrics(run)
    assert max(r["staleness/max"] for r in rows) <= 1
    # Within k but behind: trained on, corrected by truncated importance sampling.
    assert sum(r["staleness/corrected"] for r in rows) >= 1
    # The late group was dropped and counted; the run's total is in its checkpoint.
    assert rows[-1]["staleness/dropped"] >= 1
    assert rows[-1]["staleness/dropped"] == sum(r["staleness/dropped_now"] for r in rows)
    assert _state(run)["dropped_groups"] == rows[-1]["staleness/dropped"]
    assert rows[-1]["staleness/dropped_lost"] == 0  # nothing came from a killed process here

    # k = 0: after the first iteration too, every group is of the version it is trained at (the
    # trainer waits for the long groups).
    run = tmp_path / "k0"
    train(_config(small_model_dir, run, iterations=3, max_staleness=0))
    used = _used(run)
    assert sorted(used) == [1, 2, 3]
    assert any(episode_length(g["task_id"]) > 1 for g in used[1])
    for iteration, groups in used.items():
        assert [g["policy_version"] for g in groups] == [iteration - 1] * 2, iteration
    assert read_metrics(run)[-1]["staleness/dropped"] == 0


# -- runs sharing a stream --------------------------------------------------------------------


@pytest.fixture
def stream() -> Iterator[str]:
    """A stream of the test's own on the real Redis, with a reader that never reads.

    That consumer group holds every entry back from trimming, so the test can read each group
    ever published (with its ``run`` field) on the raw stream at the end.
    """
    require(redis_up(), "a Redis server on 127.0.0.1:6379", how="redis-server --daemonize yes --port 6379")
    name = f"envhub-test:stale:{uuid.uuid4().hex[:10]}"
    client = redis.Redis.from_url(REDIS)
    client.xgroup_create(name, "monitor", id="0", mkstream=True)
    try:
        yield name
    finally:
        for key in client.scan_iter(f"{name}*"):
            client.delete(key)
        client.close()


def _searchqa(model: Path, run: Path, stream: str, **over: Any) -> Any:
    base = {
        "env": "envhub/SearchQA-v0",
        "algo": "grpo",
        "model.path": str(model),
        "iterations": 2,
        "seed": 1,
        "max_staleness": 1,
        "output.run_dir": str(run),
        "output.tensorboard": False,
        "output.checkpoint_every": 1,
        "rollout.group_size": 2,
        "rollout.batch_tasks": 2,
        "rollout.max_steps": 2,
        "rollout.max_tokens": 6,
        "rollout.queue": REDIS,
        "rollout.queue_stream": stream,
        "optim.lr": 1e-4,
        "optim.micro_batch_rows": 8,
    }
    base.update(over)
    return load_config(None, base)


def _entries(client: redis.Redis, stream: str) -> list[tuple[str, dict[str, str]]]:
    """Every entry on the raw stream (XRANGE): id and header fields (the payload left out)."""
    entries: Any = client.xrange(stream)
    return [
        (entry_id.decode(), {k.decode(): v.decode() for k, v in fields.items() if k != b"v"})
        for entry_id, fields in entries
    ]


def _before(a: str, b: str) -> bool:
    """Whether stream id ``a`` is at or before ``b``."""
    am, asq = (int(x) for x in a.split("-"))
    bm, bsq = (int(x) for x in b.split("-"))
    return (am, asq) <= (bm, bsq)


def _group_info(client: redis.Redis, stream: str) -> dict[str, dict[str, Any]]:
    return {g["name"].decode(): g for g in client.xinfo_groups(stream)}


def test_two_runs_on_one_stream_each_train_only_on_their_own_groups(
    small_model_dir: Path, tmp_path: Path, stream: str, sampled_groups: list[Any]
) -> None:
    import asyncio

    from envhub.rollout.queue.redis import RedisQueue

    async def plant() -> None:  # a third run's groups, first on the stream
        other = RedisQueue(REDIS, stream=stream, group="trainers:other", run="other")
        try:
            for group in sampled_groups[:3]:
                await other.put(group)
        finally:
            await other.aclose()

    asyncio.run(plant())
    first_dir, moved_dir = tmp_path / "a", tmp_path / "moved" / "a"
    train(_searchqa(small_model_dir, first_dir, stream))  # run A
    label_a = run_label(first_dir)
    assert _state(first_dir)["run_label"] == label_a  # recorded where a resume finds it
    train(_searchqa(small_model_dir, tmp_path / "b", stream))  # run B, on the same stream
    label_b = run_label(tmp_path / "b")
    # A resumes from another place (a container mounting the run directory elsewhere): its
    # label comes from its checkpoint, not from the new path.
    moved_dir.parent.mkdir()
    first_dir.rename(moved_dir)
    assert run_label(moved_dir) != label_a
    result = train(_searchqa(small_model_dir, moved_dir, stream, iterations=4))
    assert result.policy_version == 4

    client = redis.Redis.from_url(REDIS)
    entries = _entries(client, stream)
    run_of = {h["uid"]: h["run"] for _, h in entries}
    groups = _group_info(client, stream)
    # One consumer group per run (the planted run's made by its producer, which counts its lag
    # there) and the monitor: A did not start a new one when it moved.
    assert sorted(groups) == sorted(
        ["monitor", "trainers:other", f"trainers:{label_a}", f"trainers:{label_b}"]
    )
    for run_dir, label in ((moved_dir, label_a), (tmp_path / "b", label_b)):
        used = [g["uid"] for groups_ in _used(run_dir).values() for g in groups_]
        assert used and all(run_of[uid] == label for uid in used), label
        info = groups[f"trainers:{label}"]
        assert info["pending"] == 0  # everything it took was acknowledged
        # Every other run's entry its group read was passed over and counted as foreign: the
        # planted ones and the other trainer's.
        passed = [
            h for entry_id, h in entries
            if h["run"] != label and _before(entry_id, info["last-delivered-id"].decode())
        ]  # fmt: skip
        state = _state(run_dir)
        assert state["run_label"] == label
        assert state["foreign_groups"] == len(passed) >= 3, label
        assert read_metrics(run_dir)[-1]["queue/foreign"] == state["foreign_groups"]
    assert {h["run"] for _, h in entries} == {"other", label_a, label_b}


def test_a_resume_may_not_name_another_run_label(small_model_dir: Path, tmp_path: Path) -> None:
    from envhub.core.errors import ConfigurationError

    run = tmp_path / "run"
    train(_config(small_model_dir, run, iterations=1, max_staleness=0, **{"rollout.task_ids": ["t0", "t1"]}))
    with pytest.raises(ConfigurationError, match=r"rollout\.run is 'elsewhere'.*records the label"):
        train(
            _config(
                small_model_dir,
                run,
                iterations=2,
                **{"rollout.task_ids": ["t0", "t1"], "rollout.run": "elsewhere"},
            )
        )


# -- a resume over Redis ------------------------------------------------------------------------


def _killable(model: Path, run: Path, stream: str, k: int) -> list[str]:
    return [
        sys.executable, "-m", "envhub.train.cli",
        "--env", "envhub/SearchQA-v0", "--model", str(model), "--iterations", "8", "--run-dir", str(run),
        "--group-size", "2", "--batch-tasks", "2", "--queue", REDIS, "--no-progress", "--seed", "3",
        "--set", f"rollout.queue_stream={stream}", "--set", "output.checkpoint_every=2",
        "--set", "rollout.max_steps=2", "--set", "rollout.max_tokens=6", "--set", f"max_staleness={k}",
        "--set", "output.tensorboard=false", "--set", "algo=grpo",
    ]  # fmt: skip


def _versions(client: redis.Redis, stream: str) -> list[tuple[str, str, int]]:
    """(entry id, uid, policy version) of every entry on the raw stream."""
    return [(i, h["uid"], int(h["policy_version"])) for i, h in _entries(client, stream)]


@pytest.mark.slow
@pytest.mark.parametrize("k", [0, 1])
def test_a_killed_trainers_backlog_drains_by_the_same_rule_after_a_resume(
    small_model_dir: Path, tmp_path: Path, stream: str, k: int
) -> None:
    run = tmp_path / "run"
    client = redis.Redis.from_url(REDIS)
    env = {**os.environ, "PYTHONPATH": str(ROOT), "OMP_NUM_THREADS": "1"}
    first = subprocess.Popen(_killable(small_model_dir, run, stream, k), env=env, cwd=ROOT,
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)  # fmt: skip
    # Kill it once it has a checkpoint and has published a group of a later version: groups of
    # weights no checkpoint holds are then waiting on the stream, beside the unacknowledged ones.
    deadline, checkpoint = time.monotonic() + 180, None
    try:
        while first.poll() is None and time.monotonic() < deadline:
            checkpoint = latest_checkpoint(run)
            if checkpoint is not None:
                saved = int(checkpoint.name[5:])
                if any(v > saved for _, _, v in _versions(client, stream)):
                    break
            time.sleep(0.02)
        assert first.poll() is None, "the first run ended before it could be killed"
        first.send_signal(signal.SIGKILL)
    finally:
        first.kill()
        first.wait()
    checkpoint = latest_checkpoint(run)
    assert checkpoint is not None
    saved = int(checkpoint.name[5:])
    before = _state(run)
    assert before["policy_version"] == saved
    backlog = _versions(client, stream)  # final: the killed process publishes nothing more
    lost = {uid for _, uid, v in backlog if v > saved}
    assert lost, "no group of a version after the checkpoint was on the stream"
    group = f"trainers:{run_label(run)}"
    assert client.xpending(stream, group)["pending"] > 0  # the killed run's unacknowledged groups

    # The resume, with the config the killed run wrote (and two more iterations).
    config = load_config(run / "config.json", {"iterations": 10})
    result = train(config)
    assert result.policy_version == 10

    # The backlog drained, counted on the raw stream: everything published before the kill was
    # delivered to the run's consumer group, and nothing is pending.
    info = _group_info(client, stream)[group]
    assert info["pending"] == 0 and client.xpending(stream, group)["pending"] == 0
    assert _before(backlog[-1][0], info["last-delivered-id"].decode())
    # No group older than k, or of the lost versions, went into an update after the resume.
    used = _used(run)
    for iteration in range(saved + 1, 11):
        for g in used[iteration]:
            lag = (iteration - 1) - g["policy_version"]
            assert 0 <= lag <= k, (iteration, g)
            assert g["uid"] not in lost, (iteration, g)
    # Every lost group was dropped and counted; the count went on from the checkpoint's.
    after = _state(run)
    dropped_since = sum(r.metrics["staleness/dropped_now"] for r in result.iterations)
    assert after["dropped_groups"] == before["dropped_groups"] + dropped_since
    assert after["dropped_lost"] - before["dropped_lost"] == len(lost)
    assert result.iterations[-1].metrics["staleness/dropped"] == after["dropped_groups"]
    client.close()


def _cli_resume(run: Path, iterations: int) -> list[str]:
    """``envhub-train`` resuming ``run`` with the config it wrote (to ``iterations``)."""
    return [
        sys.executable, "-m", "envhub.train.cli", "--config", str(run / "config.json"),
        "--iterations", str(iterations), "--no-progress",
    ]  # fmt: skip


@pytest.mark.slow
def test_a_backlog_bigger_than_max_unacked_drains_on_resume_and_each_drop_is_counted_once(
    small_model_dir: Path, tmp_path: Path, stream: str, sampled_groups: list[Any]
) -> None:
    import asyncio

    from envhub.rollout.queue.redis import RedisQueue
    from envhub.rollout.queue.settings import run_group
    from envhub.train.drops import LEDGER_NAME, DropLedger

    run = tmp_path / "run"
    train(_searchqa(small_model_dir, run, stream, iterations=1))  # a checkpoint at version 1
    label = run_label(run)
    before = _state(run)
    # A backlog of the run's own label sampled by weights it never had (a job no checkpoint
    # lists): every group is dropped as lost, far more of them than the queue lets the trainer
    # hold unacknowledged.
    planted = [f"planted-{i}" for i in range(300)]

    async def plant() -> None:
        queue = RedisQueue(REDIS, stream=stream, group=run_group(label), run=label, max_lag=10_000)
        try:
            for i, uid in enumerate(planted):
                group = sampled_groups[i % len(sampled_groups)]
                await queue.put(
                    group.model_copy(update={"uid": uid, "job_id": "gone-v1", "policy_version": 1})
                )
        finally:
            await queue.aclose()

    asyncio.run(plant())
    env = {**os.environ, "PYTHONPATH": str(ROOT), "OMP_NUM_THREADS": "1", "ENVHUB_QUEUE_MAX_UNACKED": "6"}
    ledger = run / LEDGER_NAME
    # Resume, and SIGKILL it in the middle of the drain: once some drops are recorded (and
    # acknowledged), before the checkpoint that counts them.
    log = (tmp_path / "first.log").open("w")
    first = subprocess.Popen(_cli_resume(run, 3), env=env, cwd=ROOT, stdout=log, stderr=subprocess.STDOUT)
    deadline = time.monotonic() + 180
    try:
        while first.poll() is None and time.monotonic() < deadline:
            if ledger.is_file() and ledger.stat().st_size:
                break
            time.sleep(0.005)
        ended = (tmp_path / "first.log").read_text()[-3000:]
        assert first.poll() is None, f"the resume ended before it could be killed:\n{ended}"
        first.send_signal(signal.SIGKILL)
    finally:
        first.kill()
        first.wait()
        log.close()
    # Killed with drops recorded (and acknowledged) that its last checkpoint does not count.
    killed_at = _state(run)["iteration"]
    on_record = DropLedger(ledger).since(killed_at)
    assert on_record

    second = subprocess.run(
        _cli_resume(run, 3), env=env, cwd=ROOT, capture_output=True, text=True, timeout=300
    )
    assert second.returncode == 0, second.stdout[-3000:] + second.stderr[-3000:]

    client = redis.Redis.from_url(REDIS)
    group = run_group(label)
    info = _group_info(client, stream)[group]
    assert info["pending"] == 0  # everything delivered was acknowledged
    entries = _entries(client, stream)
    last = info["last-delivered-id"].decode()
    delivered = [h["uid"] for entry_id, h in entries if _before(entry_id, last)]
    assert set(planted) <= set(delivered)  # the whole backlog drained
    used = [g["uid"] for groups in _used(run).values() for g in groups]
    assert not set(planted) & set(used)
    after = _state(run)
    assert after["iteration"] == 3
    # Counted once: every group the run's consumer group was handed is either in an update (the
    # records of iterations 1-3 as finally trained) or counted as dropped, and none twice.
    assert len(delivered) == len(set(delivered)) == len(used) + after["dropped_groups"]
    assert after["dropped_lost"] - before["dropped_lost"] >= len(planted)
    print(f"killed with {len(on_record)} drops on record past checkpoint {killed_at}; "
          f"delivered {len(delivered)}, used {len(used)}, dropped {after['dropped_groups']}")  # fmt: skip
    client.close()
