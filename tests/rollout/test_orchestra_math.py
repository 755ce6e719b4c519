"""Multi-agent episodes (Dr. MAS): the math orchestra on a real Math env, in this process.

The roles are scripted (``envhub.envs.math.policy:team_*``): in a group of four, members 0 and
2 solve at once and are approved, member 1's first attempt is off by one, rejected, then right,
and member 3's wrong attempt is approved by a hasty verifier. So a group holds winning and
losing members with different numbers of calls.
"""

from __future__ import annotations

import asyncio
from collections import Counter
from typing import Any

import numpy as np
import pytest
from pydantic import ValidationError

from envhub.algos import compute_advantages
from envhub.algos.gigpo import step_groups
from envhub.algos.layout import BatchLayout
from envhub.core.errors import ConfigurationError
from envhub.core.records import Group, StepBatch
from envhub.core.wire import MATH_MAX_ROUNDS, RolloutRequest
from envhub.envs.math.policy import solve
from envhub.policy.base import Prompt
from envhub.policy.sampling import prompt_seed
from envhub.policy.scripted import ScriptedBackend
from envhub.rollout.driver import play
from envhub.rollout.journal import EngineJournal, MemoryJournal
from envhub.rollout.orchestra.math import MathOrchestra
from tests.rollout.conftest import CollectingQueue

TEAM = "scripted:envhub.envs.math.policy:"
PER_AGENT = {"solver": TEAM + "team_solver", "verifier": TEAM + "team_verifier"}


def request(**fields: Any) -> RolloutRequest:
    body: dict[str, Any] = {
        "env_id": "envhub/Math-v0",
        "count": 3,
        "group_size": 4,
        "max_steps": 1,
        "agents": {"orchestra": "math", "max_rounds": 2, "policies": PER_AGENT},
    }
    return RolloutRequest.model_validate({**body, **fields})


def groups_of(req: RolloutRequest, **kwargs: Any) -> list[Group]:
    return asyncio.run(play(req, job_id="drmas-math", **kwargs)).groups


def _roles(group: Group) -> list[list[str]]:
    return [[s.agent_id or "" for s in t.steps] for t in group.trajectories]


@pytest.fixture(scope="module")
def per_agent_groups() -> list[Group]:
    return groups_of(request())


def test_each_role_call_is_a_row_and_the_verifier_decides_the_rounds(per_agent_groups: list[Group]) -> None:
    for group in per_agent_groups:
        trajectories = sorted(group.trajectories, key=lambda t: t.traj_id)
        assert [[s.agent_id for s in t.steps] for t in trajectories] == [
            ["solver", "verifier"],  # right, approved
            ["solver", "verifier", "solver"],  # off by one, rejected; the last round is not reviewed
            ["solver", "verifier"],
            ["solver", "verifier"],  # off by one, approved by the hasty verifier
        ]
        for traj in trajectories:
            steps = traj.steps
            assert [s.step_idx for s in steps] == list(range(len(steps)))
            assert all(s.env_step == 0 and s.is_action_valid for s in steps)
            verdicts = [s.action for s in steps if s.agent_id == "verifier"]
            assert verdicts == (["reject"] if len(steps) == 3 else ["approve"])
            for s in steps:
                assert s.prompt_messages and f"# Your role: {s.agent_id}" in s.prompt_messages[-1]["content"]
                if s.agent_id == "solver":
                    assert s.action.startswith("\\boxed{")
            assert steps[-1].terminated
        # The critique reaches the solver's second attempt.
        retry = (trajectories[1].steps[2].prompt_messages or [{}])[-1]["content"]
        assert "<verify>reject</verify>" in retry and "attempt 2 of 2" in retry


def test_the_env_scores_the_last_attempt_and_the_team_reward_is_on_every_row(
    per_agent_groups: list[Group],
) -> None:
    rewards = []
    for group in per_agent_groups:
        for traj in group.trajectories:
            team = float(traj.won)
            assert traj.episode_return == team
            assert all(s.info["team_reward"] == team for s in traj.steps)
            assert [s.reward for s in traj.steps] == [0.0] * (len(traj.steps) - 1) + [team]
            # The env scored the solver's last attempt (approved or not).
            last_attempt = [s.action for s in traj.steps if s.agent_id == "solver"][-1]
            right = f"\\boxed{{{solve(traj.steps[0].observation)}}}"
            assert traj.won == (last_attempt == right)
            rewards.append(team)
        assert [t.won for t in sorted(group.trajectories, key=lambda t: t.traj_id)] == [
            True,
            True,
            True,
            False,
        ]
    assert np.mean(rewards) == 0.75


