"""Where the trainer's groups come from, and where its new weights go.

Two sources behind one small interface, both publishing finished groups to the run's
:class:`~envhub.rollout.queue.base.GroupQueue`:

* :class:`EngineRollouts`: the rollout engine in this process, over in-process envs or env
  servers, generating with the in-process model (the embedded default) or an OpenAI-compatible
  server (vLLM).
* :class:`ServiceRollouts`: jobs submitted to a rollout service (``envhub serve-rollouts``),
  which publishes into Redis; the policy is a server the trainer pushes weights into.

Groups never mix policy versions. In-process generation keeps one sampler per live version
(a new version starts a new sampler; the old one is dropped once its groups finish). A served
policy has one set of weights, whether this process plays on it or a rollout service's jobs do,
so a push closes a gate (:class:`_WeightSwap`): plays that come wait, the push waits until the
groups (or service jobs) in flight have finished, swaps the weights and opens the gate at the new
version. No group runs across a swap, and every group is labelled with the version of the
weights that sampled it. With a served model per agent (Dr. MAS, :class:`ServedPolicy`) one
gate covers every server a team plays on: a push drains the team's plays, swaps the weights of
each server, and opens the gate once every one holds the new version.
"""

from __future__ import annotations

import asyncio
import contextlib
import copy
import hashlib
import os
import re
import time
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from envhub.core.errors import ConfigurationError, EnvhubError
from envhub.core.wire import PolicyEndpoint, RolloutJobCreated, RolloutRequest, SamplingRequest
from envhub.policy.base import PolicyBackend
from envhub.rollout.driver import play
from envhub.rollout.engine import GroupTask, SequenceBuilderLike
from envhub.rollout.envpool import EnvPool, InProcessEnvPool, RemoteEnvPool
from envhub.rollout.queue.base import GroupQueue
from envhub.rollout.queue.memory import MemoryQueue
from envhub.rollout.queue.settings import QueueSettings, run_group
from envhub.rollout.replicas import expand_replicas
from envhub.train.config import RolloutSettings

__all__ = [
    "EngineRollouts",
    "MissingCredentialsError",
    "PushDrainTimeoutError",
    "RolloutSource",
    "ServedPolicy",
    "ServiceRollouts",
    "build_env_pool",
    "check_ack_interval",
    "check_drain_room",
    "in_process_sampler_factory",
    "new_run_id",
    "refused",
    "run_label",
    "trainer_queue",
]


class MissingCredentialsError(EnvhubError):
    """A server refused the trainer (HTTP 401/403): the message names the setting that holds its secret."""

    code = "UNAUTHORIZED"
    status_code = 401


def refused(what: str, url: str, setting: str) -> MissingCredentialsError:
    """The error for ``what`` at ``url`` refusing the trainer; ``setting`` is where its secret goes."""
    return MissingCredentialsError(
        f"The {what} at {url} refused the trainer (missing or wrong credentials); set {setting} in the "
        "trainer's environment to the secret it was started with.",
        url=url,
        setting=setting,
    )


