"""Trajectory mode: turns appended into TokenSequence rows, split (not re-tokenised) on rewritten history."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest
import torch
from transformers import AutoModelForCausalLM

from envhub.core.errors import ConfigurationError, PolicyError
from envhub.policy.base import Completion, Prompt, SamplingParams
from envhub.policy.sampling import processed_logprobs
from envhub.policy.tiny import build_tiny_model
from envhub.policy.tokenizer import ChatTokenizer
from envhub.policy.transformers_backend import TransformersBackend
from envhub.rollout.sequences import SequenceBuilder

# ChatML that drops the <think>...</think> part of earlier assistant turns, as Qwen3's template
# does: the rendered history is not the history that was sampled.
THINK_STRIPPING_TEMPLATE = (
    "{%- for message in messages -%}"
    "{{- '<|im_start|>' + message['role'] + '\\n' -}}"
    "{%- if message['role'] == 'assistant' and '</think>' in message['content'] -%}"
    "{{- message['content'].split('</think>')[-1].lstrip() -}}"
    "{%- else -%}{{- message['content'] -}}{%- endif -%}"
    "{{- '<|im_end|>\\n' -}}"
    "{%- endfor -%}"
    "{%- if add_generation_prompt -%}{{- '<|im_start|>assistant\\n' -}}{%- endif -%}"
)
SYSTEM = {"role": "system", "content": "You are a household agent."}


@pytest.fixture(scope="module")
def model_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_tiny_model(tmp_path_factory.mktemp("seq") / "model", seed=0)


@pytest.fixture(scope="module")
def chatml(model_dir: Path) -> ChatTokenizer:
    return ChatTokenizer(model_dir)


@pytest.fixture(scope="module")
def stripping(model_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> ChatTokenizer:
    out = tmp_path_factory.mktemp("think-stripping")
    for name in ("tokenizer.json", "tokenizer_config.json", "generation_config.json", "config.json"):
        shutil.copy(model_dir / name, out / name)
    (out / "chat_template.jinja").write_text(THINK_STRIPPING_TEMPLATE)
    return ChatTokenizer(out)


def _completion(tokenizer: ChatTokenizer, prompt_ids: list[int], text: str, version: int = 0) -> Completion:
    """What a backend returns for ``text`` sampled with its canonical ids and an end of turn."""
    ids = [*tokenizer.encode(text), tokenizer.eos_token_ids[0]]
    return Completion(
        text=text,
        prompt_token_ids=prompt_ids,
        token_ids=ids,
        logprobs=[-0.25 - 0.01 * i for i in range(len(ids))],
        finish_reason="stop",
        policy_version=version,
    )


def _play(builder: SequenceBuilder, replies: list[str], observations: list[str]) -> list[Completion]:
    """Drive the builder through scripted turns; returns the completions, in order."""
    messages: list[dict[str, Any]] = [SYSTEM, {"role": "user", "content": observations[0]}]
    completions = []
    for step, reply in enumerate(replies):
        prompt = builder.prompt(messages, step)
        completion = _completion(builder.tokenizer, prompt, reply, version=step)
        builder.add_response(completion)
        completions.append(completion)
        messages += [
            {"role": "assistant", "content": builder.tokenizer.decode(completion.token_ids or [])},
            {"role": "user", "content": observations[step + 1]},
        ]
    return completions


def _sampled_spans(row: Any) -> list[list[int]]:
    spans: list[list[int]] = []
    for token, mask, previous in zip(row.token_ids, row.loss_mask, [0, *row.loss_mask], strict=False):
        if mask and not previous:
            spans.append([])
        if mask:
            spans[-1].append(token)
    return spans


REPLIES = [
    "<think>The apple may be in the fridge.</think><action>go to fridge 1</action>",
    "<action>open fridge 1</action>",
    "<action>take apple 1 from fridge 1</action>",
]
OBSERVATIONS = [
    "You see a fridge 1 and a cabinet 1.",
    "You arrive at the fridge 1. The fridge 1 is closed.",
    "You open the fridge 1. In it, you see a apple 1.",
    "You pick up the apple 1.",
]


def test_a_history_rewriting_template_splits_the_trajectory_and_counts_it(stripping: ChatTokenizer) -> None:
    builder = SequenceBuilder(stripping, uid="g", traj_id="t")
    completions = _play(builder, REPLIES, OBSERVATIONS)
    rows = builder.finish(reward=1.0)
    assert builder.splits == 1 and builder.stats.turns == 3
    assert [(r.segment, r.first_step) for r in rows] == [(0, 0), (1, 1)]
    # Never re-tokenised: each row's sampled spans are the sampled ids, verbatim.
    assert _sampled_spans(rows[0]) == [completions[0].token_ids]
    assert _sampled_spans(rows[1]) == [completions[1].token_ids, completions[2].token_ids]
    # The new segment starts from the template's own rendering of the turn-1 conversation.
    second_prompt = completions[1].prompt_token_ids or []
    assert rows[1].token_ids[: rows[1].prompt_length] == second_prompt
    assert "The apple may be in the fridge" not in stripping.decode(second_prompt)
    assert [r.reward for r in rows] == [0.0, 1.0]
    assert rows[1].policy_versions == [1, 2]


def test_chatml_keeps_history_so_the_same_episode_stays_one_row(chatml: ChatTokenizer) -> None:
    builder = SequenceBuilder(chatml, uid="g", traj_id="t")
    completions = _play(builder, REPLIES, OBSERVATIONS)
    [row] = builder.finish(reward=1.0)
    assert builder.splits == 0 and builder.stats.text_extensions == 0
    assert _sampled_spans(row) == [c.token_ids for c in completions]
    assert row.token_ids[: row.prompt_length] == completions[0].prompt_token_ids
    for completion in completions:  # every turn was sampled from a prefix of the row
        prompt = completion.prompt_token_ids or []
        assert row.token_ids[: len(prompt)] == prompt
    sampled = [lp for c in completions for lp in c.logprobs or []]
    assert [lp for lp, m in zip(row.logprobs, row.loss_mask, strict=True) if m] == sampled
    assert all(lp == 0.0 for lp, m in zip(row.logprobs, row.loss_mask, strict=True) if not m)
    # The env's text sits in the row, out of the loss.
    masked = [t for t, m in zip(row.token_ids, row.loss_mask, strict=True) if not m]
    assert OBSERVATIONS[2] in chatml.decode(masked)


async def test_sampled_turns_of_the_tiny_model_make_a_row_the_model_scores_identically(
    model_dir: Path, chatml: ChatTokenizer
) -> None:
    """The real path: a model's own (non-canonical) tokenisations, no split, logprobs reproducible."""
    backend = TransformersBackend(model_dir, chatml)
    builder = SequenceBuilder(chatml, uid="g", traj_id="t")
    messages: list[dict[str, Any]] = [SYSTEM, {"role": "user", "content": OBSERVATIONS[0]}]
    try:
        for step in range(3):
            ids = builder.prompt(messages, step)
            sampling = SamplingParams(temperature=0.8, max_tokens=10, seed=step)
            [completion] = await backend.generate([Prompt(messages=messages, token_ids=ids)], sampling)
            builder.add_response(completion)
            messages += [
                {"role": "assistant", "content": chatml.decode(completion.token_ids or [])},
                {"role": "user", "content": OBSERVATIONS[step + 1]},
            ]
    finally:
        await backend.aclose()
    [row] = builder.finish()
    assert builder.splits == 0 and sum(row.loss_mask) == 30
    model = AutoModelForCausalLM.from_pretrained(model_dir, dtype=torch.float32)
    with torch.no_grad():
        logits = model(torch.tensor([row.token_ids])).logits[0, :-1]
    scored = processed_logprobs(logits, 0.8)[
        torch.arange(len(row.token_ids) - 1), torch.tensor(row.token_ids[1:])
    ]
    mask = torch.tensor(row.loss_mask[1:], dtype=torch.bool)
    assert (scored[mask] - torch.tensor(row.logprobs[1:])[mask]).abs().max() < 1e-3


