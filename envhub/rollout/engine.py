"""The group rollout engine: GRPO-style groups played by a policy backend, each on its own.

One asyncio task per group, at most ``max_concurrent_groups`` at once. A group lives on one env
replica (the least loaded when it opens) and loops::

    prompts of the live members  ->  ONE backend.generate call
    text -> actions (projection) ->  ONE batch step of the live members
    -> a Step row per member (prompt, response ids/logprobs, anchor, reward, validity, timings)

until every member is done or ``max_steps``. Groups never wait for each other: a slow LLM call
or env step holds back only its own group (verl-agent's loop steps the whole batch in lockstep;
``bench/rollout.py`` measures the difference). A finished group is published whole to the
:class:`~envhub.rollout.queue.base.GroupWriter` (through the journal when there is one, which
publishes and marks it done atomically); a failed one is re-run whole or dropped whole
(:mod:`envhub.rollout.failures`), never published half.

Group ids are deterministic: ``uid = "<job>-<slot>-<attempt>"`` and ``traj_id = "<uid>-<member>"``,
so a re-run or a resumed job never mints a group the consumer cannot de-duplicate.
"""

from __future__ import annotations

import asyncio
import contextlib
import io
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Protocol

import numpy as np
import PIL.Image

from envhub.agent import parse_compression
from envhub.core.errors import ConfigurationError
from envhub.core.records import Group, Step, TokenSequence, Trajectory
from envhub.core.wire import HistoryFrame, RolloutRequest, SamplingRequest
from envhub.policy.base import Completion, PolicyBackend, Prompt, SamplingParams
from envhub.render import TileStore
from envhub.rollout.context import AgentContext, PromptView, ServerImage, resolve_context
from envhub.rollout.envpool import EnvPool, OpenGroup, StepItem, StepOutcome
from envhub.rollout.episode import json_safe_info
from envhub.rollout.failures import DeadlineExceeded, Failure, classify
from envhub.rollout.journal import ResumePoint, group_uid
from envhub.rollout.metrics import RolloutMetrics
from envhub.rollout.queue.base import GroupWriter

__all__ = [
    "EngineEvent",
    "GroupTask",
    "JobAborted",
    "JournalLike",
    "ResumePoint",
    "RolloutEngine",
    "RolloutReport",
    "SequenceBuilderLike",
    "group_uid",
    "sampling_params",
]


#: Failures that would fail every group of the job alike: they stop the job instead.
_JOB_WIDE = frozenset({"policy_unavailable", "policy_error", "configuration", "unknown_task"})


def sampling_params(sampling: SamplingRequest) -> SamplingParams:
    """The policy backend's form of a request's sampling (the one place the two meet)."""
    return SamplingParams(**{**sampling.model_dump(), "stop": tuple(sampling.stop)})


#: Step seeds are drawn from unsigned 64-bit words.
_U64 = 0xFFFF_FFFF_FFFF_FFFF


@dataclass(frozen=True)
class GroupTask:
    """One group to play: its slot in the job, the task, the reset seed."""

    slot: int
    task_id: str | None
    seed: int


@dataclass(frozen=True)
class EngineEvent:
    """Something that happened, for progress displays and tests.

    ``kind``: ``group_started``, ``step``, ``group_published``, ``group_retry``, ``group_dropped``,
    ``group_resumed``.
    """

    kind: str
    slot: int
    attempt: int
    time: float
    step_idx: int | None = None
    cause: str | None = None
    message: str | None = None
    replica: int | None = None


@dataclass
class RolloutReport:
    """What a run did (also the live progress of a running job)."""

    total: int = 0
    published: int = 0
    dropped: int = 0
    retried: int = 0
    steps: int = 0
    tokens: int = 0
    steps_redone: int = 0
    steps_resumed: int = 0
    drops_by_cause: dict[str, int] = field(default_factory=dict)
    retries_by_cause: dict[str, int] = field(default_factory=dict)
    started_at: float = field(default_factory=time.time)
    finished_at: float | None = None
    error: Failure | None = None

    @property
    def elapsed_s(self) -> float:
        return (self.finished_at or time.time()) - self.started_at


class JobAborted(Exception):
    """A failure that no re-run can fix stopped the whole job (e.g. the policy endpoint is down)."""

    def __init__(self, failure: Failure) -> None:
        super().__init__(failure.message)
        self.failure = failure


