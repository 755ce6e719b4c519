"""The pieces of ``bench/rollout_vllm.py`` that decide what its lockstep comparison measures.

The benchmark itself needs vLLM (its ``--quick`` run is in ``tests/test_bench.py``, vllm-marked);
these check, with a scripted policy standing in for the model, that the comparison is fair: the
env's episode lengths depend on the task alone, and the lockstep baseline and envhub's engine play
the same steps with the same per-request seeds, lockstep sending one batch per turn.
"""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest

import envhub
from envhub.policy.base import Completion, Prompt, SamplingParams
from envhub.server import ServerSettings
from envhub.server.testing import RunningServer, serve_in_thread

BENCH = Path(__file__).resolve().parents[1] / "bench"
sys.path.insert(0, str(BENCH))
import rollout_vllm  # noqa: E402
from varlen_env import SOLVED, episode_length  # noqa: E402


def play(task: str, action: str, cap: int = 60) -> tuple[int, bool]:
    env = envhub.make(rollout_vllm.ENV_ID)
    env.reset(options={"task_id": task})
    for step in range(1, cap + 1):
        _, _, terminated, _, info = env.step(action)
        if terminated:
            return step, bool(info["won"])
    return cap, False


def test_the_episode_length_is_set_by_the_task_alone() -> None:
    for i in range(12):
        expected = episode_length(i)
        for action in ("look", "go to fridge 1", "<action>take apple 1 from shelf 1</action>"):
            assert play(f"task-{i}", action) == ((expected, True) if expected else (60, False))
    lengths = [episode_length(i) for i in range(2000)]
    solved = [n for n in lengths if n is not None]
    assert abs(len(solved) / len(lengths) - SOLVED) < 0.05
    assert min(solved) == 5 and max(solved) == 20  # walkthroughs of 4-10 steps, x(1, 2], rounded up


class Recording(rollout_vllm.SeededBackend):
    """The bench's seeding wrapper, noting each call's prompts (member, turn)."""

    calls: list[list[tuple[str, int]]]

    async def generate(self, prompts: Sequence[Prompt], sampling: SamplingParams) -> list[Completion]:
        self.calls.append([(str(p.metadata["member"]), int(p.metadata["step_idx"])) for p in prompts])
        return await super().generate(prompts, sampling)


class Scripted:
    """Answers at once (a stand-in for the model: what is checked is the loops around it)."""

    policy_version = 0
    accepts_images = False

    def __init__(self, max_concurrency: int = 64, delay_s: float = 0.0) -> None:
        self.max_concurrency = max_concurrency
        self.delay_s = delay_s
        self.in_flight = self.peak = 0

    async def generate(self, prompts: Sequence[Prompt], sampling: SamplingParams) -> list[Completion]:
        self.in_flight += len(prompts)
        self.peak = max(self.peak, self.in_flight)
        await asyncio.sleep(self.delay_s)
        self.in_flight -= len(prompts)
        text = "<think>.</think><action>look</action>"
        return [Completion(text, [1, 2, 3], [4, 5], [-0.1, -0.2], "length", 0) for _ in prompts]

    async def aclose(self) -> None:
        return None


@pytest.fixture(scope="module")
def varlen_server() -> Iterator[RunningServer]:
    with serve_in_thread(ServerSettings(env_id=rollout_vllm.ENV_ID, workers=1)) as running:
        yield running