def test_grouping_by_agent_gives_the_task_and_agent_groups(per_agent_groups: list[Group]) -> None:
    batch = StepBatch.from_groups(per_agent_groups)
    assert batch.agent_id is not None and batch.env_step is not None
    pairs = list(zip(batch.uid.tolist(), batch.agent_id.tolist(), strict=True))
    layout = BatchLayout.from_batch(batch, group_by_agent=True)
    assert layout.n_groups == len(set(pairs)) == 2 * len(per_agent_groups)

    # Agent-wise GRPO by hand: every call a sample of its (task, agent) group, unbiased std.
    penalty = 0.1
    team = np.array(
        [s.info["team_reward"] for g in per_agent_groups for t in g.trajectories for s in t.steps]
    )
    score = team - penalty * ~batch.is_action_valid
    expected = np.empty(len(batch))
    for pair in set(pairs):
        rows = [i for i, p in enumerate(pairs) if p == pair]
        x = score[rows]
        mean, std = (x.mean(), x.std(ddof=1)) if len(rows) > 1 else (0.0, 1.0)
        expected[rows] = (x - mean) / (std + 1e-6)
    got = compute_advantages(batch, "grpo", group_by_agent=True, invalid_penalty=penalty)
    np.testing.assert_allclose(got, expected, rtol=1e-12, atol=1e-12)
    # The solver has 5 rows per group and the verifier 4: the agent-wise means differ from the global one.
    assert not np.allclose(got, compute_advantages(batch, "grpo", invalid_penalty=penalty))

    codes, _ = step_groups(batch, layout)
    for code in set(codes.tolist()):
        assert len({pairs[i] for i in np.flatnonzero(codes == code)}) == 1


def test_one_shared_policy_plays_every_role_the_same_way(per_agent_groups: list[Group]) -> None:
    shared = groups_of(request(policy=TEAM + "team_member", agents={"orchestra": "math", "max_rounds": 2}))

    def calls(groups: list[Group]) -> list[tuple[str | None, str, str]]:
        return [
            (s.agent_id, s.action, s.response_text) for g in groups for t in g.trajectories for s in t.steps
        ]

    assert calls(shared) == calls(per_agent_groups)


def test_a_verifier_that_always_rejects_gets_max_rounds_attempts() -> None:
    seen: Counter[str] = Counter()

    def critic(prompt: Prompt) -> str:
        seen[prompt.metadata["role"]] += 1
        return "Step 2 is wrong.\n<verify>Reject </verify>"  # read case- and space-insensitively

    req = request(
        count=1, group_size=2, agents={"orchestra": "math", "policies": {"solver": PER_AGENT["solver"]}}
    )
    [group] = groups_of(req, backend=ScriptedBackend(critic))
    rounds = MATH_MAX_ROUNDS  # the default when max_rounds is unset: the authors' 3
    assert seen == {"verifier": 2 * (rounds - 1)}
    for traj in group.trajectories:
        assert [s.agent_id for s in traj.steps] == ["solver", "verifier"] * (rounds - 1) + ["solver"]
        assert all(s.action == "reject" for s in traj.steps if s.agent_id == "verifier")


def test_one_round_is_the_solver_alone_and_an_answerless_attempt_scores_nothing() -> None:
    def rambler(prompt: Prompt) -> str:
        return "<think>hmm</think> I cannot decide."

    [group] = groups_of(
        request(
            count=1, group_size=2, policy=TEAM + "team_member", agents={"orchestra": "math", "max_rounds": 1}
        )
    )
    assert all([s.agent_id for s in t.steps] == ["solver"] for t in group.trajectories)
    req = request(count=1, group_size=2, agents={"orchestra": "math", "max_rounds": 1})
    [group] = groups_of(req, backend=ScriptedBackend(rambler))
    for traj in group.trajectories:
        [row] = traj.steps
        assert (row.action, row.is_action_valid, row.reward, row.truncated) == ("", False, 0.0, True)


def test_the_verdict_and_the_solver_s_answer_follow_the_authors_rules() -> None:
    orchestra = MathOrchestra(2)
    assert orchestra.parse("verifier", "fine <verify>approve</verify>") == ("approve", True)
    assert orchestra.parse("verifier", "<verify> REJECT </verify>") == ("reject", True)
    # No block: approved (the authors' update_approved_vector), and the output is invalid.
    assert orchestra.parse("verifier", "looks good to me") == ("approve", False)
    assert orchestra.parse("verifier", "<verify>reject</verify> 错") == ("reject", False)  # a CJK ideograph
    assert orchestra.parse("solver", "<think>x</think> \\boxed{12}") == ("\\boxed{12}", True)
    assert orchestra.parse("solver", "<think>\\boxed{12}</think> so") == ("", False)
    with pytest.raises(ValueError, match="max_rounds"):
        MathOrchestra(0)


