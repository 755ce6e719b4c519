"""Trajectory mode: one token sequence per episode, built by appending turns, never re-tokenised.

Search-R1 and SkyRL train on the whole multi-turn episode as one sequence: the first prompt,
then for every turn the sampled response (in the loss) followed by the env's observation
tokens (out of the loss). The danger is re-tokenisation: rebuilding the sequence from text
after the fact gives ids the model never sampled (verl #6719, slime #117). A
:class:`SequenceBuilder` therefore builds the sequence *while* the episode runs and decides
the prompt ids each turn is sampled from:

1. The engine appends the turn's messages and asks :meth:`SequenceBuilder.prompt` for the ids
   to send (``Prompt(messages, token_ids=ids)``). The builder re-renders the whole
   conversation with the chat template and checks that it extends the tokens so far:

   * the rendered **ids** extend them: the new ids (end of the assistant turn, the env's
     message, the next assistant header) are appended, masked;
   * the ids do not, but the rendered **text** extends the text of the tokens so far (the
     model sampled a non-canonical tokenisation of its answer, common for small models): only
     the new text is encoded and appended, masked; the sampled ids stay as sampled. Counted
     in ``stats.text_extensions``. (``strict_tokens=True`` splits here instead.)
   * neither: the template **rewrote earlier turns** (Qwen3-style templates drop earlier
     ``<think>`` blocks; others normalise whitespace). The current segment ends, and a new
     :class:`~envhub.core.records.TokenSequence` starts at this turn with the freshly rendered
     prompt as its (masked) prompt. Counted in ``stats.splits``.

2. The engine gives the backend's :class:`~envhub.policy.base.Completion` to
   :meth:`SequenceBuilder.add_response`: its ids go in with ``loss_mask`` 1 and their sampling
   logprobs. Only token-exact completions of exactly the prompt that was sent are accepted.

So every row is the exact token stream the model was conditioned on and sampled. For no split
at all, the assistant message the engine appends must be the decoded response
(``tokenizer.decode(completion.token_ids)``), stop strings included.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from envhub.core.errors import ConfigurationError, PolicyError
from envhub.core.records import TokenSequence
from envhub.policy.base import Completion
from envhub.policy.tokenizer import ChatTokenizer

__all__ = ["SequenceBuilder", "SequenceStats"]


@dataclass
class SequenceStats:
    """Counters of one builder (sum them over episodes for the rollout metrics).

    Attributes:
        turns: responses appended.
        splits: turns where the chat template rewrote earlier turns and a new segment began.
        text_extensions: turns where only the text (not the ids) of the re-render extended the
            sequence, so just the new env text was encoded.
    """

    turns: int = 0
    splits: int = 0
    text_extensions: int = 0


@dataclass
class _Segment:
    first_step: int
    prompt_length: int
    token_ids: list[int]
    loss_mask: list[int]
    logprobs: list[float]
    policy_versions: list[int] = field(default_factory=list)


class SequenceBuilder:
    """Builds the :class:`TokenSequence` rows of one trajectory, turn by turn.

    Call :meth:`prompt` then :meth:`add_response` once per turn, and :meth:`finish` at the end.

    Args:
        tokenizer: the served model's tokenizer and chat template.
        uid: the group id the rows carry.
        traj_id: the trajectory id the rows carry.
        strict_tokens: split whenever the re-rendered ids do not extend the sequence, even
            when the text does (see the module docstring).
    """

    def __init__(
        self, tokenizer: ChatTokenizer, *, uid: str, traj_id: str, strict_tokens: bool = False
    ) -> None:
        self.tokenizer = tokenizer
        self.uid = uid
        self.traj_id = traj_id
        self.strict_tokens = strict_tokens
        self.stats = SequenceStats()
        self._done: list[_Segment] = []
        self._current: _Segment | None = None
        self._awaiting: list[int] | None = None  # prompt ids handed out, response not yet added

    @property
    def splits(self) -> int:
        """Turns at which the chat template rewrote history and a new segment began."""
        return self.stats.splits

    def prompt(self, messages: Sequence[Mapping[str, Any]], step_idx: int) -> list[int]:
        """The prompt ids to sample turn ``step_idx`` from: the conversation so far, rendered.

        Args:
            messages: the whole conversation up to this turn (ending with the env's message).
            step_idx: the turn's step index (a new segment records it as ``first_step``).

        Returns:
            The ids to send as ``Prompt.token_ids`` (a copy).

        Raises:
            ConfigurationError: called twice without :meth:`add_response` in between.
        """
        if self._awaiting is not None:
            raise ConfigurationError(
                "SequenceBuilder.prompt() was called twice in a row; add the response of the previous "
                "prompt with add_response() first.",
            )
        rendered = self.tokenizer.render(messages, add_generation_prompt=True)
        current = self._current
        if current is None:
            self._start(rendered, step_idx)
        else:
            delta = self._extension(current.token_ids, rendered, messages)
            if delta is None:
                self.stats.splits += 1
                self._done.append(current)
                self._start(rendered, step_idx)
            else:
                current.token_ids.extend(delta)
                current.loss_mask.extend([0] * len(delta))
                current.logprobs.extend([0.0] * len(delta))
        assert self._current is not None  # set by _start or kept above
        self._awaiting = list(self._current.token_ids)
        return list(self._awaiting)

    def add_response(self, completion: Completion) -> None:
        """Append the sampled response of the last :meth:`prompt` (in the loss).

        Raises:
            ConfigurationError: no prompt is waiting, or the completion is not token-exact or
                has no logprobs (a chat-completions fallback cannot build trajectory rows).
            PolicyError: the backend sampled from other prompt ids than the ones handed out.
        """
        if self._awaiting is None or self._current is None:
            raise ConfigurationError("add_response() needs a prompt() first.")
        if not completion.token_exact or completion.token_ids is None or completion.logprobs is None:
            raise ConfigurationError(
                "Trajectory mode needs token-exact completions with logprobs. Give the HTTP backend the "
                "model's tokenizer (tokenizer_path) and serve with vLLM, or use step mode.",
            )
        if completion.prompt_token_ids is not None and list(completion.prompt_token_ids) != self._awaiting:
            raise PolicyError(
                "The backend sampled from different prompt ids than the ones sent (it added or changed "
                "tokens); trajectory rows would not be what the model saw. Send Prompt.token_ids unchanged.",
                sent=len(self._awaiting),
                echoed=len(completion.prompt_token_ids),
            )
        if len(completion.logprobs) != len(completion.token_ids):
            raise PolicyError(
                f"The completion has {len(completion.token_ids)} ids but {len(completion.logprobs)} logprobs."
            )
        current = self._current
        current.token_ids.extend(completion.token_ids)
        current.loss_mask.extend([1] * len(completion.token_ids))
        current.logprobs.extend(completion.logprobs)
        current.policy_versions.append(completion.policy_version)
        self.stats.turns += 1
        self._awaiting = None

    def finish(self, reward: float = 0.0) -> list[TokenSequence]:
        """The rows of the trajectory; the last segment carries the episode return ``reward``.

        A prompt handed out whose response never came (the episode ended on the env's side) is
        not part of any row: trailing masked tokens train nothing.
        """
        segments = [*self._done, *([self._current] if self._current is not None else [])]
        # A segment without a sampled token trains nothing.
        kept = [(s, end) for s in segments if (end := _last_sampled(s.loss_mask)) is not None]
        return [
            TokenSequence(
                uid=self.uid,
                traj_id=self.traj_id,
                segment=index,
                first_step=segment.first_step,
                prompt_length=segment.prompt_length,
                token_ids=segment.token_ids[: end + 1],
                loss_mask=segment.loss_mask[: end + 1],
                logprobs=segment.logprobs[: end + 1],
                policy_versions=list(segment.policy_versions),
                reward=reward if index == len(kept) - 1 else 0.0,
            )
            for index, (segment, end) in enumerate(kept)
        ]

    def _start(self, rendered: list[int], step_idx: int) -> None:
        self._current = _Segment(
            first_step=step_idx,
            prompt_length=len(rendered),
            token_ids=list(rendered),
            loss_mask=[0] * len(rendered),
            logprobs=[0.0] * len(rendered),
        )

    def _extension(
        self, tokens: list[int], rendered: list[int], messages: Sequence[Mapping[str, Any]]
    ) -> list[int] | None:
        """The ids that extend ``tokens`` to this turn's prompt, or None where history was rewritten."""
        if rendered[: len(tokens)] == tokens:
            return rendered[len(tokens) :]
        if self.strict_tokens:
            return None
        text = self.tokenizer.render_text(messages, add_generation_prompt=True)
        so_far = self.tokenizer.decode(tokens, skip_special_tokens=False)
        if not text.startswith(so_far):
            return None
        self.stats.text_extensions += 1
        return self.tokenizer.encode(text[len(so_far) :])


def _last_sampled(mask: list[int]) -> int | None:
    for i in range(len(mask) - 1, -1, -1):
        if mask[i]:
            return i
    return None
