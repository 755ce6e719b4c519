"""The rollout driver: ``play(request, sink)`` builds the engine a request describes and runs it.

Every caller of the engine goes through :func:`play`: the rollout service (a Redis sink and a
journal), ``envhub rollout`` (a JSONL or Redis sink), the trainer's in-process rollouts (the
run's queue, its own sampler as the backend, its own tasks), eval (the episode sink) and the
TRL adapter (no sink: the groups come back, in task order). What the request does not say
comes in as arguments: a ready backend (an in-process model), a shared env pool, explicit
:class:`~envhub.rollout.engine.GroupTask` rows (seeds the caller chose), a journal.

A request with ``agents`` (Dr. MAS) plays a team: the engine's backend is the orchestra over the
roles' policies (:func:`envhub.rollout.orchestra.team_backend`; a role without its own policy
plays the request's, or the given backend), and each finished group reaches the sink (or the
journal) with one Step row per role call.

``play`` closes what it built (the env pool, the backend) and nothing it was given; the sink
is always the caller's.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from envhub.core.records import Group
from envhub.core.wire import RolloutRequest
from envhub.policy.base import PolicyBackend
from envhub.rollout.engine import (
    EngineEvent,
    GroupTask,
    JournalLike,
    RolloutEngine,
    RolloutReport,
    SequenceBuilderLike,
)
from envhub.rollout.envpool import EnvPool, InProcessEnvPool, RemoteEnvPool
from envhub.rollout.jobs import build_backend, resolve_env_id, sequence_builders
from envhub.rollout.journal import ResumePoint
from envhub.rollout.metrics import RolloutMetrics
from envhub.rollout.orchestra import ExpandingJournal, ExpandingWriter, OrchestraBackend, team_backend
from envhub.rollout.queue.base import GroupWriter
from envhub.rollout.replicas import expand_replicas

__all__ = ["GroupCollector", "Played", "make_pool", "play"]


class GroupCollector:
    """A :class:`~envhub.rollout.queue.base.GroupWriter` that keeps the groups, by task slot.

    A re-run group keeps its slot (only its attempt changes), so :attr:`groups` is in task
    order whatever order the groups finished in.
    """

    def __init__(self) -> None:
        self._by_slot: dict[int, Group] = {}

    async def put(self, group: Group) -> None:
        # uid = "<job>:<slot>:<attempt>" (envhub.rollout.journal.group_uid); the job may hold ":".
        self._by_slot[int(group.uid.rsplit(":", 2)[1])] = group

    async def aclose(self) -> None:
        return None

    @property
    def groups(self) -> list[Group]:
        return [self._by_slot[slot] for slot in sorted(self._by_slot)]


@dataclass
class Played:
    """What :func:`play` did: the engine's report, and the groups when it kept them (no sink)."""

    report: RolloutReport
    engine: RolloutEngine
    groups: list[Group] = field(default_factory=list)


def make_pool(
    *, env_id: str, env_urls: Sequence[str], token: str | None = None, resolve_replicas: bool = False
) -> EnvPool:
    """Replicas when URLs are given, else in-process envs of ``env_id``.

    ``resolve_replicas`` makes every address of a URL's host name a replica of its own
    (:func:`~envhub.rollout.replicas.expand_replicas`).
    """
    if env_urls:
        urls = expand_replicas(env_urls) if resolve_replicas else list(env_urls)
        return RemoteEnvPool(urls, env_id=env_id, token=token)
    from envhub.envs.registry import make, resolve

    spec = resolve(env_id)

    def build(**kwargs: Any) -> Any:
        return make(spec.id, **kwargs)

    return InProcessEnvPool(build, env_id=spec.id)


async def _pool(request: RolloutRequest) -> EnvPool:
    if not request.env_urls:
        if request.env_id is None:
            from envhub.core.errors import ConfigurationError

            raise ConfigurationError(
                "A rollout job needs env_urls (env servers) or env_id (in-process envs)."
            )
        return make_pool(env_id=request.env_id, env_urls=())
    env_id = await resolve_env_id(request)
    urls = request.env_urls
    if request.resolve_replicas:
        urls = await asyncio.to_thread(expand_replicas, urls)
    return RemoteEnvPool(urls, env_id=env_id, token=request.env_token)


