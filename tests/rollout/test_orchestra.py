"""Multi-agent episodes (Dr. MAS): the search orchestra on a real Search-QA env, in this process.

The roles are scripted (``envhub.envs.search.policy:team_*``): the verifier routes to the search
agent until the scripted reader would answer (members with an odd index answer after the first
search), so a group holds winning and losing members with different numbers of calls.
"""

from __future__ import annotations

import asyncio
from collections import Counter, defaultdict
from typing import Any

import numpy as np
import pytest
from pydantic import ValidationError

from envhub.algos import compute_advantages
from envhub.algos.gigpo import step_groups
from envhub.algos.layout import BatchLayout
from envhub.core.errors import ConfigurationError
from envhub.core.records import Group, StepBatch
from envhub.core.wire import RolloutRequest
from envhub.policy.base import Prompt
from envhub.policy.scripted import ScriptedBackend
from envhub.rollout.driver import play
from envhub.rollout.journal import EngineJournal, MemoryJournal
from tests.rollout.conftest import CollectingQueue

TEAM = "scripted:envhub.envs.search.policy:"
PER_AGENT = {
    "verifier": TEAM + "team_verifier",
    "search": TEAM + "team_searcher",
    "answer": TEAM + "team_answerer",
}


def request(**fields: Any) -> RolloutRequest:
    body: dict[str, Any] = {
        "env_id": "envhub/SearchQA-v0",
        "count": 4,
        "group_size": 4,
        "max_steps": 4,
        "agents": {"orchestra": "search", "policies": PER_AGENT},
    }
    return RolloutRequest.model_validate({**body, **fields})


def groups_of(req: RolloutRequest, **kwargs: Any) -> list[Group]:
    return asyncio.run(play(req, job_id="drmas", **kwargs)).groups


@pytest.fixture(scope="module")
def per_agent_groups() -> list[Group]:
    return groups_of(request())


def test_each_role_call_is_a_row_tagged_with_its_role(per_agent_groups: list[Group]) -> None:
    for group in per_agent_groups:
        for traj in group.trajectories:
            steps = traj.steps
            assert [s.step_idx for s in steps] == list(range(len(steps)))
            by_env_step: dict[int, list[str]] = defaultdict(list)
            for s in steps:
                assert s.env_step is not None
                by_env_step[s.env_step].append(s.agent_id)
            assert sorted(by_env_step) == list(range(len(by_env_step)))
            # The verifier opens every env step and routes to one agent; only the last step answers.
            last = max(by_env_step)
            for k, agents in by_env_step.items():
                assert agents == ["verifier", "answer" if k == last else "search"]
            for s in steps:
                assert s.action == {"verifier": "yes" if s.env_step == last else "no"}.get(
                    s.agent_id, s.action
                )
                assert s.is_action_valid
                assert s.prompt_messages and f"# Your role: {s.agent_id}" in s.prompt_messages[-1]["content"]
            assert steps[-1].action.startswith("<answer>") and steps[-1].terminated


def test_the_team_reward_is_on_every_row(per_agent_groups: list[Group]) -> None:
    rewards = []
    for group in per_agent_groups:
        for traj in group.trajectories:
            team = float(traj.won)  # EM: 1 for the right answer
            assert traj.episode_return == team
            assert all(s.info["team_reward"] == team for s in traj.steps)
            # The env's reward sits on the call whose action it executed: the step's last.
            assert [s.reward for s in traj.steps] == [0.0] * (len(traj.steps) - 1) + [team]
            rewards.append(team)
    assert 0 < np.mean(rewards) < 1  # hasty members lose multi-hop questions


def test_grouping_by_agent_gives_the_task_and_agent_groups(per_agent_groups: list[Group]) -> None:
    batch = StepBatch.from_groups(per_agent_groups)
    assert batch.agent_id is not None and batch.env_step is not None
    pairs = list(zip(batch.uid.tolist(), batch.agent_id.tolist(), strict=True))
    layout = BatchLayout.from_batch(batch, group_by_agent=True)
    assert layout.n_groups == len(set(pairs)) == 3 * len(per_agent_groups)
    for code in range(layout.n_groups):
        assert len({pairs[i] for i in np.flatnonzero(layout.group == code)}) == 1

    # Agent-wise GRPO by hand: every call a sample of its (task, agent) group, unbiased std.
    penalty = 0.01
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
    assert not np.allclose(got, compute_advantages(batch, "grpo", invalid_penalty=penalty))

    # GiGPO's agent-wise step groups never mix agents (nor tasks).
    codes, _ = step_groups(batch, layout)
    for code in set(codes.tolist()):
        assert len({pairs[i] for i in np.flatnonzero(codes == code)}) == 1