class SequenceBuilderLike(Protocol):
    """The trajectory-mode builder the engine feeds (:class:`envhub.rollout.sequences.SequenceBuilder`)."""

    def prompt(self, messages: Sequence[Mapping[str, Any]], step_idx: int) -> list[int]: ...

    def add_response(self, completion: Completion) -> None: ...

    def finish(self, reward: float = 0.0) -> list[TokenSequence]: ...

    @property
    def splits(self) -> int: ...


class JournalLike(Protocol):
    """What the engine asks of a journal (the queue package's :class:`Journal` implements it)."""

    async def begin_group(
        self, job_id: str, slot: int, attempt: int, *, replica: int, members: list[dict[str, Any]]
    ) -> None: ...

    async def record_step(
        self, job_id: str, slot: int, attempt: int, member: int, entry: dict[str, Any]
    ) -> None: ...

    async def commit_group(self, job_id: str, slot: int, group: Group) -> None: ...

    async def abandon_group(self, job_id: str, slot: int, attempt: int) -> None: ...


@dataclass
class _Member:
    index: int
    session_id: str
    ctx: AgentContext
    traj: Trajectory
    observation: str
    info: dict[str, Any]
    done: bool = False
    builder: SequenceBuilderLike | None = None
    # Trajectory mode: the whole conversation so far (first prompt, then response/observation turns).
    conversation: list[dict[str, Any]] = field(default_factory=list)


def _strip_images(messages: list[dict[str, Any]], ref: str | None) -> list[dict[str, Any]]:
    """Messages without inline image bytes (the image is referenced by its hash instead)."""
    out = []
    for message in messages:
        content = message.get("content")
        if isinstance(content, list):
            parts = [
                {"type": "image_ref", "ref": ref} if part.get("type") == "image_url" else part
                for part in content
            ]
            message = {**message, "content": parts}
        out.append(message)
    return out