async def play(
    request: RolloutRequest,
    sink: GroupWriter | None = None,
    *,
    backend: PolicyBackend | None = None,
    agent_backends: Mapping[str, PolicyBackend] | None = None,
    envs: EnvPool | None = None,
    tasks: Sequence[GroupTask] | None = None,
    job_id: str = "job",
    journal: JournalLike | None = None,
    metrics: RolloutMetrics | None = None,
    sequence_builder: Callable[[str, str], SequenceBuilderLike] | None = None,
    on_event: Callable[[EngineEvent], None] | None = None,
    on_engine: Callable[[RolloutEngine], None] | None = None,
    on_tasks: Callable[[list[GroupTask]], None] | None = None,
    done_slots: Sequence[int] = (),
    resume: Sequence[ResumePoint] = (),
) -> Played:
    """Play ``request`` and publish its groups to ``sink``, or return them (no sink, no journal).

    Args:
        request: the job (group size, sampling, context, limits; envs, tasks and policy unless
            given below).
        sink: where finished groups go; None: kept and returned in task order (:attr:`Played.groups`).
        backend: the policy (default: built from ``request.policy``, and closed at the end).
        agent_backends: with ``request.agents``, the policies of some roles (over
            ``request.agents.policies``; the caller closes them), e.g. a model per agent.
        envs: the env pool (default: built from ``request.env_urls`` / ``env_id``, and closed).
        tasks: the groups to play (default: ``request.task_ids``, else the first ``request.count``
            of the split, seeded ``request.seed + slot``).
        job_id: prefix of the group ids.
        journal: records steps and commits groups (it publishes; resume after a crash).
        metrics: shared metrics.
        sequence_builder: trajectory-mode builders (default: over ``request.policy.tokenizer``).
        on_event: engine events (progress).
        on_engine: called with the engine before it starts.
        on_tasks: called with the job's tasks before they are played (e.g. a progress total).
        done_slots: slots already published by an earlier run of this job (skipped).
        resume: in-flight groups read back from the journal.

    Raises:
        JobAborted: a failure no re-run can fix (policy down, bad configuration).
        EnvhubError: the env servers or the policy could not be set up.
    """
    own_envs, own_backend = envs is None, backend is None
    collector = GroupCollector() if sink is None and journal is None else None
    writer: GroupWriter | None = sink if collector is None else collector
    team: OrchestraBackend | None = None
    if envs is None:
        envs = await _pool(request)
    try:
        if backend is None and request.policy is not None:
            backend = build_backend(request.policy, request.policy_version)
        if backend is None and request.agents is None:
            from envhub.core.errors import ConfigurationError

            raise ConfigurationError("play() needs request.policy or a backend.")
        if sequence_builder is None and request.trajectory_mode:
            sequence_builder = sequence_builders(request.policy)  # type: ignore[arg-type]
        if request.agents is not None:
            # Multi-agent: the engine plays the team as its backend; the groups it finishes are
            # expanded to one row per role call on their way out (envhub.rollout.orchestra).
            team = _team(request, backend, envs.env_id, agent_backends)
            writer = ExpandingWriter(writer, team) if writer is not None else None
            journal = ExpandingJournal(journal, team) if journal is not None else None
        player = team if team is not None else backend
        assert player is not None  # one of the two was checked above
        engine = RolloutEngine(
            envs=envs,
            backend=player,
            config=request,
            queue=writer,
            journal=journal,
            metrics=metrics,
            job_id=job_id,
            on_event=on_event,
            sequence_builder=sequence_builder,
        )
        if tasks is None:
            tasks = await engine.resolve_tasks(task_ids=request.task_ids, count=request.count)
        if on_tasks is not None:
            on_tasks(list(tasks))
        if on_engine is not None:
            on_engine(engine)
        skip = set(done_slots)
        engine.report.total = len(skip)
        engine.report.published = len(skip)
        report = await engine.run([t for t in tasks if t.slot not in skip], resume=resume)
        return Played(report, engine, collector.groups if collector is not None else [])
    finally:
        if own_envs:
            await envs.aclose()
        if team is not None:
            await asyncio.shield(team.aclose())
        if own_backend and backend is not None:
            await asyncio.shield(backend.aclose())


def _team(
    request: RolloutRequest,
    shared: PolicyBackend | None,
    env_id: str,
    given: Mapping[str, PolicyBackend] | None = None,
) -> OrchestraBackend:
    """The backend that plays ``request.agents`` on ``env_id`` (its roles' policies, else ``shared``)."""
    from envhub.envs.registry import resolve

    assert request.agents is not None  # the caller checked
    spec = resolve(env_id)
    limit = (
        request.max_steps
        if spec.max_episode_steps is None
        else min(request.max_steps, spec.max_episode_steps)
    )
    return team_backend(
        request.agents,
        shared=shared,
        env_family=spec.family or spec.id,
        max_steps=limit,
        policy_version=request.policy_version,
        given=given,
    )