def _char_ids(tokenizer: ChatTokenizer, text: str) -> list[int]:
    """A valid but non-canonical tokenisation: one token per character (ASCII)."""
    return [i for ch in text for i in tokenizer.encode(ch)]


def test_non_canonical_sampled_ids_extend_by_text_or_split_when_strict(chatml: ChatTokenizer) -> None:
    text = "go to fridge 1"
    assert _char_ids(chatml, text) != chatml.encode(text)
    for strict, splits, extensions in ((False, 0, 1), (True, 1, 0)):
        builder = SequenceBuilder(chatml, uid="g", traj_id="t", strict_tokens=strict)
        messages: list[dict[str, Any]] = [SYSTEM, {"role": "user", "content": "obs 0"}]
        prompt = builder.prompt(messages, 0)
        ids = [*_char_ids(chatml, text), chatml.eos_token_ids[0]]
        builder.add_response(
            Completion(text, prompt, ids, [-1.0] * len(ids), finish_reason="stop", policy_version=0)
        )
        messages += [{"role": "assistant", "content": text}, {"role": "user", "content": "obs 1"}]
        next_prompt = builder.prompt(messages, 1)
        assert (builder.stats.splits, builder.stats.text_extensions) == (splits, extensions)
        if not strict:  # the sampled ids stay; only the new text was encoded
            assert next_prompt[: len(prompt) + len(ids)] == prompt + ids
            assert chatml.decode(next_prompt, skip_special_tokens=False) == chatml.render_text(messages)