def test_groups_committed_through_a_journal_hold_one_row_per_call() -> None:
    queue = CollectingQueue()
    journal = EngineJournal(MemoryJournal(), queue)

    async def run() -> None:
        await journal.save_job("j", {})
        await play(request(count=2, group_size=2), journal=journal, job_id="j")

    asyncio.run(run())
    assert len(queue.groups) == 2
    for group in queue.groups:
        for traj in group.trajectories:
            assert {s.agent_id for s in traj.steps} == {"solver", "verifier"}


def test_the_math_orchestra_is_declared_once_and_checked_when_the_request_is_read() -> None:
    with pytest.raises(ValidationError, match="answer"):
        request(agents={"orchestra": "math", "policies": {"answer": PER_AGENT["solver"]}})
    with pytest.raises(ValidationError, match="max_rounds"):
        request(agents={"orchestra": "search", "max_rounds": 2})
    with pytest.raises(ValidationError, match="max_rounds"):
        request(agents={"orchestra": "math", "max_rounds": 0})


def test_an_orchestra_refuses_an_env_family_it_does_not_play() -> None:
    with pytest.raises(ConfigurationError, match="math envs"):
        groups_of(
            request(env_id="envhub/SearchQA-v0", policy=TEAM + "team_member", agents={"orchestra": "math"})
        )
    search_team = "scripted:envhub.envs.search.policy:team_member"
    with pytest.raises(ConfigurationError, match="search envs"):
        groups_of(request(policy=search_team, agents={"orchestra": "search"}))


def test_the_service_resolves_each_role_s_registered_policy() -> None:
    from envhub.rollout.jobs import NotRegisteredError
    from envhub.rollout.metrics import RolloutMetrics
    from envhub.rollout.service import JobManager

    manager = JobManager(queue=CollectingQueue(), journal=None, metrics=RolloutMetrics(), max_jobs=2)
    named = {"solver": "scripted:math-team-solver", "verifier": "scripted:math-team-verifier"}
    admitted = manager.admit(
        request(env_urls=["http://127.0.0.1:1"], agents={"orchestra": "math", "policies": named})
    )
    assert admitted.agents is not None and admitted.agents.policies == PER_AGENT
    assert admitted.agents.max_rounds is None
    with pytest.raises(NotRegisteredError):
        manager.admit(
            request(
                env_urls=["http://127.0.0.1:1"],
                agents={"orchestra": "math", "policies": {**named, "verifier": "scripted:os:system"}},
            )
        )


class _SeedRecorder(ScriptedBackend):
    """A scripted team that records the seed each call's prompt is sampled with (the backends'
    per-prompt rule, :func:`~envhub.policy.sampling.prompt_seed`), by member and role."""

    def __init__(self, script: Any) -> None:
        super().__init__(script)
        self.seeds: list[tuple[str, str, int | None]] = []

    async def generate(self, prompts: Any, sampling: Any) -> Any:
        for i, prompt in enumerate(prompts):
            meta = prompt.metadata
            self.seeds.append((str(meta["member"]), str(meta["role"]), prompt_seed(sampling.seed, i)))
        return await super().generate(prompts, sampling)


def test_a_seeded_team_samples_each_call_of_a_step_from_its_own_seed() -> None:
    """Under a sampling seed every call of one env step must draw its own numbers: a solver's
    second round drawn with its first round's seed repeats its first attempt's draws on a prompt
    that only adds the critique (a retry that cannot explore)."""

    def team(prompt: Prompt) -> str:
        if prompt.metadata["role"] == "verifier":
            return "<verify>reject</verify>"
        return "\\boxed{1}"

    recorder = _SeedRecorder(team)
    req = request(
        count=1,
        group_size=2,
        agents={"orchestra": "math", "max_rounds": 3},
        sampling={"seed": 7},
        seed_each_step=True,
    )
    groups_of(req, backend=recorder)
    by_member: dict[str, list[tuple[str, int | None]]] = {}
    for member, role, seed in recorder.seeds:
        by_member.setdefault(member, []).append((role, seed))
    assert len(by_member) == 2
    for calls in by_member.values():
        assert [role for role, _ in calls] == ["solver", "verifier"] * 2 + ["solver"]
        seeds = [seed for _, seed in calls]
        assert None not in seeds
        assert len(set(seeds)) == len(seeds), calls
    # Reproducible: the same job draws the same seeds again.
    again = _SeedRecorder(team)
    groups_of(req, backend=again)
    assert again.seeds == recorder.seeds
