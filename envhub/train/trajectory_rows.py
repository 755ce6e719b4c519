"""Trajectory mode: one training row per episode (Search-R1 / verl multi-turn), env tokens masked.

The rollout layer records each episode as :class:`~envhub.core.records.TokenSequence` rows
(:mod:`envhub.rollout.sequences`): the first prompt, then every turn's sampled response
(``loss_mask`` 1) followed by the env's observation and the next turn's header (``loss_mask``
0), built while the episode ran, never re-tokenised. Here each sequence becomes one row of the
same :class:`~envhub.train.rows.RowBatch` the step rows use: ``input_ids`` is the recorded
``token_ids`` exactly, the "response" is everything after the first prompt, and
``response_mask`` is the recorded ``loss_mask`` there: 1 on the model's tokens, 0 on env tokens
and on padding. Old, new and reference log-probs, the KL and the entropy all go through that
one mask (Search-R1 masks retrieved tokens the same way, ``info_mask``; verl's multi-turn
``response_mask`` likewise).

Advantages are per token (``RowBatch.advantages`` of shape ``(rows, T)``):

* GRPO: one scalar per episode, normalised over the group's episodes (Search-R1's outcome
  GRPO), broadcast over the episode's model tokens. The episode's score is its return minus
  ``invalid_penalty`` once per invalid action it took.
* GiGPO and HGPO: the estimator runs over the episode's steps exactly as in step mode, and each
  turn's advantage goes to that turn's tokens (turn k of a segment is step ``first_step + k``).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import torch

from envhub.algos import AdvantageConfig, GRPOConfig, compute_advantages
from envhub.core.errors import ConfigurationError
from envhub.core.records import Group, StepBatch, TokenSequence, Trajectory
from envhub.train.rows import Overlong, RowBatch

__all__ = ["BuiltSequences", "build_sequence_rows", "sequence_advantages", "turn_spans"]


@dataclass(frozen=True)
class BuiltSequences:
    """:func:`build_sequence_rows`' result.

    Attributes:
        rows: one row per token sequence (advantages zero until filled).
        steps: every step of every trajectory (the per-turn estimators' input; rewards already
            penalised under ``overlong: penalise``).
        episodes: one row per trajectory, its return as the reward and ``is_action_valid`` False
            where it took an invalid action (GRPO's input).
        invalid_steps: ``(trajectories,)`` invalid actions of each episode.
        token_step: ``(rows, T)`` the row in ``steps`` of each model token's turn, -1 elsewhere.
        row_episode: ``(rows,)`` the row in ``episodes`` each row belongs to.
        dropped_long: sequences over a limit, left out (``overlong: mask``).
        truncated: sequences over a limit, cut to it (``truncate``/``penalise``).
        untokenized: trajectories without a token sequence (not trained on; still in the groups).
        segments: sequences beyond one per episode (chat templates that rewrote history).
        env_tokens: tokens of the rows after the first prompt that are out of the loss (the env's
            observations and the chat template's turn headers).
    """

    rows: RowBatch
    steps: StepBatch
    episodes: StepBatch
    invalid_steps: np.ndarray
    token_step: torch.Tensor
    row_episode: torch.Tensor
    dropped_long: int = 0
    truncated: int = 0
    untokenized: int = 0
    segments: int = 0
    env_tokens: int = 0


def turn_spans(sequence: TokenSequence) -> list[tuple[int, int]]:
    """``[start, end)`` of each turn's sampled tokens in ``sequence.token_ids``, in turn order.

    Turns are the runs of ``loss_mask`` 1: the builder appends masked env tokens between two
    responses, so a segment has one run per response it took (``len(policy_versions)``).

    Raises:
        ConfigurationError: the runs do not match the segment's turns (an empty response).
    """
    mask = np.asarray(sequence.loss_mask, dtype=np.int8)
    edges = np.diff(np.concatenate(([0], mask, [0])))
    spans = list(zip(np.flatnonzero(edges == 1).tolist(), np.flatnonzero(edges == -1).tolist(), strict=True))
    if len(spans) != len(sequence.policy_versions):
        raise ConfigurationError(
            f"Sequence {sequence.traj_id}#{sequence.segment} has {len(spans)} runs of model tokens for "
            f"{len(sequence.policy_versions)} turns (a turn sampled no token?), so its tokens cannot be "
            "matched to its steps.",
            traj_id=sequence.traj_id,
        )
    return spans


def build_sequence_rows(
    groups: Sequence[Group],
    *,
    pad_token_id: int,
    max_prompt_tokens: int | None = None,
    max_response_tokens: int | None = None,
    overlong: Overlong = "mask",
    overlong_penalty: float = 1.0,
) -> BuiltSequences:
    """Pack the trajectory-mode sequences of ``groups`` into one row each.

    Args:
        max_prompt_tokens: limit on a row's first prompt; ``truncate`` keeps its last tokens.
        max_response_tokens: limit on everything after it (model and env tokens alike);
            ``truncate`` keeps its first tokens.
        overlong: what a row over a limit becomes (:data:`~envhub.train.rows.Overlong`);
            ``penalise`` subtracts ``overlong_penalty`` from the reward of its episode's last step.

    Raises:
        ConfigurationError: no trajectory carries a token sequence (rollouts not in trajectory
            mode), or a sequence's turns do not match its steps.
    """
    steps = StepBatch.from_groups(groups)
    trajectories = [(g, t) for g, group in enumerate(groups) for t in group.trajectories]
    step_row: dict[tuple[str, int], int] = {}
    last_row: dict[str, int] = {}
    for i, (traj_id, idx) in enumerate(zip(steps.traj_id.tolist(), steps.step_idx.tolist(), strict=True)):
        step_row[(str(traj_id), int(idx))] = i
        last_row[str(traj_id)] = max(last_row.get(str(traj_id), -1), i)
    chosen: list[tuple[int, int, TokenSequence, int, int]] = []  # group, episode, seq, prompt cut, end
    penalised: list[int] = []
    dropped_long = truncated = untokenized = segments = 0
    for e, (g, traj) in enumerate(trajectories):
        if not traj.sequences:
            untokenized += 1
            continue
        segments += len(traj.sequences) - 1
        for seq in traj.sequences:
            prompt, rest = seq.prompt_length, len(seq.token_ids) - seq.prompt_length
            long_p = max_prompt_tokens is not None and prompt > max_prompt_tokens
            long_r = max_response_tokens is not None and rest > max_response_tokens
            cut, end = 0, len(seq.token_ids)
            if long_p or long_r:
                if overlong == "mask":
                    dropped_long += 1
                    continue
                truncated += 1
                if long_p:
                    cut = prompt - int(max_prompt_tokens or 0)
                if long_r:
                    end = prompt + int(max_response_tokens or 0)
                if overlong == "penalise" and traj.traj_id in last_row:
                    penalised.append(last_row[traj.traj_id])
            chosen.append((g, e, seq, cut, end))
    if penalised:
        reward = steps.reward.copy()
        np.subtract.at(reward, penalised, overlong_penalty)
        steps = dataclasses.replace(steps, reward=reward)
    if not chosen and dropped_long:
        raise ConfigurationError(
            f"All {dropped_long} token sequences are over rollout.max_prompt_tokens or "
            "rollout.max_response_tokens (in trajectory mode the response is the whole episode after "
            "the first prompt); raise the limits or set rollout.overlong: truncate.",
            dropped_long=dropped_long,
        )
    if not chosen:
        raise ConfigurationError(
            "No trajectory of these groups carries a token sequence, so there is nothing to train on in "
            "trajectory mode. Play the rollouts with trajectory_mode on and a model backend (in-process "
            "transformers or vLLM with the model's tokenizer), or set rollout.trajectory_mode: false.",
            trajectories=len(trajectories),
        )
    episodes, invalid = _episodes(steps, [t for _, t in trajectories])
    rows, token_step, row_episode = _pack(chosen, step_row, pad_token_id)
    return BuiltSequences(
        rows=rows,
        steps=steps,
        token_step=token_step,
        row_episode=row_episode,
        episodes=episodes,
        invalid_steps=invalid,
        dropped_long=dropped_long,
        truncated=truncated,
        untokenized=untokenized,
        segments=segments,
        env_tokens=sum(end - seq.prompt_length for _, _, seq, _, end in chosen) - rows.tokens,
    )


def _episodes(steps: StepBatch, trajectories: Sequence[Trajectory]) -> tuple[StepBatch, np.ndarray]:
    """One row per trajectory: its return (summed from ``steps``) and its invalid actions."""
    ids = [t.traj_id for t in trajectories]
    uids = [t.uid for t in trajectories]
    index = {traj_id: k for k, traj_id in enumerate(ids)}
    rows = np.fromiter((index[str(t)] for t in steps.traj_id.tolist()), np.int64, len(steps))
    returns = np.bincount(rows, weights=steps.reward, minlength=len(ids))
    invalid = np.bincount(
        rows, weights=(~steps.is_action_valid).astype(np.float64), minlength=len(ids)
    ).astype(np.int64)
    batch = StepBatch.from_columns(
        uid=uids,
        traj_id=ids,
        step_idx=np.zeros(len(ids), dtype=np.int64),
        anchor=[""] * len(ids),
        reward=returns,
        is_action_valid=invalid == 0,
    )
    return batch, invalid


def _pack(
    chosen: Sequence[tuple[int, int, TokenSequence, int, int]],
    step_row: dict[tuple[str, int], int],
    pad_token_id: int,
) -> tuple[RowBatch, torch.Tensor, torch.Tensor]:
    """The padded rows, each model token's step row, and each row's episode."""
    n = len(chosen)
    length = max(end - cut for _, _, _, cut, end in chosen)
    width = max(max(end - seq.prompt_length for _, _, seq, _, end in chosen), 1)
    input_ids = torch.full((n, length), pad_token_id, dtype=torch.long)
    attention = torch.zeros((n, length), dtype=torch.long)
    resp_index = torch.zeros((n, width), dtype=torch.long)
    resp_ids = torch.full((n, width), pad_token_id, dtype=torch.long)
    resp_mask = torch.zeros((n, width), dtype=torch.float32)
    rollout_lp = torch.zeros((n, width), dtype=torch.float32)
    token_step = torch.full((n, width), -1, dtype=torch.long)
    versions = torch.full((n,), -1, dtype=torch.long)
    group_index = torch.zeros((n,), dtype=torch.long)
    row_episode = torch.zeros((n,), dtype=torch.long)
    for r, (g, e, seq, cut, end) in enumerate(chosen):
        ids = seq.token_ids[cut:end]
        p = seq.prompt_length - cut  # the first prompt's tokens kept
        t = len(ids) - p
        input_ids[r, : len(ids)] = torch.tensor(ids, dtype=torch.long)
        attention[r, : len(ids)] = 1
        if t > 0:
            resp_index[r, :t] = torch.arange(p, p + t)
            resp_ids[r, :t] = torch.tensor(ids[p:], dtype=torch.long)
            resp_mask[r, :t] = torch.tensor(seq.loss_mask[seq.prompt_length : end], dtype=torch.float32)
            rollout_lp[r, :t] = torch.tensor(seq.logprobs[seq.prompt_length : end], dtype=torch.float32)
        for k, (start, stop) in enumerate(turn_spans(seq)):
            key = (seq.traj_id, seq.first_step + k)
            if key not in step_row:
                raise ConfigurationError(
                    f"Sequence {seq.traj_id}#{seq.segment} has a turn at step {key[1]} that its trajectory "
                    "does not record.",
                    traj_id=seq.traj_id,
                )
            lo, hi = start - seq.prompt_length, min(stop, end) - seq.prompt_length
            if hi > lo:
                token_step[r, lo:hi] = step_row[key]
        versions[r] = min(seq.policy_versions) if seq.policy_versions else -1
        group_index[r] = g
        row_episode[r] = e
    rows = RowBatch(
        input_ids=input_ids,
        attention_mask=attention,
        response_index=resp_index,
        response_ids=resp_ids,
        response_mask=resp_mask,
        rollout_logprobs=rollout_lp,
        advantages=torch.zeros((n, width), dtype=torch.float32),
        policy_version=versions,
        group_index=group_index,
        has_rollout_logprobs=True,
    )
    return rows, token_step, row_episode


def sequence_advantages(built: BuiltSequences, algo: str, config: AdvantageConfig) -> torch.Tensor:
    """Per-token advantages ``(rows, T)`` of trajectory rows, 0 off the model's tokens.

    GRPO normalises one score per episode (its return minus ``invalid_penalty`` per invalid
    action) in its group and broadcasts it over the episode's model tokens; GiGPO and HGPO give
    each turn's tokens that turn's step advantage.
    """
    mask = built.rows.response_mask
    if algo == "grpo" and isinstance(config, GRPOConfig):
        score = built.episodes.reward - config.invalid_penalty * built.invalid_steps
        episodes = dataclasses.replace(built.episodes, reward=score)
        # the penalty is in the score already; each episode is one sample
        one = dataclasses.replace(config, invalid_penalty=0.0, per_trajectory=False)
        per_episode = torch.as_tensor(compute_advantages(episodes, algo, config=one), dtype=torch.float32)
        return per_episode[built.row_episode].unsqueeze(-1) * mask
    per_step = torch.as_tensor(compute_advantages(built.steps, algo, config=config), dtype=torch.float32)
    on = built.token_step >= 0
    out = torch.zeros(mask.shape, dtype=torch.float32)
    out[on] = per_step[built.token_step[on]]
    return out * mask