def check_ack_interval(
    *, checkpoint_every: int, iterations: int, groups_per_iteration: int, max_unacked: int
) -> None:
    """Refuse, at start-up, a run that would hold more groups unacked than the queue allows.

    A trainer on a durable (Redis) queue acks its groups only once a checkpoint records them
    as used, so between checkpoints it holds ``checkpoint_every x groups_per_iteration``
    deliveries (all of the run's when ``checkpoint_every`` is 0: a checkpoint at the end only).
    Groups the staleness rule drops are not held: the trainer records them in its drop ledger
    and acknowledges them at once (:mod:`envhub.train.drops`), however many a resume drains.

    Raises:
        ConfigurationError: that is more than ``max_unacked`` (``ENVHUB_QUEUE_MAX_UNACKED``).
    """
    interval = checkpoint_every or iterations
    held = interval * groups_per_iteration
    if held > max_unacked:
        fits = max(max_unacked // max(groups_per_iteration, 1), 1)
        raise ConfigurationError(
            f"This run would hold {held} groups unacked between checkpoints ({interval} iterations x "
            f"{groups_per_iteration} groups; the trainer acks a durable queue's groups only at a "
            f"checkpoint), more than the queue's max_unacked={max_unacked}. Set "
            f"output.checkpoint_every to {fits} or less, or raise ENVHUB_QUEUE_MAX_UNACKED.",
            held=held,
            max_unacked=max_unacked,
        )


def check_drain_room(*, max_staleness: int, groups_per_iteration: int, max_lag: int) -> None:
    """Refuse, at start-up, a served-policy run whose weight push could wait forever.

    A push on a served policy drains it (:class:`_WeightSwap`): it waits for the groups in
    flight, and the trainer reads nothing from the queue meanwhile. Up to ``max_staleness x B``
    admitted groups are then unread, and the queue's ``put`` waits while ``max_lag`` are: past
    it the plays wait for a read, the push for the plays, and the run hangs with no message. The
    rule, with one iteration of margin (a resumed run's backlog, replacements): ``(k + 1) x B``
    within ``max_lag``. With k = 0 no group is in flight at a push.

    Raises:
        ConfigurationError: ``k >= 1`` and ``(k + 1) x B > max_lag`` (``ENVHUB_QUEUE_MAX_LAG``).
    """
    need = (max_staleness + 1) * groups_per_iteration
    if max_staleness >= 1 and need > max_lag:
        raise ConfigurationError(
            f"With a served policy a weight push waits for the groups in flight while the trainer reads "
            f"none: up to (max_staleness + 1) x batch_tasks = {need} groups must fit the queue's "
            f"max_lag={max_lag} (ENVHUB_QUEUE_MAX_LAG), or the plays and the push wait for each other "
            f"forever. Raise ENVHUB_QUEUE_MAX_LAG to {need} or more (in the rollout service's "
            "environment too), or lower max_staleness or rollout.batch_tasks.",
            need=need,
            max_lag=max_lag,
        )


def trainer_queue(
    url: str,
    *,
    stream: str,
    consumer: str,
    run: str,
    groups_per_iteration: int,
    settings: QueueSettings,
    max_staleness: int = 0,
) -> GroupQueue:
    """The trainer's queue: in-process (``"memory"``) or a Redis stream.

    On Redis the trainer reads through its run's own consumer group (``trainers:<run>``,
    :func:`~envhub.rollout.queue.settings.run_group`) and takes only entries labelled ``run``:
    two trainer runs on one stream (one rollout service) never take each other's groups, and
    what one skips stays for the other. The producer side (in-process rollouts, or the rollout
    service's jobs, which the trainer sends ``run``) writes ``run`` on each entry and counts
    back-pressure on that group; back-pressure and leases come from ``settings``
    (``ENVHUB_QUEUE_*``). The in-process queue's bound holds what a push on a served policy
    leaves unread, ``(max_staleness + 1) x B`` (:func:`check_drain_room`), and one more B.
    """
    if url == "memory":
        room = max(4, max_staleness + 2) * groups_per_iteration
        return MemoryQueue(max_lag=max(room, 64), claim_idle_ms=settings.lease_ms)
    if url.startswith(("redis://", "rediss://")):
        from envhub.rollout.queue.redis import RedisQueue

        return RedisQueue(
            url,
            stream=stream,
            group=run_group(run),
            consumer=consumer,
            run=run,
            runs={run} if run else None,
            columns=True,  # the trainer decodes straight to rows; records only where needed
            max_lag=settings.max_lag,
            max_unacked=settings.max_unacked,
            claim_idle_ms=settings.lease_ms,
        )
    raise ConfigurationError(f"rollout.queue must be 'memory' or a redis:// URL, got {url!r}.", queue=url)


class PushDrainTimeoutError(EnvhubError):
    """A weight push waited past ``rollout.push_drain_timeout_s`` for the plays in flight."""

    code = "PUSH_DRAIN_TIMEOUT"
    status_code = 504


class RolloutSource(Protocol):
    """Plays groups at a policy version and takes new weights.

    ``jobs`` names the rollout jobs this source ran or will run, by job id (what each group
    carries as ``job_id``) with the policy version they sample: the trainer's staleness rule
    tells its own groups (and those of the run's earlier processes, from its checkpoint) from
    a killed process's by it.
    """

    jobs: dict[str, int]

    @property
    def drains(self) -> bool:
        """Whether a push waits for the groups in flight (one served set of weights)."""
        ...

    async def settle(self) -> None:
        """Return once every job submitted so far is listed in :attr:`jobs`."""
        ...

    async def play(
        self,
        tasks: Sequence[GroupTask],
        *,
        version: int,
        sampling: SamplingRequest,
        group_size: int | None = None,
        queue: GroupQueue | None = None,
    ) -> int:
        """Play ``tasks`` (one group each) at ``version``; return how many groups were published.

        Groups go to the run's queue (or ``queue``); a group dropped after its retries is not
        published, so the caller can admit a replacement.
        """
        ...

    async def push_weights(
        self,
        model: Any | None,
        version: int,
        agents: Mapping[str, Any] | None = None,
        *,
        barrier: Callable[[], Awaitable[None]] | None = None,
    ) -> dict[str, float]:
        """Make ``version`` (the trainer's ``model``) the policy new groups use; returns timings.

        ``agents``: the models of the roles that have their own (Dr. MAS); ``model`` is then the
        shared one, or None when every role has its own.

        Under torchrun every rank calls it with ``barrier`` (every rank waits there for the
        others): the ranks pass it before the new weights go out and again once they are in
        place, so no rank generates on a served policy's old weights after the push began and
        none starts a group at the new version before every rank has it.
        """
        ...

    async def aclose(self) -> None: ...


class _WeightSwap:
    """The plays on a served policy's one set of weights, and the pushes that swap them.

    A push closes the gate (a play that comes meanwhile waits), waits until no play is in
    flight, then swaps the weights and opens the gate at the new version. So no play runs
    across a swap, and a play starts only at the version the server holds: one that asks for
    another (it was held through a push, or nothing was pushed yet) is refused, never sampled
    by one version's weights under another's label.
    """

    def __init__(self, drain_timeout_s: float | None = None) -> None:
        #: The version the served weights hold; None until the first push.
        self.version: int | None = None
        #: How long a push waits for the plays in flight (None: as long as they take).
        self.drain_timeout_s = drain_timeout_s
        self._changed = asyncio.Condition()
        self._live = 0
        self._pushing = False
        #: The version of a push whose swap failed (some servers may hold it, others not): no
        #: play starts until a push succeeds.
        self._failed: int | None = None

    @contextlib.asynccontextmanager
    async def play(self, version: int) -> AsyncIterator[None]:
        """Hold a play at ``version`` in flight (waiting out a push under way).

        Raises:
            ConfigurationError: the served weights are of another version.
        """
        if self._pushing:
            async with self._changed:
                await self._changed.wait_for(lambda: not self._pushing)
        # Checked and counted with no await in between: a push that begins later waits for it.
        if self._failed is not None:
            raise ConfigurationError(
                f"The weight push to version {self._failed} failed part way, so the served weights "
                "may be of neither version (one server reloaded, another not): no group is played "
                "on them until a push succeeds. The push's own error says which server failed.",
                version=version,
                failed_push=self._failed,
            )
        if self.version is not None and version != self.version:
            raise ConfigurationError(
                f"A play at policy version {version} on a served policy that holds version "
                f"{self.version}: a group is played at the version of the weights served when it "
                "starts (the caller reads it after push_weights returns).",
                version=version,
                served=self.version,
            )
        self._live += 1
        try:
            yield
        finally:
            self._live -= 1
            async with self._changed:
                self._changed.notify_all()

    @contextlib.asynccontextmanager
    async def push(self, version: int) -> AsyncIterator[None]:
        """Close the gate and wait for the plays in flight; the body swaps the weights to
        ``version``, and the gate opens at that version. If the body fails, the weights are of no
        known version: plays are refused until a later push succeeds."""
        async with self._changed:
            await self._changed.wait_for(lambda: not self._pushing)
            self._pushing = True
            try:
                await asyncio.wait_for(self._changed.wait_for(lambda: self._live == 0), self.drain_timeout_s)
            except TimeoutError:
                self._pushing = False  # the gate opens again at the old version; the run stops
                self._changed.notify_all()
                raise PushDrainTimeoutError(
                    f"A weight push to version {version} waited {self.drain_timeout_s:g} s for {self._live} "
                    "play(s) in flight on the served policy's old weights, and they did not end (a "
                    "rollout-service job stuck in 'running', or a policy or env server that stopped "
                    "answering). Look at the rollout service's jobs and the servers' logs; raise "
                    "rollout.push_drain_timeout_s if plays that long are expected.",
                    version=version,
                    in_flight=self._live,
                    timeout_s=self.drain_timeout_s,
                ) from None
        try:
            yield
        except BaseException:
            self._failed = version
            raise
        else:
            self.version, self._failed = version, None
        finally:
            self._pushing = False
            async with self._changed:
                self._changed.notify_all()


@dataclass
class ServedPolicy:
    """One served model: the backend its calls go to, and the sync that pushes weights into it.

    ``weight_sync`` (``envhub.train.weight_sync``, e.g. :class:`~envhub.train.weight_sync.DiskVllmSync`)
    has ``push(model, version)`` and ``aclose()``; None: the weights are never pushed (the ranks
    of a torchrun that do not push, tests).
    """

    backend: PolicyBackend
    weight_sync: Any | None = None


def build_env_pool(env_id: str, settings: RolloutSettings, *, token: str | None = None) -> EnvPool:
    """In-process envs, or the env servers of ``settings.env_urls`` (with bearer ``token``)."""
    if settings.env_urls:
        urls = expand_replicas(settings.env_urls) if settings.resolve_replicas else settings.env_urls
        return RemoteEnvPool(urls, env_id=env_id, token=token)
    import envhub

    return InProcessEnvPool(lambda **kw: envhub.make(env_id, **kw), env_id=env_id)


class EngineRollouts:
    """The rollout engine in this process.

    Args:
        envs: where the envs run.
        queue: where finished groups go.
        settings: the run's rollout settings.
        backend_factory: ``factory(model, version) -> PolicyBackend`` for in-process generation
            (a sampler over a copy of the trainer's weights); None with a served policy.
        agent_factories: role -> such a factory, for the roles with a model of their own
            (Dr. MAS; each over its model's tokenizer and device).
        served: the served policy's backend (OpenAI-compatible), when not in process; with
            ``served_agents``, the model of the roles left out (None when every role has its own).
        weight_sync: pushes weights into the served policy (``envhub.train.weight_sync``).
        served_agents: role -> its own served model (Dr. MAS: a model and a server per agent);
            a push syncs each role's weights into its server, under the one drain gate. Their
            backends and syncs are closed with this source.
        run_id: prefix of the group ids.
        sequence_builder: ``factory(uid, traj_id)`` of trajectory-mode builders (needed with
            ``settings.trajectory_mode``; :class:`~envhub.rollout.sequences.SequenceBuilder`).
    """

    def __init__(
        self,
        *,
        envs: EnvPool,
        queue: GroupQueue,
        settings: RolloutSettings,
        backend_factory: Any | None = None,
        served: PolicyBackend | None = None,
        weight_sync: Any | None = None,
        run_id: str = "run",
        sequence_builder: Callable[[str, str], SequenceBuilderLike] | None = None,
        agent_factories: Mapping[str, Any] | None = None,
        served_agents: Mapping[str, ServedPolicy] | None = None,
    ) -> None:
        in_process = backend_factory is not None or bool(agent_factories)
        if in_process and (served is not None or served_agents):
            raise ConfigurationError(
                "EngineRollouts samples in process (backend_factory, agent_factories) or from served "
                "policies (served, served_agents), not both."
            )
        if not in_process and served is None and not served_agents:
            raise ConfigurationError(
                "EngineRollouts needs a sampler: backend_factory or agent_factories (in process), or "
                "served or served_agents (OpenAI-compatible servers)."
            )
        self._agent_factories = dict(agent_factories or {})
        #: role -> the role's own served model (its backend and weight sync).
        self._served_agents = dict(served_agents or {})
        #: version -> role -> the sampler of the role's own model at that version.
        self._teams: dict[int, dict[str, PolicyBackend]] = {}
        self._builder = sequence_builder
        self.envs, self.queue, self.settings = envs, queue, settings
        self._factory = backend_factory
        self._served = served
        self._sync = weight_sync
        self._run_id = run_id
        self._backends: dict[int, PolicyBackend] = {}
        self._live: dict[int, int] = {}  # version -> groups in flight (in-process samplers)
        self._swap = _WeightSwap(settings.push_drain_timeout_s)  # the served policy's one set of weights
        #: One job per policy version (``<run_id>-v<version>``), known once its weights are pushed.
        self.jobs: dict[str, int] = {}

    @property
    def drains(self) -> bool:
        """A served policy: a push waits for the plays in flight (in process: one sampler per version)."""
        return self._served is not None or bool(self._served_agents)

    def job_id(self, version: int) -> str:
        """The job id of this source's groups sampled at ``version``."""
        return f"{self._run_id}-v{version}"

    async def settle(self) -> None:
        """Nothing to wait for: a version's job is listed when its weights are pushed."""

    async def play(
        self,
        tasks: Sequence[GroupTask],
        *,
        version: int,
        sampling: SamplingRequest,
        group_size: int | None = None,
        queue: GroupQueue | None = None,
    ) -> int:
        if self.drains:
            backend = self._served
            agents = {role: own.backend for role, own in self._served_agents.items()}
        else:
            backend, agents = self._backends.get(version), self._teams.get(version, {})
            if backend is None and not agents:
                raise ConfigurationError(f"No sampler holds policy version {version}; push_weights it first.")
        # The run's rollout section is the job; this call's sampling, group size and tasks over it.
        request = self.settings.job(
            sampling=sampling, group_size=group_size or self.settings.group_size, policy_version=version
        )
        held = self._swap.play(version) if self.drains else contextlib.nullcontext()
        async with held:
            self._live[version] = self._live.get(version, 0) + len(tasks)
            try:
                played = await play(
                    request,
                    queue or self.queue,
                    backend=backend,
                    agent_backends=agents or None,
                    envs=self.envs,
                    tasks=tasks,
                    job_id=self.job_id(version),
                    sequence_builder=self._builder,
                )
                report = played.report
            finally:
                self._live[version] -= len(tasks)
                await self._retire()
        return report.published

    async def _retire(self) -> None:
        """Drop in-process samplers of versions no group uses any more (all but the newest)."""
        versions = set(self._backends) | set(self._teams)
        if self.drains or not versions:
            return
        newest = max(versions)
        for version in [v for v in versions if v != newest and not self._live.get(v)]:
            backend = self._backends.pop(version, None)
            if backend is not None:
                await backend.aclose()
            for own in self._teams.pop(version, {}).values():
                await own.aclose()

    async def push_weights(
        self,
        model: Any | None,
        version: int,
        agents: Mapping[str, Any] | None = None,
        *,
        barrier: Callable[[], Awaitable[None]] | None = None,
    ) -> dict[str, float]:
        start = time.perf_counter()
        own = set(self._agent_factories) | set(self._served_agents)
        if set(agents or {}) != own:
            raise ConfigurationError(
                f"push_weights got models for {sorted(agents or {})}; this source samples "
                f"{sorted(own) or 'no role'} from their own models.",
                given=sorted(agents or {}),
                own=sorted(own),
            )
        self.jobs[self.job_id(version)] = version
        if self._factory is not None or self._agent_factories:
            # Each rank samples with its own copy: a group runs on the sampler of the version
            # it was admitted at, from start to end, and is labelled with that version.
            if barrier is not None:
                await barrier()
            if self._factory is not None and model is not None:
                self._backends[version] = self._factory(model, version)
            if agents:
                self._teams[version] = {
                    role: self._agent_factories[role](own, version) for role, own in agents.items()
                }
            await self._retire()
            if barrier is not None:
                await barrier()
            return {"time/sync_s": time.perf_counter() - start}
        # Served models: hold new groups and wait until none runs on the old weights, on any
        # rank, then swap them (rank 0 pushes; its weight syncs are the only ones), and start or
        # label groups with the new version only once every rank knows the push is done. A team
        # plays on every server at once, so one gate covers them all: no play starts until each
        # server holds the new weights.
        async with self._swap.push(version):
            if barrier is not None:
                await barrier()
            drained = time.perf_counter()
            report: Mapping[str, Any] = {}
            if self._served is not None and self._sync is not None and model is not None:
                report = await self._sync.push(model, version)
            roles: dict[str, Mapping[str, Any]] = {}
            for role, served in self._served_agents.items():
                if served.weight_sync is not None:
                    roles[role] = await served.weight_sync.push((agents or {})[role], version)
            if barrier is not None:
                await barrier()
            if self._served is not None:
                self._served.policy_version = version
            for served in self._served_agents.values():
                served.backend.policy_version = version
        timings = _sync_timings(start, drained, report)
        for role, own_report in roles.items():
            timings.update(
                {f"sync/{role}/{k}": float(v) for k, v in own_report.items() if isinstance(v, int | float)}
            )
        return timings

    async def aclose(self) -> None:
        for backend in self._backends.values():
            await backend.aclose()
        self._backends.clear()
        for team in self._teams.values():
            for own in team.values():
                await own.aclose()
        self._teams.clear()
        if self._served is not None:
            await self._served.aclose()
        for served in self._served_agents.values():
            await served.backend.aclose()
            if served.weight_sync is not None:
                await served.weight_sync.aclose()
        await self.envs.aclose()


class ServiceRollouts:
    """Jobs of a rollout service (``envhub serve-rollouts``), which publishes into Redis.

    Args:
        service_url: the rollout service's base URL.
        env_id: the env.
        settings: the run's rollout settings (``envs`` are the env servers the service plays on).
        policy: the served policy, whole, as the service reaches it (base URL, model name,
            tokenizer directory, concurrency cap, timeout, the key from ``ENVHUB_POLICY_API_KEY``;
            :meth:`~envhub.train.config.RolloutSettings.endpoint`).
        weight_sync: pushes weights into the served policy.
        service_token: the rollout service's bearer token (``ENVHUB_ROLLOUT_TOKEN``).
        stream: the Redis stream the jobs publish to (the trainer's ``rollout.queue_stream``).
        run: the trainer run's label, written on every entry; the trainer takes only these.
        env_token: the env servers' bearer token (``ENVHUB_ENV_TOKEN``), passed on to the jobs.
    """

    def __init__(
        self,
        *,
        service_url: str,
        env_id: str,
        settings: RolloutSettings,
        policy: PolicyEndpoint,
        weight_sync: Any | None = None,
        poll_s: float = 0.5,
        service_token: str | None = None,
        stream: str | None = None,
        run: str = "",
        env_token: str | None = None,
    ) -> None:
        from envhub.client import AsyncRolloutClient

        if not settings.env_urls:
            raise ConfigurationError(
                "A rollout service plays on env servers: set rollout.env_urls to their URLs."
            )
        self.service_url = service_url.rstrip("/")
        self.env_id, self.settings = env_id, settings
        self.policy = policy
        self._sync = weight_sync
        self._poll_s = poll_s
        self.stream, self.run = stream, run
        self._env_token = env_token
        self._client = AsyncRolloutClient(self.service_url, token=service_token, timeout_s=30.0)
        self.jobs: dict[str, int] = {}  # the jobs submitted, known once the service answers
        self._submitting = 0
        self._submitted = asyncio.Condition()
        self._swap = _WeightSwap(settings.push_drain_timeout_s)  # the jobs in flight on the served weights

    @property
    def drains(self) -> bool:
        """Always: a push waits for the service's jobs in flight."""
        return True

    async def play(
        self,
        tasks: Sequence[GroupTask],
        *,
        version: int,
        sampling: SamplingRequest,
        group_size: int | None = None,
        queue: GroupQueue | None = None,
    ) -> int:
        if queue is not None:
            raise ConfigurationError("A rollout service publishes to its own Redis stream only.")
        # The job is in flight from before its submission until the service says it ended: a
        # push waits for it, so none of its turns is sampled by the next version's weights.
        async with self._swap.play(version):
            created = await self._submit(tasks, version=version, sampling=sampling, group_size=group_size)
            final = await self._client.wait(created.job_id, poll_s=self._poll_s)
        if final.status != "done":
            raise EnvhubError(
                f"Rollout job {created.job_id} ended {final.status}: {final.error}",
                job_id=created.job_id,
                status=final.status,
            )
        return final.published

    async def _submit(
        self,
        tasks: Sequence[GroupTask],
        *,
        version: int,
        sampling: SamplingRequest,
        group_size: int | None,
    ) -> RolloutJobCreated:
        """Submit the job of ``tasks`` and list it in :attr:`jobs` (``settle`` waits for this)."""
        from envhub.core.errors import UnauthorizedError

        async with self._submitted:
            self._submitting += 1
        try:
            created = await self._client.submit(
                self.request(tasks, version=version, sampling=sampling, group_size=group_size)
            )
            self.jobs[created.job_id] = version
        except UnauthorizedError as exc:
            raise refused("rollout service", self.service_url, "ENVHUB_ROLLOUT_TOKEN") from exc
        finally:
            async with self._submitted:
                self._submitting -= 1
                self._submitted.notify_all()
        return created

    async def settle(self) -> None:
        """Wait for the submissions under way: a job's groups may come back before its id does."""
        async with self._submitted:
            await self._submitted.wait_for(lambda: self._submitting == 0)

    def request(
        self,
        tasks: Sequence[GroupTask],
        *,
        version: int,
        sampling: SamplingRequest,
        group_size: int | None = None,
    ) -> RolloutRequest:
        """The job the service plays for ``tasks``: on this run's stream, labelled with its run.

        The run's ``rollout:`` section is the job; the trainer adds what it owns: the tasks and
        their seed, the served policy (whole) at ``version``, this call's sampling and group
        size, the stream and run label, and the credentials.
        """
        return self.settings.job(
            env_id=self.env_id,
            task_ids=[t.task_id for t in tasks],
            count=None,
            group_size=group_size or self.settings.group_size,
            sampling=sampling,
            policy=self.policy,
            policy_version=version,
            seed=tasks[0].seed if tasks else 0,
            stream=self.stream,
            run=self.run,
            env_token=self._env_token,
        )

    async def push_weights(
        self,
        model: Any | None,
        version: int,
        agents: Mapping[str, Any] | None = None,
        *,
        barrier: Callable[[], Awaitable[None]] | None = None,
    ) -> dict[str, float]:
        if agents:
            raise ConfigurationError(
                "A rollout service samples one served model; a model per agent is not wired."
            )
        start = time.perf_counter()
        # Drain, not cancel and re-run: the service publishes a group only whole, so a cancelled
        # job would throw away the groups it had half played, and finishing them costs the push
        # no more than the longest job in flight (the update itself still overlapped them).
        async with self._swap.push(version):
            if barrier is not None:
                await barrier()
            drained = time.perf_counter()
            report = await self._sync.push(model, version) if self._sync is not None else {}
            if barrier is not None:
                await barrier()
        return _sync_timings(start, drained, report)

    async def aclose(self) -> None:
        await self._client.close()


def _sync_timings(start: float, drained: float, report: Mapping[str, Any]) -> dict[str, float]:
    """A push's metrics: its seconds, the part spent waiting for groups in flight, the sync's own."""
    timings = {"time/sync_s": time.perf_counter() - start, "time/sync_drain_s": drained - start}
    timings.update({f"sync/{k}": float(v) for k, v in dict(report).items() if isinstance(v, int | float)})
    return timings


def in_process_sampler_factory(
    tokenizer_dir: str, *, device: str, max_batch: int, adapter: str | None = None
) -> Any:
    """``factory(model, version)``: a TransformersBackend over a frozen copy of ``model``.

    ``adapter``: of a peft model with several adapters (one per agent), the one merged into the copy.
    """
    from envhub.policy.transformers_backend import TransformersBackend

    def make(model: Any, version: int) -> PolicyBackend:
        frozen = _plain_copy(model, adapter=adapter).eval()
        for p in frozen.parameters():
            p.requires_grad_(False)
        return TransformersBackend(
            frozen, tokenizer=tokenizer_dir, device=device, max_batch=max_batch, policy_version=version
        )

    return make


def _plain_copy(model: Any, *, adapter: str | None = None) -> Any:
    """A copy of the plain HF model under DDP / peft wrappers (peft adapters merged into it).

    One copy: a peft model is copied once and merged in place (not copied again after merging).
    ``adapter``: merge that adapter only (the model holds one per agent); None: the active one.
    """
    copied = copy.deepcopy(getattr(model, "module", model))
    if not hasattr(copied, "merge_and_unload"):
        return copied
    if adapter is None:
        return copied.merge_and_unload()
    copied.set_adapter(adapter)
    return copied.merge_and_unload(adapter_names=[adapter])


def new_run_id() -> str:
    return uuid.uuid4().hex[:8]


def run_label(run_dir: str | os.PathLike[str]) -> str:
    """A trainer run's queue label from its run directory: ``<dir name>-<hash of its path>``.

    Stable across restarts of the run (a resumed trainer takes back its unacked groups) and
    different for two runs in two directories, so two trainers never share a label by default.
    """
    path = Path(run_dir).resolve()
    name = re.sub(r"[^A-Za-z0-9_.-]", "-", path.name)[:64] or "run"
    return f"{name}-{hashlib.sha1(str(path).encode()).hexdigest()[:8]}"