class RolloutEngine:
    """Plays groups on an :class:`EnvPool` with a :class:`PolicyBackend`.

    Args:
        envs: where the envs run (replicas of a server, or in-process).
        backend: the policy.
        config: the job: how to play (group size, sampling, context, limits, failure rule, split,
            env arguments, seed); its envs, tasks and policy are the caller's business
            (:func:`envhub.rollout.driver.play` reads them).
        queue: where finished groups go (ignored when ``journal`` is given: the journal publishes).
        journal: records each finished step and commits finished groups (resume after a crash).
        metrics: shared metrics (a private set when None).
        job_id: prefix of the group ids.
        on_event: called with every :class:`EngineEvent` (progress bars, tests).
        sequence_builder: ``factory(uid, traj_id)`` of trajectory-mode builders.
        tile_store: the AgentOCR tile store shared by all members.
    """

    def __init__(
        self,
        *,
        envs: EnvPool,
        backend: PolicyBackend,
        config: RolloutRequest,
        queue: GroupWriter | None = None,
        journal: JournalLike | None = None,
        metrics: RolloutMetrics | None = None,
        job_id: str = "job",
        on_event: Callable[[EngineEvent], None] | None = None,
        sequence_builder: Callable[[str, str], SequenceBuilderLike] | None = None,
        tile_store: TileStore | None = None,
    ) -> None:
        if queue is None and journal is None:
            raise ConfigurationError(
                "RolloutEngine needs a queue (or a journal) to publish finished groups to."
            )
        if config.trajectory_mode and sequence_builder is None:
            raise ConfigurationError("trajectory_mode needs a sequence_builder (envhub.rollout.sequences).")
        self.envs = envs
        self.backend = backend
        self.config = config
        self._sampling = sampling_params(config.sampling)
        self.queue = queue
        self.journal = journal
        self.metrics = metrics or RolloutMetrics()
        self.job_id = job_id
        self.report = RolloutReport()
        self._on_event = on_event
        self._builder = sequence_builder
        self._context = resolve_context(config.context, envs.env_id)
        self._history = self._context.history_options(config.context)
        client_render = config.context.agentocr and self._history is None
        self._store = tile_store or (TileStore() if client_render else None)

    # -- public -------------------------------------------------------------------------------

    async def resolve_tasks(
        self, *, task_ids: Sequence[str] | None = None, count: int | None = None
    ) -> list[GroupTask]:
        """The job's groups: the explicit ``task_ids``, else the first ``count`` of the split.

        Raises:
            ConfigurationError: neither given, or the split has no tasks.
        """
        if task_ids is None:
            if count is None:
                raise ConfigurationError("Give task_ids or count (the first count tasks of the split).")
            task_ids = await self.envs.task_ids(self.config.split, count, self.config.env_kwargs)
            if not task_ids:
                raise ConfigurationError(
                    f"Split {self.config.split!r} has no tasks.", split=self.config.split
                )
        return [GroupTask(slot, task, self.config.seed + slot) for slot, task in enumerate(task_ids)]

    async def run(self, tasks: Sequence[GroupTask], *, resume: Sequence[ResumePoint] = ()) -> RolloutReport:
        """Play every group of ``tasks`` (resuming the given in-flight ones first) and publish them.

        Returns:
            The report (also kept as :attr:`report`).

        Raises:
            JobAborted: a terminal failure that affects every group (policy or configuration);
                groups already published stay published, unfinished ones were not published.
        """
        self.report.total += len(tasks)
        limit = asyncio.Semaphore(self.config.max_concurrent_groups)
        resumed = {r.slot: r for r in resume}

        async def one(task: GroupTask) -> None:
            async with limit:
                await self._play_slot(task, resumed.get(task.slot))

        try:
            async with asyncio.TaskGroup() as tg:
                for task in tasks:
                    tg.create_task(one(task))
        except BaseExceptionGroup as group:
            # One group's job-wide failure (or a queue/journal error) ends the run; raise it
            # plainly, not wrapped, so callers see the typed error.
            self.report.finished_at = time.time()
            errors = list(group.exceptions)
            raise next((e for e in errors if isinstance(e, JobAborted)), errors[0]) from None
        self.report.finished_at = time.time()
        return self.report

    # -- one slot: attempts -------------------------------------------------------------------

    def _emit(self, kind: str, slot: int, attempt: int, **fields: Any) -> None:
        if self._on_event is not None:
            self._on_event(EngineEvent(kind, slot, attempt, time.monotonic(), **fields))

    async def _play_slot(self, task: GroupTask, resume: ResumePoint | None) -> None:
        attempt = resume.attempt if resume is not None else 0
        while True:
            try:
                group = await self._attempt(task, attempt, resume)
            except Exception as exc:  # classified below; a cancellation is not caught here
                resume = None
                failure = classify(exc)
                if self.journal is not None:
                    await self.journal.abandon_group(self.job_id, task.slot, attempt)
                if (
                    failure.retryable
                    and self.config.on_failure == "retry"
                    and attempt + 1 < self.config.max_attempts
                ):
                    self.metrics.retries.labels(failure.cause).inc()
                    self.report.retried += 1
                    self.report.retries_by_cause[failure.cause] = (
                        self.report.retries_by_cause.get(failure.cause, 0) + 1
                    )
                    self._emit(
                        "group_retry", task.slot, attempt, cause=failure.cause, message=failure.message
                    )
                    attempt += 1
                    continue
                self._drop(task, attempt, failure)
                if failure.cause in _JOB_WIDE:
                    raise JobAborted(failure) from exc
                return
            await self._publish(task, group)
            return

    def _drop(self, task: GroupTask, attempt: int, failure: Failure) -> None:
        self.metrics.drops.labels(failure.cause).inc()
        self.metrics.groups.labels("dropped").inc()
        self.report.dropped += 1
        self.report.drops_by_cause[failure.cause] = self.report.drops_by_cause.get(failure.cause, 0) + 1
        if self.report.error is None:
            self.report.error = failure
        self._emit("group_dropped", task.slot, attempt, cause=failure.cause, message=failure.message)

    async def _publish(self, task: GroupTask, group: Group) -> None:
        started = time.perf_counter()
        if self.journal is not None:
            await self.journal.commit_group(self.job_id, task.slot, group)
        else:
            assert self.queue is not None  # checked in __init__
            await self.queue.put(group)
        self.metrics.queue_lag.observe(time.perf_counter() - started)
        self.metrics.groups.labels("published").inc()
        self.report.published += 1
        self._emit("group_published", task.slot, group.attempt)

    # -- one attempt ----------------------------------------------------------------------------

    async def _attempt(self, task: GroupTask, attempt: int, resume: ResumePoint | None) -> Group:
        timeout = self.config.episode_timeout_s
        try:
            async with asyncio.timeout(timeout):
                return await self._episode(task, attempt, resume)
        except TimeoutError as exc:
            if timeout is None or isinstance(exc.__cause__, DeadlineExceeded):
                raise
            raise DeadlineExceeded("episode", timeout) from exc

    async def _open(
        self, task: GroupTask, attempt: int, uid: str, resume: ResumePoint | None
    ) -> tuple[OpenGroup, list[_Member], int]:
        """Open the group's sessions (or re-attach the journaled ones); returns the next step index."""
        if resume is not None:
            attached = await self._reattach(task, uid, resume)
            if attached is not None:
                return attached
            redone = sum(len(e) for e in resume.entries)
            self.metrics.steps_redone.inc(redone)
            self.report.steps_redone += redone
            if self.journal is not None:
                await self.journal.abandon_group(self.job_id, task.slot, resume.attempt)
        group = await self.envs.open_group(
            group_size=self.config.group_size,
            task_id=task.task_id,
            seed=task.seed,
            split=self.config.split,
            env_kwargs=self.config.env_kwargs,
            history=self._history,
        )
        members = [
            self._member(uid, i, m.session_id, m.observation, m.info) for i, m in enumerate(group.members)
        ]
        await self._first_pages(group, members)
        if self.journal is not None:
            await self.journal.begin_group(
                self.job_id,
                task.slot,
                attempt,
                replica=group.replica,
                members=[
                    {"session_id": m.session_id, "observation": m.observation, "info": m.info}
                    for m in group.members
                ],
            )
        return group, members, 0

    def _member(
        self, uid: str, index: int, session_id: str, observation: str, info: dict[str, Any]
    ) -> _Member:
        traj_id = f"{uid}:{index}"
        task_id = str(info.get("task_id", ""))
        builder = self._builder(uid, traj_id) if self._builder is not None else None
        return _Member(
            index=index,
            session_id=session_id,
            ctx=AgentContext(self.config.context, self._context, self._store),
            traj=Trajectory(uid=uid, traj_id=traj_id, env_id=self.envs.env_id, task_id=task_id),
            observation=observation,
            info=info,
            builder=builder,
        )

    async def _reattach(
        self, task: GroupTask, uid: str, resume: ResumePoint
    ) -> tuple[OpenGroup, list[_Member], int] | None:
        """Continue a journaled group on its sessions when every one still stands where it was."""
        from envhub.rollout.envpool import MemberStart

        if self._builder is not None:
            return None  # a trajectory-mode token sequence cannot be rebuilt from step rows: re-run

        counts = await asyncio.gather(
            *(self.envs.step_count(resume.replica, m["session_id"]) for m in resume.members)
        )
        if any(c is None or c != len(e) for c, e in zip(counts, resume.entries, strict=True)):
            return None
        members = []
        for i, start in enumerate(resume.members):
            member = self._member(uid, i, start["session_id"], start["observation"], start["info"])
            for entry in resume.entries[i]:
                step = Step.model_validate(entry["step"])
                member.traj.steps.append(step)
                member.ctx.record(
                    step.observation, member.ctx.project(step.response_text), entry["observation"]
                )
                member.observation, member.info = entry["observation"], entry["info"]
                member.done = step.terminated or step.truncated
            members.append(member)
        group = OpenGroup(resume.replica, tuple(MemberStart(m["session_id"], "", {}) for m in resume.members))
        await self.envs.adopt(resume.replica, group.session_ids)
        await self._first_pages(group, members)  # the sessions' latest images, kept by the server
        kept = sum(len(e) for e in resume.entries)
        self.metrics.steps_resumed.inc(kept)
        self.report.steps_resumed += kept
        self._emit("group_resumed", task.slot, resume.attempt)
        return group, members, max((len(e) for e in resume.entries), default=0)

    async def _first_pages(self, group: OpenGroup, members: list[_Member]) -> None:
        """Rendering on the server: each member's current image (the blank page of a new episode).

        A session's image arrives with every step response; before the first step there is none
        in any response, so it is fetched once (``GET /v1/sessions/{id}/history.png``).
        """
        if self._history is None:
            return
        pngs = await asyncio.gather(*(self.envs.history_png(group.replica, m.session_id) for m in members))
        for m, png in zip(members, pngs, strict=True):
            m.ctx.server_image = _server_image(png, None)

    async def _episode(self, task: GroupTask, attempt: int, resume: ResumePoint | None) -> Group:
        uid = group_uid(self.job_id, task.slot, attempt)
        group, members, start = await self._open(task, attempt, uid, resume)
        self.metrics.live_groups.inc()
        self._emit("group_started", task.slot, attempt, replica=group.replica)
        try:
            for step_idx in range(start, self.config.max_steps):
                live = [m for m in members if not m.done]
                if not live:
                    break
                await self._step(task, attempt, group, live, step_idx)
            for m in members:
                if not m.done and m.traj.steps:
                    # Our step limit ended the episode: mark it the way a TimeLimit would.
                    m.traj.steps[-1] = m.traj.steps[-1].model_copy(update={"truncated": True})
        finally:
            self.metrics.live_groups.dec()
            for m in members:
                m.ctx.close()
            with contextlib.suppress(Exception):
                await self.envs.close_group(group)
        return self._group(task, uid, attempt, members)

    def _group(self, task: GroupTask, uid: str, attempt: int, members: list[_Member]) -> Group:
        versions = [s.policy_version for m in members for s in m.traj.steps if s.policy_version is not None]
        for m in members:
            last = m.traj.steps[-1].info if m.traj.steps else m.info
            m.traj.won = bool(last.get("won", False))
            m.traj.task_score = float(last.get("task_score", 0.0) or 0.0)
            if m.traj.steps:
                # The state the episode ended in (m.info is the last step's info, also after a
                # resume): GraphGPO's graph leads a failed episode's last step there, as the
                # authors' rollout does with each step's next observation.
                m.traj.final_anchor = str(m.info.get("anchor", ""))
            if m.builder is not None:
                m.traj.sequences = m.builder.finish(m.traj.episode_return)
                self.metrics.retokenization_splits.inc(m.builder.splits)
        task_id = task.task_id if task.task_id is not None else members[0].traj.task_id
        return Group(
            uid=uid,
            env_id=self.envs.env_id,
            task_id=str(task_id),
            trajectories=[m.traj for m in members],
            policy_version=min(versions) if versions else None,
            job_id=self.job_id,
            attempt=attempt,
        )

    def _step_sampling(self, task: GroupTask, step_idx: int) -> SamplingParams:
        """The sampling of one group step (its own seed under ``seed_each_step``)."""
        sampling = self._sampling
        if not self.config.seed_each_step or sampling.seed is None:
            return sampling
        entropy = [sampling.seed & _U64, task.seed & _U64, step_idx]
        seed = int(np.random.SeedSequence(entropy).generate_state(1)[0])
        return replace(sampling, seed=seed)

    async def _step(
        self, task: GroupTask, attempt: int, group: OpenGroup, live: list[_Member], step_idx: int
    ) -> None:
        """One step of a group: one generate call, one batch step, one Step row per live member."""
        deadline = self.config.step_timeout_s
        try:
            async with asyncio.timeout(deadline):
                views = [m.ctx.prompt(m.observation, m.info) for m in live]
                prompts = [
                    Prompt(
                        messages=v.messages if m.builder is None else list(m.conversation),
                        token_ids=None if m.builder is None else self._turn(m, v, step_idx),
                        request_id=f"{m.traj.traj_id}:{step_idx}",
                        metadata={
                            "observation": m.observation,
                            "info": m.info,
                            "member": m.traj.traj_id,
                            "member_index": m.index,
                            "step_idx": step_idx,
                        },
                    )
                    for m, v in zip(live, views, strict=True)
                ]
                t0 = time.perf_counter()
                completions = await self.backend.generate(prompts, self._step_sampling(task, step_idx))
                t1 = time.perf_counter()
                projections = [m.ctx.project(c.text) for m, c in zip(live, completions, strict=True)]
                items = [
                    StepItem(
                        m.session_id, self._wire_action(p.action, c.text), f"{m.traj.traj_id}:{step_idx}"
                    )
                    for m, p, c in zip(live, projections, completions, strict=True)
                ]
                outcomes = await self.envs.step(group, items)
                t2 = time.perf_counter()
        except TimeoutError as exc:
            if deadline is None:
                raise
            raise DeadlineExceeded("step", deadline) from exc
        if len(completions) != len(live):
            raise ConfigurationError(
                f"The policy backend answered {len(completions)} of {len(live)} prompts."
            )
        for outcome in outcomes:
            if outcome.error is not None:
                raise outcome.error
        policy_s, env_s = t1 - t0, t2 - t1
        self.metrics.policy_latency.observe(policy_s)
        self.metrics.env_latency.observe(env_s)
        for m, view, completion, projection, outcome in zip(
            live, views, completions, projections, outcomes, strict=True
        ):
            self._record(task, attempt, m, step_idx, view, completion, projection, outcome, policy_s, env_s)
        if self.journal is not None:
            # Each entry holds the step and what it led to: enough to rebuild the member's
            # memory and continue from its session after a restart.
            journal = self.journal
            await asyncio.gather(
                *(
                    journal.record_step(
                        self.job_id,
                        task.slot,
                        attempt,
                        m.index,
                        {
                            "step": m.traj.steps[-1].model_dump(mode="json"),
                            "observation": m.observation,
                            "info": m.info,
                        },
                    )
                    for m in live
                )
            )
        self._emit("step", task.slot, attempt, step_idx=step_idx)

    def _wire_action(self, action: str, text: str) -> str:
        """The action sent to the env server.

        Rendering on the server with self-compression, the server reads the factor from a
        ``<compression>`` tag in the action and strips it before the env plays it; the engine
        re-attaches a tag that parses to the same factor and validity as the model's text (two
        tags when the model's use was invalid), so the env sees ``action`` either way.
        """
        if self._history is None or not self._history.compression:
            return action
        tag = parse_compression(text)
        block = f"<compression>{tag.factor!r}</compression>"
        return action + (block if tag.is_valid else block * 2)

    @staticmethod
    def _turn(m: _Member, view: PromptView, step_idx: int) -> list[int]:
        """Trajectory mode: extend the member's conversation by this turn; the ids to sample from.

        The first turn is the context's prompt; every later one the env's observation as a user
        message after the sampled response (Search-R1 / SkyRL multi-turn). The builder checks
        that the re-rendered conversation extends the tokens so far, and splits where it does not.
        """
        assert m.builder is not None  # only called in trajectory mode
        if not m.conversation:
            m.conversation = list(view.messages)
        else:
            m.conversation.append({"role": "user", "content": m.observation})
        return m.builder.prompt(m.conversation, step_idx)

    def _record(
        self,
        task: GroupTask,
        attempt: int,
        m: _Member,
        step_idx: int,
        view: PromptView,
        completion: Completion,
        projection: Any,
        outcome: StepOutcome,
        policy_s: float,
        env_s: float,
    ) -> None:
        info = outcome.info or {}
        timings = {"policy": policy_s, "env": env_s}
        if view.render_s:
            timings["render"] = view.render_s
        step = Step(
            uid=m.traj.uid,
            traj_id=m.traj.traj_id,
            step_idx=step_idx,
            anchor=str(m.info.get("anchor", "")),
            observation=m.observation,
            # Trajectory mode sends the whole conversation; its row keeps only this turn's message.
            prompt_messages=_strip_images(
                view.messages if m.builder is None else m.conversation[-1:], view.image_ref
            ),
            prompt_token_ids=completion.prompt_token_ids,
            response_text=completion.text,
            response_token_ids=completion.token_ids,
            response_logprobs=completion.logprobs,
            action=projection.action,
            is_action_valid=projection.is_valid,
            reward=outcome.reward,
            terminated=outcome.terminated,
            truncated=outcome.truncated,
            info=json_safe_info(info),
            history_image=view.image_png,
            policy_version=completion.policy_version,
            finish_reason=completion.finish_reason,
            token_exact=completion.token_exact,
            timings=timings,
            history_image_ref=view.image_ref,
            vision_tokens=view.vision_tokens,
            text_tokens=view.text_tokens,
        )
        m.traj.steps.append(step)
        m.ctx.record(m.observation, projection, outcome.observation)
        if outcome.history_png is not None:
            m.ctx.server_image = _server_image(outcome.history_png, outcome.history)
        if m.builder is not None:
            m.builder.add_response(completion)
            m.conversation.append({"role": "assistant", "content": completion.text})
        m.observation, m.info = outcome.observation, info
        m.done = outcome.terminated or outcome.truncated
        self.metrics.steps.inc()
        self.report.steps += 1
        tokens = len(completion.prompt_token_ids or ()) + len(completion.token_ids or ())
        if tokens:
            self.metrics.tokens.labels("prompt").inc(len(completion.prompt_token_ids or ()))
            self.metrics.tokens.labels("response").inc(len(completion.token_ids or ()))
            self.report.tokens += tokens


def _server_image(png: bytes, frame: HistoryFrame | None) -> ServerImage:
    """A PNG from the env server with its size (read from the header) and text-token count."""
    with PIL.Image.open(io.BytesIO(png)) as image:
        width, height = image.size
    return ServerImage(png, width, height, None if frame is None else frame.text_tokens)