def test_a_prompt_without_response_is_not_part_of_any_row(chatml: ChatTokenizer) -> None:
    builder = SequenceBuilder(chatml, uid="g", traj_id="t")
    [completion] = _play(builder, REPLIES[:1], OBSERVATIONS)
    sampled = completion.token_ids or []
    late = [SYSTEM, {"role": "user", "content": OBSERVATIONS[0]}]
    late += [{"role": "assistant", "content": chatml.decode(sampled)}, {"role": "user", "content": "late"}]
    builder.prompt(late, 1)  # handed out, but the episode ended before the policy answered
    [row] = builder.finish(reward=0.5)
    assert row.loss_mask[-1] == 1 and row.token_ids[-len(sampled) :] == sampled
    assert row.reward == 0.5


def test_the_episode_return_goes_to_the_last_row_that_has_samples(stripping: ChatTokenizer) -> None:
    builder = SequenceBuilder(stripping, uid="g", traj_id="t")
    _play(builder, REPLIES[:1], OBSERVATIONS)
    history = [SYSTEM, {"role": "user", "content": "a different conversation"}]
    builder.prompt(history, 1)  # a split whose segment never gets a response
    rows = builder.finish(reward=2.0)
    assert builder.splits == 1 and len(rows) == 1 and rows[0].reward == 2.0


def test_misuse_is_refused_with_a_clear_error(chatml: ChatTokenizer) -> None:
    builder = SequenceBuilder(chatml, uid="g", traj_id="t")
    messages = [SYSTEM, {"role": "user", "content": "obs"}]
    with pytest.raises(ConfigurationError, match="prompt\\(\\) first"):
        builder.add_response(_completion(chatml, [], "x"))
    prompt = builder.prompt(messages, 0)
    with pytest.raises(ConfigurationError, match="twice"):
        builder.prompt(messages, 0)
    inexact = Completion("x", prompt, [5], None, finish_reason="stop", policy_version=0, token_exact=False)
    with pytest.raises(ConfigurationError, match="token-exact"):
        builder.add_response(inexact)
    with pytest.raises(PolicyError, match="different prompt ids"):
        builder.add_response(_completion(chatml, [*prompt, 7], "x"))
    assert builder.finish() == []  # nothing was sampled