def test_one_shared_policy_plays_every_role_the_same_way(per_agent_groups: list[Group]) -> None:
    shared = groups_of(request(policy=TEAM + "team_member", agents={"orchestra": "search"}))

    def calls(groups: list[Group]) -> list[tuple[str, str, str]]:
        return [
            (s.agent_id, s.action, s.response_text) for g in groups for t in g.trajectories for s in t.steps
        ]

    assert calls(shared) == calls(per_agent_groups)


def test_a_role_without_its_own_policy_plays_the_callers_backend() -> None:
    seen: Counter[str] = Counter()

    def always_search(prompt: Prompt) -> str:
        role = prompt.metadata["role"]
        seen[role] += 1
        if role == "verifier":
            return "<think>never enough</think><verify>no</verify>"
        return "<think>x</think><search>" + prompt.metadata["observations"][0] + "</search>"

    req = request(count=1, group_size=2, agents={"policies": {"answer": PER_AGENT["answer"]}})
    [group] = groups_of(req, backend=ScriptedBackend(always_search))
    assert seen == {"verifier": 8, "search": 6}  # 2 members x 4 steps; no search on the last step
    for traj in group.trajectories:
        # On the last step a "no" calls nobody: the env gets an empty action and the episode ends.
        last = traj.steps[-1]
        assert (last.env_step, last.agent_id, last.action, last.truncated) == (3, "verifier", "no", True)
        assert traj.episode_return == 0.0 and len(traj.steps) == 7


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
            assert {s.agent_id for s in traj.steps} == {"verifier", "search", "answer"}


def test_an_orchestra_is_declared_once_and_checked_when_the_request_is_read() -> None:
    with pytest.raises(ValidationError, match="critic"):
        request(agents={"policies": {"critic": PER_AGENT["verifier"]}})
    with pytest.raises(ValidationError, match="trajectory_mode"):
        request(trajectory_mode=True, policy={"base_url": "http://x/v1", "model": "m", "tokenizer": "t"})
    with pytest.raises(ValidationError, match="scripted"):
        request(agents={"policies": {"verifier": "envhub.envs.search.policy:team_verifier"}})


def test_an_orchestra_refuses_an_env_it_does_not_play_and_a_role_without_a_policy() -> None:
    with pytest.raises(ConfigurationError, match="search envs"):
        groups_of(request(env_id="envhub/Sokoban-v0", policy=TEAM + "team_member", agents={}))
    with pytest.raises(ConfigurationError, match="no policy for"):
        groups_of(request(agents={"policies": {"verifier": PER_AGENT["verifier"]}}))


def test_the_service_resolves_each_roles_registered_policy_and_keeps_no_role_key() -> None:
    from envhub.rollout.jobs import InvalidJobError, NotRegisteredError, check_job, persisted_spec
    from envhub.rollout.metrics import RolloutMetrics
    from envhub.rollout.service import JobManager

    manager = JobManager(queue=CollectingQueue(), journal=None, metrics=RolloutMetrics(), max_jobs=1)
    named = {role: f"scripted:search-team-{name}" for role, name in
             (("verifier", "verifier"), ("search", "searcher"), ("answer", "answerer"))}  # fmt: skip
    job = request(env_urls=["http://127.0.0.1:1"], agents={"policies": named})
    admitted = manager.admit(job)  # every role has its own policy: the job needs no shared one
    assert admitted.agents is not None and admitted.agents.policies == PER_AGENT
    with pytest.raises(NotRegisteredError):
        manager.admit(
            request(
                env_urls=["http://127.0.0.1:1"],
                agents={"policies": {**named, "search": "scripted:os:system"}},
            )
        )
    with pytest.raises(InvalidJobError, match="policy"):
        check_job(request(agents={"policies": {"verifier": named["verifier"]}}))
    endpoint = {"base_url": "http://127.0.0.1:2/v1", "model": "m", "api_key": "secret"}
    spec = persisted_spec(request(agents={"policies": {**PER_AGENT, "answer": endpoint}}))
    assert "api_key" not in spec["agents"]["policies"]["answer"] and "secret" not in str(spec)
