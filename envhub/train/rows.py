"""Finished groups -> padded token tensors, one training row per env step (verl-agent's layout).

Every step of every trajectory is its own row: the prompt the policy saw and the response it
sampled, nothing else (``shared/reference/round2_rollout_trainer.md`` §3). A row is packed as
``prompt + response`` followed by right padding; ``response_mask`` is 1 on the sampled tokens
(EOS included) and 0 on padding. Rows whose ids were re-tokenised from text (``token_exact``
False) are trained on too, but counted, because their ids are not the sampled ones.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any, Literal

import numpy as np
import torch

from envhub.core.errors import ConfigurationError
from envhub.core.records import Group, Step, StepBatch, next_anchors
from envhub.rollout.queue.codec import GroupColumns

__all__ = ["BuiltRows", "Overlong", "RowBatch", "build_rows", "build_rows_from_columns"]

#: What happens to a row whose prompt or response is over its limit (``rollout.overlong``):
#: ``mask`` leaves it out of the update (it still counts in its group's advantages), ``truncate``
#: keeps the prompt's last and the response's first tokens and trains on them, ``penalise``
#: truncates likewise and subtracts a penalty from the step's reward before the advantages.
Overlong = Literal["mask", "truncate", "penalise"]


@dataclass
class RowBatch:
    """The tensors of a set of step rows.

    Attributes:
        input_ids: ``(rows, length)`` prompt then response then padding.
        attention_mask: ``(rows, length)`` 1 on real tokens.
        response_index: ``(rows, T)`` position in ``input_ids`` of each response token (0 on padding).
        response_ids: ``(rows, T)`` the sampled ids (pad on padding).
        response_mask: ``(rows, T)`` float, 1 on sampled tokens.
        rollout_logprobs: ``(rows, T)`` the sampling logprobs (0 where unknown or padded).
        advantages: ``(rows,)`` per-row advantages, or ``(rows, T)`` per-token ones (trajectory
            rows, :mod:`envhub.train.trajectory_rows`); filled by the trainer.
        policy_version: ``(rows,)`` version that sampled each row (-1 unknown).
        group_index: ``(rows,)`` which group each row came from (for data-parallel splits).
        has_rollout_logprobs: every row carries its sampling logprobs.
        logprob_rows: ``(rows,)`` bool, which rows carry them (truncated importance sampling
            corrects those, and leaves the others at weight 1); None: every row when
            ``has_rollout_logprobs``, else none (:meth:`rows_with_logprobs`).
    """

    input_ids: torch.Tensor
    attention_mask: torch.Tensor
    response_index: torch.Tensor
    response_ids: torch.Tensor
    response_mask: torch.Tensor
    rollout_logprobs: torch.Tensor
    advantages: torch.Tensor
    policy_version: torch.Tensor
    group_index: torch.Tensor
    has_rollout_logprobs: bool
    logprob_rows: torch.Tensor | None = None

    def __len__(self) -> int:
        return int(self.input_ids.shape[0])

    def select(self, index: torch.Tensor | Sequence[int]) -> RowBatch:
        """The rows at ``index`` (padding columns kept)."""
        idx = torch.as_tensor(index, dtype=torch.long)
        return RowBatch(
            input_ids=self.input_ids[idx],
            attention_mask=self.attention_mask[idx],
            response_index=self.response_index[idx],
            response_ids=self.response_ids[idx],
            response_mask=self.response_mask[idx],
            rollout_logprobs=self.rollout_logprobs[idx],
            advantages=self.advantages[idx],
            policy_version=self.policy_version[idx],
            group_index=self.group_index[idx],
            has_rollout_logprobs=self.has_rollout_logprobs,
            logprob_rows=self.logprob_rows[idx] if self.logprob_rows is not None else None,
        )

    def rows_with_logprobs(self) -> torch.Tensor:
        """``(rows,)`` bool: the rows that carry their sampling logprobs."""
        if self.logprob_rows is not None:
            return self.logprob_rows
        return torch.full((len(self),), self.has_rollout_logprobs, dtype=torch.bool)

    @property
    def tokens(self) -> int:
        return int(self.response_mask.sum().item())


@dataclass(frozen=True)
class BuiltRows:
    """:func:`build_rows`' result: the rows, the steps they came from, and what was left out."""

    rows: RowBatch
    steps: StepBatch
    kept: np.ndarray  # indices into the StepBatch of the rows kept
    dropped_long: int  # over a limit and left out (overlong: mask)
    dropped_untokenized: int
    inexact: int
    truncated: int = 0  # over a limit and cut to it (overlong: truncate or penalise)


