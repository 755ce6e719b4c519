"""The orchestra machinery: role calls inside one env step, and the rows they become.

The rollout engine plays a group one env step at a time: it builds each live member's prompt,
asks its backend for one completion per member, steps the envs with the projected actions and
records one Step per member. An orchestra slots in without the engine knowing:

* :class:`OrchestraBackend` is the engine's backend. For one engine call (one env step of the
  live members) it runs the orchestra, which calls its roles' own backends in turn (each role
  batched over the members that need it), and answers each member with the action its team
  chose. The calls themselves are kept, by member and env step.
* :class:`ExpandingWriter` and :class:`ExpandingJournal` stand between the engine and where its
  finished groups go: every one-per-env-step Step is replaced by the rows of that step's role
  calls (:meth:`OrchestraBackend.expand`), so the published group holds one Step per call.

A row per call carries ``agent_id`` (the role), ``env_step``, the role's prompt, response, token
ids and logprobs, the role's projected action and validity; the env step's reward, end flags and
env info sit on the step's last call (the search team's routed agent; the math team's last solver
or verifier call), so a trajectory's return is the team's reward, and every row's
``info["team_reward"]`` is that return.

A group in flight at a crash of the rollout service is played again whole: the role calls of
its unfinished steps live in this process only, so :class:`ExpandingJournal` records no steps.
"""

from __future__ import annotations

import asyncio
import time
from abc import ABC, abstractmethod
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Self

import numpy as np

from envhub.core.errors import ConfigurationError
from envhub.core.records import Group, Step
from envhub.core.wire import OrchestraSpec
from envhub.policy.base import Completion, PolicyBackend, Prompt, SamplingParams
from envhub.rollout.queue.base import GroupWriter

__all__ = [
    "CallRole",
    "ExpandingJournal",
    "ExpandingWriter",
    "Orchestra",
    "OrchestraBackend",
    "RoleCall",
    "Turn",
]


@dataclass(frozen=True)
class RoleCall:
    """One call of one role in one member's env step.

    Attributes:
        role: the role (the row's ``agent_id``).
        messages: the chat messages the role was sent.
        completion: what its policy answered.
        action: the role's projected output (a query or answer block, or the routing word).
        is_valid: whether the output followed the role's format.
        seconds: the wall time of the batched call it was part of.
    """

    role: str
    messages: list[dict[str, Any]]
    completion: Completion
    action: str
    is_valid: bool
    seconds: float


@dataclass
class Turn:
    """One member's env step while its team works on it.

    Attributes:
        prompt: the engine's prompt: the single-agent messages (task, history) and metadata
            (``observation``, ``info``, ``member``, ``member_index``, ``step_idx``).
        observations: the member's env observations so far, the current one last.
        last: whether this is the episode's last allowed env step.
        calls: the role calls made so far in this step.
        action: what goes to the env (the orchestra sets it; empty: an invalid step).
    """

    prompt: Prompt
    observations: list[str]
    last: bool
    calls: list[RoleCall] = field(default_factory=list)
    action: str = ""

    @property
    def env_step(self) -> int:
        return int(self.prompt.metadata["step_idx"])

    @property
    def env_prompt(self) -> str:
        """The single-agent prompt's text (its last message), which every role prompt embeds."""
        content = self.prompt.messages[-1].get("content", "") if self.prompt.messages else ""
        if not isinstance(content, str):
            raise ConfigurationError("An orchestra's role prompts are text; this prompt holds images.")
        return content


#: ``call(role, turns, text_of)``: ask ``role``'s policy once per turn (one batched request) with
#: the user message ``text_of(turn)``; each turn gets a :class:`RoleCall` appended.
CallRole = Callable[[str, Sequence[Turn], Callable[[Turn], str]], Awaitable[list[RoleCall]]]


class Orchestra(ABC):
    """What a multi-agent team does in one env step; subclasses define the roles and the routing.

    Attributes:
        name: the orchestra's name (``RolloutRequest.agents.orchestra``).
        roles: its roles, in the order they act.
    """

    name: str = ""
    roles: tuple[str, ...] = ()

    @classmethod
    def from_spec(cls, spec: OrchestraSpec) -> Self:
        """The orchestra a request's ``agents`` declares (its settings, e.g. ``max_rounds``)."""
        return cls()

    @abstractmethod
    def parse(self, role: str, text: str) -> tuple[str, bool]:
        """A role's output as ``(action, is_valid)``."""

    @abstractmethod
    async def step(self, turns: Sequence[Turn], call: CallRole) -> None:
        """Run the team on the live members' env step: make the calls, set each turn's action."""