def test_lockstep_and_the_engine_play_the_same_steps_with_the_same_seeds(
    varlen_server: RunningServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    made: list[Recording] = []

    def backend(base_url: str, model_dir: Any, setup: rollout_vllm.Setup) -> rollout_vllm.SeededBackend:
        made.append(Recording(Scripted(), base_seed=setup.seed))  # type: ignore[arg-type]
        made[-1].calls = []
        return made[-1]

    monkeypatch.setattr(rollout_vllm, "backend", backend)
    setup = rollout_vllm.Setup(groups=6, group_size=2, concurrent=3, max_turns=12, max_tokens=8)
    lock = asyncio.run(rollout_vllm.run_lockstep("", varlen_server.base_url, Path("."), setup))
    ind = asyncio.run(rollout_vllm.run_independent("", varlen_server.base_url, Path("."), setup))
    cap = setup.max_turns
    expected = sum(setup.group_size * min(episode_length(g) or cap, cap) for g in range(setup.groups))
    assert lock.steps == ind.steps == expected
    assert lock.episodes == ind.episodes == 12
    assert lock.generated == ind.generated == 2 * expected
    lock_backend, ind_backend = made
    # The same (group, member, turn) seeds, whichever loop sent them.
    assert sorted(s.seed for s in lock_backend.sent) == sorted(s.seed for s in ind.sent)
    assert len({s.seed for s in ind.sent}) == expected
    # Lockstep: one call per turn with every live member of the batch of 3 groups.
    first = lock_backend.calls[0]
    assert {member.split(":")[1] for member, _ in first} == {"0", "1", "2"} and len(first) == 6
    longest = [max(min(episode_length(g) or cap, cap) for g in b) for b in ((0, 1, 2), (3, 4, 5))]
    assert len(lock_backend.calls) == sum(longest)
    # The engine: one call per group and turn, never two groups in one call.
    assert all(len({member.split(":")[1] for member, _ in call}) == 1 for call in ind_backend.calls)


def test_the_open_run_plays_the_same_steps_with_every_group_open_and_the_same_request_bound(
    varlen_server: RunningServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    made: list[tuple[Recording, Scripted]] = []

    def backend(base_url: str, model_dir: Any, setup: rollout_vllm.Setup) -> rollout_vllm.SeededBackend:
        # The bench's bound: the endpoint's max_concurrency is C x G requests.
        inner = Scripted(max_concurrency=setup.in_flight, delay_s=0.002)
        made.append((Recording(inner, base_seed=setup.seed), inner))  # type: ignore[arg-type]
        made[-1][0].calls = []
        return made[-1][0]

    monkeypatch.setattr(rollout_vllm, "backend", backend)
    setup = rollout_vllm.Setup(groups=6, group_size=2, concurrent=2, max_turns=12, max_tokens=8)
    assert setup.opened == 6  # every group by default
    url = varlen_server.base_url
    ind = asyncio.run(rollout_vllm.run_independent("", url, Path("."), setup))
    opened = asyncio.run(rollout_vllm.run_independent("", url, Path("."), setup, open_all=True))
    lock_open = asyncio.run(rollout_vllm.run_lockstep("", url, Path("."), setup, open_all=True))
    assert (ind.mode, opened.mode, lock_open.mode) == ("independent", "open", "lockstep-open")
    assert opened.steps == ind.steps == lock_open.steps and opened.episodes == ind.episodes == 12
    # The same requests (a scripted policy answers alike whatever the batch).
    assert rollout_vllm.same_requests(ind.sent, opened.sent) == 1.0
    assert rollout_vllm.same_requests(lock_open.sent, opened.sent) == 1.0
    assert rollout_vllm.same_requests(ind.sent[1:], opened.sent[:-1]) < 1.0
    # Every group is open at once, yet the policy never sees more than C x G = 4 requests.
    for recording, inner in made[1:]:
        first_turn = {member.split(":")[1] for call in recording.calls for member, turn in call if turn == 0}
        assert first_turn == {str(g) for g in range(6)}
        assert inner.peak == setup.in_flight
    assert made[0][1].peak <= setup.in_flight
    # Lockstep-open: one batch of all 6 groups, one call per turn of every live member.
    assert len(made[2][0].calls[0]) == 12


def test_the_equal_turn_bound_counts_the_tail() -> None:
    # One batch of every group: both loops wait for the longest episode, so no speedup at all.
    assert rollout_vllm.turn_bound(rollout_vllm.Setup(16, 2, 16, 20, 16)) == 1.0
    # Lengths 20, 20, 8, 20 (tasks 0-3) on 2 slots: lockstep 20 + 20 turns; independent: task-2
    # starts at 20 on a free slot, ends at 28, task-3 at 20 ends at 40: no gain either.
    assert rollout_vllm.turn_bound(rollout_vllm.Setup(4, 2, 2, 20, 16)) == 1.0
    # Tasks 0-5 (20, 20, 8, 20, 11, 16) on 2 slots: lockstep 20 + 20 + 16 = 56; independent:
    # task-4 starts at 28 on task-2's slot, task-5 at 39 after it, so the last ends at 55.
    assert rollout_vllm.turn_bound(rollout_vllm.Setup(6, 2, 2, 20, 16)) == 56 / 55


def test_the_prefix_cache_counters_are_read_from_vllms_metric_names() -> None:
    # vLLM 0.32 (v1/metrics/loggers.py) declares prometheus_client Counters named
    # vllm:prefix_cache_queries / vllm:prefix_cache_hits, one series per engine, beside
    # vllm:external_prefix_cache_* (a KV connector's, not the prefix cache's): the exposition
    # is what prometheus_client writes for them (`_total` and `_created` samples).
    import threading
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

    from prometheus_client import CollectorRegistry, Counter, generate_latest

    registry = CollectorRegistry()
    labels = ["model_name", "engine"]
    queries = Counter("vllm:prefix_cache_queries", "q", labels, registry=registry)
    hits = Counter("vllm:prefix_cache_hits", "h", labels, registry=registry)
    external = Counter("vllm:external_prefix_cache_hits", "x", labels, registry=registry)
    for engine, (q, h) in enumerate([(100, 40), (50, 10)]):
        queries.labels("m", str(engine)).inc(q)
        hits.labels("m", str(engine)).inc(h)
    external.labels("m", "0").inc(1000)

    class Metrics(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            body = generate_latest(registry)
            self.send_response(200)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Metrics)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        url = f"http://127.0.0.1:{server.server_address[1]}"
        before = rollout_vllm.prefix_cache_counters(url)
        assert before == (50.0, 150.0)
        queries.labels("m", "0").inc(100)
        hits.labels("m", "0").inc(75)
        assert rollout_vllm.hit_rate(before, rollout_vllm.prefix_cache_counters(url)) == 0.75
    finally:
        server.shutdown()
        server.server_close()


def test_runs_that_did_different_work_are_not_compared() -> None:
    row = {"repeat": 0, "episodes": 8, "steps": 40, "generated_tokens": 900}
    modes = ("lockstep", "independent", "lockstep-open", "open", "raw", "raw-wide")
    same = [{**row, "mode": mode} for mode in modes]
    rollout_vllm.check_same_work(same)
    for mode, key in (
        ("lockstep", "steps"),
        ("lockstep-open", "episodes"),
        ("open", "episodes"),
        ("raw", "generated_tokens"),
        ("raw-wide", "generated_tokens"),
    ):
        other = [r if r["mode"] != mode else {**r, key: r[key] + 1} for r in same]
        with pytest.raises(SystemExit, match="not the same work"):
            rollout_vllm.check_same_work(other)
