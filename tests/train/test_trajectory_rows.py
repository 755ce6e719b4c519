"""Trajectory mode: one row per episode, the recorded tokens exactly, env tokens out of the loss."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import torch

from envhub.algos import compute_advantages, default_config
from envhub.core.errors import ConfigurationError
from envhub.core.records import Group, Step, StepBatch, TokenSequence, Trajectory
from envhub.train.trajectory_rows import build_sequence_rows, sequence_advantages, turn_spans

# prompt [1, 2, 3] | turn 0: [10, 11] | env: [20, 21, 22] | turn 1: [12]
TOKENS = [1, 2, 3, 10, 11, 20, 21, 22, 12]
MASK = [0, 0, 0, 1, 1, 0, 0, 0, 1]


def _step(traj: str, idx: int, response: list[int], reward: float = 0.0, valid: bool = True) -> Step:
    return Step(
        uid=traj.split(":")[0],
        traj_id=traj,
        step_idx=idx,
        anchor=f"s{idx}",
        action="a",
        reward=reward,
        is_action_valid=valid,
        response_token_ids=response,
        response_logprobs=[-0.5] * len(response),
        policy_version=2,
    )


def _trajectory(uid: str, k: int, reward: float, *, valid: bool = True) -> Trajectory:
    traj_id = f"{uid}:{k}"
    sequence = TokenSequence(
        uid=uid,
        traj_id=traj_id,
        prompt_length=3,
        token_ids=TOKENS,
        loss_mask=MASK,
        logprobs=[-0.5 if m else 0.0 for m in MASK],
        policy_versions=[2, 2],
        reward=reward,
    )
    steps = [_step(traj_id, 0, [10, 11], valid=valid), _step(traj_id, 1, [12], reward=reward)]
    return Trajectory(uid=uid, traj_id=traj_id, env_id="e", task_id="t", steps=steps, sequences=[sequence])


def _group(uid: str, rewards: list[float], invalid: tuple[int, ...] = ()) -> Group:
    trajs = [_trajectory(uid, k, r, valid=k not in invalid) for k, r in enumerate(rewards)]
    return Group(uid=uid, env_id="e", task_id="t", trajectories=trajs)


def test_a_sequence_row_is_the_recorded_tokens_with_only_the_models_in_the_loss() -> None:
    built = build_sequence_rows([_group("g", [1.0])], pad_token_id=0)
    rows = built.rows
    assert len(rows) == 1
    assert rows.input_ids.tolist() == [TOKENS]
    assert rows.response_ids.tolist() == [TOKENS[3:]]
    assert rows.response_mask.tolist() == [MASK[3:]]  # 1 on the model's tokens, 0 on the env's
    assert rows.response_index.tolist() == [list(range(3, 9))]
    assert rows.rollout_logprobs.tolist() == [[-0.5, -0.5, 0.0, 0.0, 0.0, -0.5]]
    assert rows.policy_version.tolist() == [2] and rows.has_rollout_logprobs
    # each model token points at its turn's step row; env tokens at none
    assert built.token_step.tolist() == [[0, 0, -1, -1, -1, 1]]
    assert rows.tokens == 3  # the generated tokens recorded: [10, 11] and [12]


def _short(uid: str, k: int) -> Trajectory:
    """An episode of one turn: prompt [1, 2, 3], response [10, 11]."""
    traj = _trajectory(uid, k, 0.0)
    seq = traj.sequences[0].model_copy(
        update={
            "token_ids": TOKENS[:5],
            "loss_mask": MASK[:5],
            "logprobs": [0.0, 0.0, 0.0, -0.5, -0.5],
            "policy_versions": [2],
        }
    )
    return traj.model_copy(update={"steps": traj.steps[:1], "sequences": [seq]})


def test_padding_is_out_of_the_loss_too() -> None:
    group = Group(uid="g", env_id="e", task_id="t", trajectories=[_trajectory("g", 0, 1.0), _short("g", 1)])
    rows = build_sequence_rows([group], pad_token_id=7).rows
    assert rows.input_ids[1].tolist() == TOKENS[:5] + [7] * 4
    assert rows.attention_mask[1].tolist() == [1] * 5 + [0] * 4
    assert rows.response_mask[1].tolist() == [1, 1, 0, 0, 0, 0]


def test_grpo_gives_each_episode_one_advantage_broadcast_over_its_model_tokens() -> None:
    groups = [_group("g", [1.0, 0.0, 0.0]), _group("h", [0.0, 0.0])]
    built = build_sequence_rows(groups, pad_token_id=0)
    config = default_config("grpo", None, invalid_penalty=0.0)
    adv = sequence_advantages(built, "grpo", config)
    # Search-R1's outcome GRPO: the returns normalised over the group's episodes
    returns = np.array([1.0, 0.0, 0.0])
    expected = (returns - returns.mean()) / (returns.std(ddof=1) + 1e-6)
    mask = built.rows.response_mask
    for r in range(3):
        on = adv[r][mask[r] > 0]
        assert torch.allclose(on, torch.full_like(on, float(expected[r])), atol=1e-6)
        assert (adv[r][mask[r] == 0] == 0).all()
    assert (adv[3:] == 0).all()  # a group whose episodes all scored alike learns nothing


def test_grpo_charges_an_episode_the_invalid_penalty_once_per_invalid_action() -> None:
    built = build_sequence_rows([_group("g", [0.0, 0.0], invalid=(1,))], pad_token_id=0)
    config = default_config("grpo", None, invalid_penalty=0.5)
    adv = sequence_advantages(built, "grpo", config)
    assert built.invalid_steps.tolist() == [0, 1]
    assert adv[0, 0] > 0 > adv[1, 0]


@pytest.mark.parametrize("algo", ["gigpo", "hgpo"])
def test_per_step_estimators_give_each_turn_its_steps_advantage(algo: str) -> None:
    groups = [_group("g", [1.0, 0.0, 1.0], invalid=(1,))]
    built = build_sequence_rows(groups, pad_token_id=0)
    config = default_config(algo, None)
    adv = sequence_advantages(built, algo, config)
    per_step = compute_advantages(StepBatch.from_groups(groups), algo, config=config)
    for r in range(3):
        first, second = per_step[2 * r], per_step[2 * r + 1]
        assert adv[r].tolist() == pytest.approx([first, first, 0.0, 0.0, 0.0, second])


def test_turns_are_the_runs_of_model_tokens() -> None:
    sequence = _trajectory("g", 0, 0.0).sequences[0]
    assert turn_spans(sequence) == [(3, 5), (8, 9)]
    merged = sequence.model_copy(update={"policy_versions": [2, 2, 2]})
    with pytest.raises(ConfigurationError, match="3 turns"):
        turn_spans(merged)


def test_over_long_sequences_are_masked_or_truncated() -> None:
    mixed = Group(uid="g", env_id="e", task_id="t", trajectories=[_trajectory("g", 0, 1.0), _short("g", 1)])
    masked = build_sequence_rows([mixed], pad_token_id=0, max_response_tokens=4)
    assert masked.dropped_long == 1 and masked.rows.input_ids.tolist() == [TOKENS[:5]]
    assert len(masked.episodes) == 2  # the masked episode still counts in its group's advantages
    group = _group("g", [1.0, 0.0])
    cut = build_sequence_rows([group], pad_token_id=0, max_response_tokens=4, overlong="truncate")
    assert cut.truncated == 2 and cut.rows.input_ids[0].tolist() == TOKENS[:7]
    assert cut.rows.response_mask[0].tolist() == MASK[3:7]
    fined = build_sequence_rows(
        [group], pad_token_id=0, max_response_tokens=4, overlong="penalise", overlong_penalty=0.25
    )
    assert fined.episodes.reward.tolist() == [0.75, -0.25]
    with pytest.raises(ConfigurationError, match="overlong: truncate"):
        build_sequence_rows([group], pad_token_id=0, max_response_tokens=4)


def test_groups_not_played_in_trajectory_mode_are_refused() -> None:
    group = _group("g", [1.0])
    group.trajectories[0].sequences = []
    with pytest.raises(ConfigurationError, match="trajectory_mode"):
        build_sequence_rows([group], pad_token_id=0)


def test_rows_of_a_real_rollout_are_exactly_the_sampled_tokens(trajectory_groups: list[Group]) -> None:
    built = build_sequence_rows(trajectory_groups, pad_token_id=0)
    rows = built.rows
    sequences = [s for g in trajectory_groups for t in g.trajectories for s in t.sequences]
    steps = [s for g in trajectory_groups for t in g.trajectories for s in t.steps]
    assert len(rows) == len(sequences) and any(
        len(t.steps) > 1 for g in trajectory_groups for t in g.trajectories
    )
    assert rows.tokens == sum(len(s.response_token_ids or []) for s in steps)
    by_step = {(s.traj_id, s.step_idx): s for s in steps}
    for r, seq in enumerate(sequences):
        n = len(seq.token_ids)
        assert rows.input_ids[r, :n].tolist() == seq.token_ids  # the recorded ids, not a re-encoding
        assert rows.attention_mask[r].sum() == n
        for k, (start, stop) in enumerate(turn_spans(seq)):
            step = by_step[(seq.traj_id, seq.first_step + k)]
            # The turn's tokens are the ids the model sampled, from exactly the ids before them.
            assert seq.token_ids[start:stop] == step.response_token_ids
            assert seq.token_ids[:start] == step.prompt_token_ids
            lo, hi = start - seq.prompt_length, stop - seq.prompt_length
            assert rows.response_mask[r, lo:hi].eq(1).all()
            assert rows.rollout_logprobs[r, lo:hi].tolist() == pytest.approx(step.response_logprobs)
    # env tokens: recorded between the turns and out of the loss
    env_tokens = [len(s.token_ids) - s.prompt_length - sum(s.loss_mask) for s in sequences]
    assert max(env_tokens) > 0


def test_the_actor_scores_the_sampled_tokens_where_the_sampler_did(
    small_model_dir: Path, trajectory_groups: list[Group]
) -> None:
    """Recomputed log-probs at a row's model tokens are the sampler's: the positions line up."""
    from transformers import AutoModelForCausalLM

    from envhub.train.learner import response_logprobs

    rows = build_sequence_rows(trajectory_groups, pad_token_id=0).rows
    model = AutoModelForCausalLM.from_pretrained(
        str(small_model_dir), dtype=torch.float32, local_files_only=True
    )
    on = rows.response_mask > 0
    for chunk_tokens in (0, 64):
        recomputed = response_logprobs(
            model, rows, temperature=1.0, micro_batch_rows=4, chunk_tokens=chunk_tokens
        )
        assert torch.allclose(recomputed[on], rows.rollout_logprobs[on], atol=1e-4)
        assert (recomputed[~on] == 0).all()


def test_groups_off_the_wire_give_the_same_rows(trajectory_groups: list[Group]) -> None:
    """A Redis delivery decodes its record for trajectory rows: the sequences survive the codec."""
    from envhub.rollout.queue.codec import decode_group, encode_group

    wired = [decode_group(encode_group(g)) for g in trajectory_groups]
    here = build_sequence_rows(trajectory_groups, pad_token_id=0)
    there = build_sequence_rows(wired, pad_token_id=0)
    for name in ("input_ids", "response_mask", "response_ids", "rollout_logprobs"):
        assert torch.equal(getattr(here.rows, name), getattr(there.rows, name)), name
    assert torch.equal(here.token_step, there.token_step)
