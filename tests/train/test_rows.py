"""Groups become one padded row per env step: prompt, then response, then padding."""

from __future__ import annotations

import pytest
import torch

from envhub.core.errors import ConfigurationError
from envhub.core.records import Group, Step, Trajectory
from envhub.train.rows import build_rows


def _step(
    uid: str, traj: str, idx: int, prompt: list[int] | None, response: list[int] | None, **kw: object
) -> Step:
    return Step(
        uid=uid,
        traj_id=traj,
        step_idx=idx,
        anchor=f"s{idx}",
        action="a",
        reward=0.0,
        prompt_token_ids=prompt,
        response_token_ids=response,
        response_logprobs=None if response is None else [-0.5] * len(response),
        policy_version=3,
        **kw,  # type: ignore[arg-type]
    )


def _group(steps: list[Step]) -> Group:
    traj = Trajectory(uid="g", traj_id="g-0", env_id="e", task_id="t", steps=steps)
    return Group(uid="g", env_id="e", task_id="t", trajectories=[traj])


def test_rows_pack_prompt_then_response_and_mask_only_the_response() -> None:
    built = build_rows(
        [_group([_step("g", "g-0", 0, [5, 6, 7], [8, 9]), _step("g", "g-0", 1, [5], [4, 3, 2])])],
        pad_token_id=0,
    )
    rows = built.rows
    assert rows.input_ids.tolist() == [[5, 6, 7, 8, 9], [5, 4, 3, 2, 0]]
    assert rows.attention_mask.tolist() == [[1, 1, 1, 1, 1], [1, 1, 1, 1, 0]]
    assert rows.response_ids.tolist() == [[8, 9, 0], [4, 3, 2]]
    assert rows.response_mask.tolist() == [[1, 1, 0], [1, 1, 1]]
    # Each response token's position in input_ids: the logits at position - 1 predict it.
    assert rows.response_index.tolist() == [[3, 4, 0], [1, 2, 3]]
    assert rows.rollout_logprobs[0].tolist() == [-0.5, -0.5, 0.0]
    assert rows.policy_version.tolist() == [3, 3]
    assert rows.has_rollout_logprobs


def test_long_prompts_are_left_out_of_the_rows_but_not_of_the_advantage_batch() -> None:
    steps = [_step("g", "g-0", 0, [1] * 10, [2]), _step("g", "g-0", 1, [1, 1], [2])]
    built = build_rows([_group(steps)], pad_token_id=0, max_prompt_tokens=4)
    assert len(built.rows) == 1 and built.dropped_long == 1
    assert len(built.steps) == 2 and built.kept.tolist() == [1]


def test_retokenised_rows_are_counted() -> None:
    built = build_rows([_group([_step("g", "g-0", 0, [1], [2], token_exact=False)])], pad_token_id=0)
    assert built.inexact == 1


def test_groups_without_token_ids_cannot_be_trained_on() -> None:
    with pytest.raises(ConfigurationError, match="token ids"):
        build_rows([_group([_step("g", "g-0", 0, None, None)])], pad_token_id=0)


def test_real_groups_give_one_row_per_step(sampled_groups: list[Group]) -> None:
    built = build_rows(sampled_groups, pad_token_id=0)
    steps = sum(len(t.steps) for g in sampled_groups for t in g.trajectories)
    assert len(built.rows) == steps == len(built.steps)
    lengths = built.rows.response_mask.sum(-1)
    expected = [
        len(s.response_token_ids or []) for g in sampled_groups for t in g.trajectories for s in t.steps
    ]
    assert lengths.tolist() == [float(n) for n in expected]
    assert torch.equal(built.rows.group_index.unique(), torch.arange(len(sampled_groups)))


def test_each_row_says_whether_it_carries_its_sampling_logprobs() -> None:
    with_lp = _step("g", "g-0", 0, [5], [8, 9])
    without = _step("g", "g-0", 1, [5], [4]).model_copy(update={"response_logprobs": None})
    rows = build_rows([_group([with_lp, without])], pad_token_id=0).rows
    assert rows.rows_with_logprobs().tolist() == [True, False]
    assert not rows.has_rollout_logprobs
    assert rows.select([1, 0]).rows_with_logprobs().tolist() == [False, True]