def _call_sampling(sampling: SamplingParams, call: int) -> SamplingParams:
    """The sampling of the step's ``call``-th role call (0: the step's own, as given).

    Under a seed, each call of an env step draws from its own seed: the backends seed prompt
    ``i`` of a call from (the call's seed, ``i``), so calls sharing one seed would repeat each
    other's draws (a solver's retry that only adds the verifier's critique to its prompt would
    mostly write its first attempt again). The orchestra makes its calls in a fixed order, so
    the seeds are the same each time.
    """
    if sampling.seed is None or call == 0:
        return sampling
    entropy = [sampling.seed & 0xFFFF_FFFF_FFFF_FFFF, 0x0C411, call]
    return replace(sampling, seed=int(np.random.SeedSequence(entropy).generate_state(1)[0]))


class OrchestraBackend:
    """The engine's policy backend for a multi-agent job: the orchestra over its roles' backends.

    Args:
        orchestra: the team.
        backends: the policy of each role (one object may play several roles: a shared model).
        max_steps: the episode's env step limit (the orchestra's last step is known to it).
        owned: backends to close with this one (those built for the job, not the caller's).
    """

    accepts_images = False

    def __init__(
        self,
        orchestra: Orchestra,
        backends: Mapping[str, PolicyBackend],
        *,
        max_steps: int,
        owned: Sequence[PolicyBackend] = (),
    ) -> None:
        missing = [r for r in orchestra.roles if r not in backends]
        if missing:
            raise ConfigurationError(
                f"The {orchestra.name} orchestra has no policy for {missing}: give agents.policies for "
                "them or the request's policy (one model for every role).",
                roles=missing,
            )
        self.orchestra = orchestra
        self.backends = dict(backends)
        self.max_steps = max_steps
        self._owned = list(owned)
        self._calls: dict[tuple[str, int], list[RoleCall]] = {}
        self._observations: dict[str, list[str]] = {}

    @property
    def policy_version(self) -> int:
        """The oldest policy version among the roles' backends."""
        return min(b.policy_version for b in self.backends.values())

    @policy_version.setter
    def policy_version(self, version: int) -> None:
        for backend in set(self.backends.values()):
            backend.policy_version = version

    async def generate(self, prompts: Sequence[Prompt], sampling: SamplingParams) -> list[Completion]:
        """Play one env step of the given members; one completion (the team's action) each."""
        turns = [self._turn(p) for p in prompts]
        made = 0

        async def call(role: str, chosen: Sequence[Turn], text_of: Callable[[Turn], str]) -> list[RoleCall]:
            nonlocal made
            own = _call_sampling(sampling, made)
            made += 1
            return await self._call(role, chosen, text_of, own)

        await self.orchestra.step(turns, call)
        out = []
        for turn in turns:
            if not turn.calls:
                raise ConfigurationError(f"The {self.orchestra.name} orchestra made no call in a step.")
            self._calls[(str(turn.prompt.metadata["member"]), turn.env_step)] = turn.calls
            out.append(_team_completion(turn))
        return out

    def _turn(self, prompt: Prompt) -> Turn:
        meta = prompt.metadata
        if "member" not in meta or "step_idx" not in meta:
            raise ConfigurationError(
                "An orchestra backend plays the rollout engine's prompts (their metadata names the "
                "member and the step); it cannot answer other callers."
            )
        member, env_step = str(meta["member"]), int(meta["step_idx"])
        seen = self._observations.setdefault(member, [])
        del seen[env_step:]  # the observation of each earlier step, then this one
        seen.append(str(meta.get("observation", "")))
        return Turn(prompt=prompt, observations=list(seen), last=env_step + 1 >= self.max_steps)

    async def _call(
        self, role: str, turns: Sequence[Turn], text_of: Callable[[Turn], str], sampling: SamplingParams
    ) -> list[RoleCall]:
        if not turns:
            return []
        prompts = []
        for turn in turns:
            messages = [*turn.prompt.messages[:-1], {"role": "user", "content": text_of(turn)}]
            meta = turn.prompt.metadata
            prompts.append(
                Prompt(
                    messages=messages,
                    request_id=f"{meta['member']}:{turn.env_step}:{len(turn.calls)}:{role}",
                    metadata={
                        **meta,
                        "role": role,
                        "observations": list(turn.observations),
                        "team": [{"role": c.role, "text": c.completion.text} for c in turn.calls],
                    },
                )
            )
        started = time.perf_counter()
        completions = await self.backends[role].generate(prompts, sampling)
        seconds = time.perf_counter() - started
        if len(completions) != len(prompts):
            raise ConfigurationError(
                f"The policy of role {role!r} answered {len(completions)} of {len(prompts)} prompts."
            )
        calls = []
        for turn, prompt, completion in zip(turns, prompts, completions, strict=True):
            action, valid = self.orchestra.parse(role, completion.text)
            made = RoleCall(role, prompt.messages, completion, action, valid, seconds)
            turn.calls.append(made)
            calls.append(made)
        return calls

    def expand(self, group: Group) -> Group:
        """``group`` with each one-per-env-step Step replaced by the rows of that step's calls.

        Raises:
            ConfigurationError: a step whose calls this backend does not hold (not its group).
        """
        trajectories = []
        for traj in group.trajectories:
            rows: list[Step] = []
            for step in traj.steps:
                calls = self._calls.pop((traj.traj_id, step.step_idx), None)
                if calls is None:
                    raise ConfigurationError(
                        f"No role calls for step {step.step_idx} of {traj.traj_id}: the group was not "
                        "played by this orchestra backend."
                    )
                rows.extend(_rows(step, calls, first_row=len(rows)))
            team = float(sum(r.reward for r in rows))
            rows = [r.model_copy(update={"info": {**r.info, "team_reward": team}}) for r in rows]
            trajectories.append(traj.model_copy(update={"steps": rows}))
        # Forget the slot, with what attempts of it that were re-run left behind (member ids are
        # "<job>:<slot>:<attempt>:<member>", envhub.rollout.journal.group_uid).
        slot = group.uid.rsplit(":", 1)[0] + ":"
        for key in [k for k in self._calls if k[0].startswith(slot)]:
            del self._calls[key]
        for member in [m for m in self._observations if m.startswith(slot)]:
            del self._observations[member]
        return group.model_copy(update={"trajectories": trajectories})

    async def aclose(self) -> None:
        """Close the backends built for the job; forget the calls."""
        self._calls.clear()
        self._observations.clear()
        await asyncio.gather(*(b.aclose() for b in self._owned))