def _row_steps(groups: Sequence[Group]) -> list[tuple[int, Step]]:
    return [(g, step) for g, group in enumerate(groups) for t in group.trajectories for step in t.steps]


def build_rows(
    groups: Sequence[Group],
    *,
    pad_token_id: int,
    max_prompt_tokens: int | None = None,
    max_response_tokens: int | None = None,
    overlong: Overlong = "mask",
    overlong_penalty: float = 1.0,
) -> BuiltRows:
    """Pack the steps of ``groups`` into a :class:`RowBatch` (advantages zero until filled).

    The :class:`StepBatch` returned lists the same steps in the same order (all of them, also
    the ones left out of the rows, so that advantages see every member of every group).

    Args:
        max_prompt_tokens, max_response_tokens: per-row limits (None: none).
        overlong: what a row over a limit becomes (:data:`Overlong`).
        overlong_penalty: subtracted from an over-limit step's reward with ``penalise``.

    Raises:
        ConfigurationError: no step has token ids (e.g. groups from a scripted policy).
    """
    pairs = _row_steps(groups)
    steps = StepBatch.from_groups(groups)
    if len(steps) != len(pairs):  # from_groups walks groups the same way; guard the invariant
        raise AssertionError("StepBatch and row order disagree")
    kept: list[int] = []
    dropped_long = dropped_untok = inexact = truncated = 0
    penalised: list[int] = []
    cut: dict[int, Step] = {}
    for i, (_, step) in enumerate(pairs):
        if not step.prompt_token_ids or step.response_token_ids is None:
            dropped_untok += 1
            continue
        long_prompt = max_prompt_tokens is not None and len(step.prompt_token_ids) > max_prompt_tokens
        long_response = max_response_tokens is not None and len(step.response_token_ids) > max_response_tokens
        if long_prompt or long_response:
            if overlong == "mask":
                dropped_long += 1
                continue
            cut[i] = _truncate(step, max_prompt_tokens, max_response_tokens)
            truncated += 1
            if overlong == "penalise":
                penalised.append(i)
        inexact += not step.token_exact
        kept.append(i)
    if penalised:
        reward = steps.reward.copy()
        reward[penalised] -= overlong_penalty
        steps = replace(steps, reward=reward)
    pairs = [(g, cut.get(i, step)) for i, (g, step) in enumerate(pairs)]
    if not kept:
        raise ConfigurationError(
            "No step of these groups carries prompt and response token ids, so there is nothing to train "
            "on. Generate with a model backend (in-process transformers or vLLM), not a "
            "scripted policy.",
            steps=len(pairs),
        )
    chosen = [pairs[i] for i in kept]
    length = max(len(s.prompt_token_ids or []) + len(s.response_token_ids or []) for _, s in chosen)
    width = max(max(len(s.response_token_ids or []) for _, s in chosen), 1)
    n = len(chosen)
    input_ids = torch.full((n, length), pad_token_id, dtype=torch.long)
    attention = torch.zeros((n, length), dtype=torch.long)
    resp_index = torch.zeros((n, width), dtype=torch.long)
    resp_ids = torch.full((n, width), pad_token_id, dtype=torch.long)
    resp_mask = torch.zeros((n, width), dtype=torch.float32)
    rollout_lp = torch.zeros((n, width), dtype=torch.float32)
    versions = torch.full((n,), -1, dtype=torch.long)
    group_index = torch.zeros((n,), dtype=torch.long)
    with_logprobs = torch.zeros((n,), dtype=torch.bool)
    for r, (g, step) in enumerate(chosen):
        prompt = step.prompt_token_ids or []
        response = step.response_token_ids or []
        p, t = len(prompt), len(response)
        input_ids[r, : p + t] = torch.tensor(prompt + response, dtype=torch.long)
        attention[r, : p + t] = 1
        if t:
            resp_index[r, :t] = torch.arange(p, p + t)
            resp_ids[r, :t] = torch.tensor(response, dtype=torch.long)
            resp_mask[r, :t] = 1.0
        if step.response_logprobs is not None and len(step.response_logprobs) == t:
            rollout_lp[r, :t] = torch.tensor(step.response_logprobs, dtype=torch.float32)
            with_logprobs[r] = True
        versions[r] = -1 if step.policy_version is None else step.policy_version
        group_index[r] = g
    rows = RowBatch(
        input_ids=input_ids,
        attention_mask=attention,
        response_index=resp_index,
        response_ids=resp_ids,
        response_mask=resp_mask,
        rollout_logprobs=rollout_lp,
        advantages=torch.zeros(n, dtype=torch.float32),
        policy_version=versions,
        group_index=group_index,
        has_rollout_logprobs=bool(with_logprobs.all()),
        logprob_rows=with_logprobs,
    )
    return BuiltRows(
        rows, steps, np.asarray(kept, dtype=np.int64), dropped_long, dropped_untok, inexact, truncated
    )


def _next_anchors(groups: Sequence[GroupColumns]) -> list[str | None] | None:
    """The batch's ``next_anchor`` column, as :meth:`StepBatch.from_groups` builds it from records."""
    finals: list[str | None] = []
    anchors: list[list[str]] = []
    for g in groups:
        start = 0
        for final, length in zip(g.final_anchor, g.length.tolist(), strict=True):
            finals.append(final)
            anchors.append(g.anchor[start : start + length])
            start += length
    return next_anchors(finals, anchors)


def _truncate(step: Step, max_prompt: int | None, max_response: int | None) -> Step:
    """The step with its prompt's last ``max_prompt`` and its response's first ``max_response`` tokens."""
    prompt = list(step.prompt_token_ids or [])
    response = list(step.response_token_ids or [])
    logprobs = step.response_logprobs
    if max_prompt is not None and len(prompt) > max_prompt:
        prompt = prompt[len(prompt) - max_prompt :]
    if max_response is not None and len(response) > max_response:
        response = response[:max_response]
        logprobs = None if logprobs is None else list(logprobs)[:max_response]
    return step.model_copy(
        update={"prompt_token_ids": prompt, "response_token_ids": response, "response_logprobs": logprobs}
    )


def build_rows_from_columns(
    groups: Sequence[GroupColumns],
    *,
    pad_token_id: int,
    max_prompt_tokens: int | None = None,
    max_response_tokens: int | None = None,
    overlong: Overlong = "mask",
    overlong_penalty: float = 1.0,
) -> BuiltRows:
    """:func:`build_rows` for groups decoded with :func:`~envhub.rollout.queue.codec.decode_columns`.

    Gives the same rows, steps and counts as ``build_rows`` on the decoded records (the same
    limits and ``overlong`` rule), without building records: the token arrays are copied once,
    straight into the padded batch.

    Raises:
        ConfigurationError: no step has token ids (e.g. groups from a scripted policy).
    """
    agents = [a for g in groups for a in g.agent_id]
    steps = StepBatch.from_columns(
        uid=[u for g in groups for u in g.step_uid],
        traj_id=[t for g in groups for t in g.traj_id],
        step_idx=np.concatenate([g.step_idx for g in groups]) if groups else [],
        anchor=[a for g in groups for a in g.anchor],
        reward=np.concatenate([g.reward for g in groups]) if groups else [],
        is_action_valid=np.concatenate([g.is_action_valid for g in groups]) if groups else [],
        agent_id=agents if len(set(agents)) > 1 else None,
        next_anchor=_next_anchors(groups),
    )
    chosen: list[tuple[int, int]] = []  # (group, step within the group) of each row kept
    kept: list[int] = []
    penalised: list[int] = []
    dropped_long = dropped_untok = inexact = truncated = 0
    row = 0
    for g, group in enumerate(groups):
        for i in range(len(group)):
            prompt, response = group.prompt_ids[i], group.response_ids[i]
            if prompt is None or not len(prompt) or response is None:
                dropped_untok += 1
                row += 1
                continue
            long_prompt = max_prompt_tokens is not None and len(prompt) > max_prompt_tokens
            long_response = max_response_tokens is not None and len(response) > max_response_tokens
            if long_prompt or long_response:
                if overlong == "mask":
                    dropped_long += 1
                    row += 1
                    continue
                truncated += 1
                if overlong == "penalise":
                    penalised.append(row)
            inexact += not bool(group.token_exact[i])
            chosen.append((g, i))
            kept.append(row)
            row += 1
    if penalised:
        reward = steps.reward.copy()
        reward[penalised] -= overlong_penalty
        steps = replace(steps, reward=reward)
    if not chosen:
        raise ConfigurationError(
            "No step of these groups carries prompt and response token ids, so there is nothing to train "
            "on. Generate with a model backend (in-process transformers or vLLM), not a "
            "scripted policy.",
            steps=row,
        )
    # Over-limit rows kept by truncate/penalise: the prompt's last and the response's first tokens.
    r_cut = slice(0, max_response_tokens) if max_response_tokens is not None else slice(None)
    prompts: list[Any] = [_last(groups[g].prompt_ids[i], max_prompt_tokens) for g, i in chosen]
    responses: list[Any] = [_first(groups[g].response_ids[i], r_cut) for g, i in chosen]
    n = len(chosen)
    plens = np.fromiter((len(p) for p in prompts), np.int64, n)
    rlens = np.fromiter((len(r) for r in responses), np.int64, n)
    length, width = int((plens + rlens).max()), max(int(rlens.max()), 1)
    input_ids = np.full((n, length), pad_token_id, dtype=np.int64)
    resp_ids = np.full((n, width), pad_token_id, dtype=np.int64)
    rollout_lp = np.zeros((n, width), dtype=np.float32)
    with_logprobs = np.zeros((n,), dtype=bool)
    for r, (g, i) in enumerate(chosen):
        p, t = int(plens[r]), int(rlens[r])
        input_ids[r, :p] = prompts[r]
        input_ids[r, p : p + t] = responses[r]
        resp_ids[r, :t] = responses[r]
        logprobs: Any = groups[g].response_logprobs[i]
        if logprobs is not None and len(logprobs[r_cut]) == t:
            rollout_lp[r, :t] = logprobs[r_cut]
            with_logprobs[r] = True
    attention = np.arange(length)[None, :] < (plens + rlens)[:, None]
    offsets = np.arange(width)
    resp_mask = offsets[None, :] < rlens[:, None]
    resp_index = np.where(resp_mask, plens[:, None] + offsets[None, :], 0)
    versions = np.fromiter((groups[g].step_policy_version[i] for g, i in chosen), np.int64, n)
    rows = RowBatch(
        input_ids=torch.from_numpy(input_ids),
        attention_mask=torch.from_numpy(attention.astype(np.int64)),
        response_index=torch.from_numpy(resp_index.astype(np.int64)),
        response_ids=torch.from_numpy(resp_ids),
        response_mask=torch.from_numpy(resp_mask.astype(np.float32)),
        rollout_logprobs=torch.from_numpy(rollout_lp),
        advantages=torch.zeros(n, dtype=torch.float32),
        policy_version=torch.from_numpy(versions),
        group_index=torch.as_tensor([g for g, _ in chosen], dtype=torch.long),
        has_rollout_logprobs=bool(with_logprobs.all()),
        logprob_rows=torch.from_numpy(with_logprobs),
    )
    return BuiltRows(
        rows, steps, np.asarray(kept, dtype=np.int64), dropped_long, dropped_untok, inexact, truncated
    )


def _last(tokens: Any, limit: int | None) -> Any:
    """The last ``limit`` tokens (all of them with no limit)."""
    return tokens if limit is None or len(tokens) <= limit else tokens[len(tokens) - limit :]


def _first(tokens: Any, cut: slice) -> Any:
    """``tokens[cut]`` (the response's first tokens under ``max_response_tokens``)."""
    return tokens[cut]