def _team_completion(turn: Turn) -> Completion:
    """What the engine records for the step: the team's action; the calls' tokens, for its counts."""
    calls = turn.calls
    prompt_ids = [t for c in calls for t in (c.completion.prompt_token_ids or ())]
    response_ids = [t for c in calls for t in (c.completion.token_ids or ())]
    return Completion(
        text=turn.action,
        prompt_token_ids=prompt_ids or None,
        token_ids=response_ids or None,
        logprobs=None,
        finish_reason=calls[-1].completion.finish_reason,
        policy_version=min(c.completion.policy_version for c in calls),
        token_exact=all(c.completion.token_exact for c in calls),
        latency_s=sum(c.completion.latency_s for c in calls),
    )


def _rows(step: Step, calls: Sequence[RoleCall], *, first_row: int) -> list[Step]:
    """The rows of one env step: one per call; the env's outcome on the last."""
    rows = []
    for j, call in enumerate(calls):
        last = j == len(calls) - 1
        c = call.completion
        timings = {"policy": call.seconds}
        if last and "env" in step.timings:
            timings["env"] = step.timings["env"]
        rows.append(
            Step(
                uid=step.uid,
                traj_id=step.traj_id,
                step_idx=first_row + j,
                agent_id=call.role,
                env_step=step.step_idx,
                anchor=step.anchor,
                observation=step.observation,
                prompt_messages=call.messages,
                prompt_token_ids=c.prompt_token_ids,
                response_text=c.text,
                response_token_ids=c.token_ids,
                response_logprobs=c.logprobs,
                action=call.action,
                is_action_valid=call.is_valid,
                reward=step.reward if last else 0.0,
                terminated=step.terminated if last else False,
                truncated=step.truncated if last else False,
                info=dict(step.info),
                policy_version=c.policy_version,
                finish_reason=c.finish_reason,
                token_exact=c.token_exact,
                timings=timings,
            )
        )
    return rows


class ExpandingWriter:
    """A :class:`~envhub.rollout.queue.base.GroupWriter` that publishes groups with one row per call."""

    def __init__(self, inner: GroupWriter, backend: OrchestraBackend) -> None:
        self.inner = inner
        self.backend = backend

    async def put(self, group: Group) -> None:
        await self.inner.put(self.backend.expand(group))

    async def aclose(self) -> None:
        await self.inner.aclose()


class ExpandingJournal:
    """The engine's journal for a multi-agent job: commits groups with one row per call.

    Steps are not journaled (a group in flight at a crash is played again whole: its calls are
    not in the journal); everything else goes to ``inner``.
    """

    def __init__(self, inner: Any, backend: OrchestraBackend) -> None:
        self.inner = inner
        self.backend = backend

    async def begin_group(
        self, job_id: str, slot: int, attempt: int, *, replica: int, members: list[dict[str, Any]]
    ) -> None:
        await self.inner.begin_group(job_id, slot, attempt, replica=replica, members=members)

    async def record_step(
        self, job_id: str, slot: int, attempt: int, member: int, entry: dict[str, Any]
    ) -> None:
        return None

    async def commit_group(self, job_id: str, slot: int, group: Group) -> None:
        await self.inner.commit_group(job_id, slot, self.backend.expand(group))

    async def abandon_group(self, job_id: str, slot: int, attempt: int) -> None:
        await self.inner.abandon_group(job_id, slot, attempt)
