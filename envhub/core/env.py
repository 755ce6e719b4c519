"""The environment contract every envhub env implements.

:class:`AgentEnv` is a :class:`gymnasium.Env` with text observations and text actions. A
family subclasses it and implements four hooks (``_task_ids``, ``_reset_task``, ``_step``
and, optionally, ``_close``); the base class owns what must be identical in every env:

* task selection: ``options={"task_id": ...}`` picks a task; without it the task is drawn
  from ``self.np_random`` over the default split, so ``reset(seed=s)`` is reproducible;
* action coercion: a non-string action is turned into a string, never rejected;
* the ``info`` contract: every ``info`` carries ``anchor``, ``admissible_actions``, ``won``,
  ``task_id``, ``task_score`` and ``is_action_valid``;
* stepping after the episode ended: the env answers with the final observation again,
  reward 0, ``terminated=True``, ``is_action_valid=False`` and ``info["error"]`` saying to
  call reset; it never raises, so a batch that over-steps loses nothing;
* ``render_mode="ansi"``: :meth:`render` returns the task id, step and last observation.

Truncation is not the env's job: registration sets ``max_episode_steps`` and gymnasium's
``TimeLimit`` wrapper applies it (see :mod:`envhub.core.registry`).
"""

from __future__ import annotations

from abc import abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar, SupportsFloat

import gymnasium

from envhub.core.errors import ConfigurationError, ResetNeededError, UnknownTaskError
from envhub.core.spaces import UnicodeText

__all__ = ["INFO_KEYS", "MAX_ACTION_CHARS", "AgentEnv", "Outcome"]

#: The keys every env puts in every ``info`` dict.
INFO_KEYS = ("anchor", "admissible_actions", "won", "task_id", "task_score", "is_action_valid")

#: Longest action string an env looks at; longer actions are cut to this before parsing.
MAX_ACTION_CHARS = 1 << 16


@dataclass
class Outcome:
    """What a family's ``_step`` (or ``_reset_task``) returns; the base class fills the rest.

    Attributes:
        observation: the text the agent sees next.
        anchor: a history-free canonical string of the state (GiGPO/HGPO group by it).
        reward: the env reward of this step.
        terminated: the episode reached a terminal state.
        won: whether the task is accomplished.
        task_score: the env's raw score where it has one (else ``float(won)``).
        is_action_valid: whether the action was understood and applicable.
        admissible_actions: the actions available now, or ``None`` if the env has no list.
        extra: further ``info`` keys specific to the family.
    """

    observation: str
    anchor: str | None = None
    reward: float = 0.0
    terminated: bool = False
    won: bool = False
    task_score: float | None = None
    is_action_valid: bool = True
    admissible_actions: list[str] | None = None
    extra: dict[str, Any] = field(default_factory=dict)


class AgentEnv(gymnasium.Env[str, str]):
    """Base class of every envhub environment (see the module docstring for the contract).

    Subclasses set ``splits`` and ``default_split`` and implement the hooks; everything else
    envhub knows about an env (its family, prompt, projection) is on its catalogue entry.
    """

    metadata = {"render_modes": ["ansi"], "render_fps": 1}  # noqa: RUF012  (gymnasium declares it per instance)
    splits: ClassVar[tuple[str, ...]] = ("train", "test")
    default_split: ClassVar[str] = "train"

    def __init__(self, *, render_mode: str | None = None, max_observation_chars: int = 1 << 20) -> None:
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            raise ConfigurationError(
                f"render_mode={render_mode!r} is not supported; "
                f"use one of {self.metadata['render_modes']} or None.",
                render_mode=render_mode,
            )
        self.render_mode = render_mode
        self.observation_space = UnicodeText(max_observation_chars)
        self.action_space = UnicodeText(MAX_ACTION_CHARS)
        self._task_id: str | None = None
        self._last: Outcome | None = None
        self._done = False
        self._steps = 0

    # -- hooks for families ------------------------------------------------------------------

    @abstractmethod
    def _task_ids(self, split: str) -> Sequence[str]:
        """All task ids of ``split`` (a known split), in a stable order."""

    @abstractmethod
    def _reset_task(self, task_id: str) -> Outcome:
        """Start ``task_id`` from its initial state and describe it."""

    @abstractmethod
    def _step(self, action: str) -> Outcome:
        """Apply ``action`` (already a ``str``). Must not raise on any string."""

    def _close(self) -> None:
        """Release resources held by the family (engines, files)."""

    # -- public API -------------------------------------------------------------------------

    @property
    def task_id(self) -> str | None:
        """The task of the current episode (``None`` before the first reset)."""
        return self._task_id

    @property
    def step_count(self) -> int:
        """Actions taken in the current episode."""
        return self._steps

    def task_ids(self, split: str | None = None) -> Sequence[str]:
        """The task ids of ``split`` (default: the env's default split), in a stable order.

        Raises:
            ConfigurationError: ``split`` is not one of :attr:`splits`.
        """
        split = self.default_split if split is None else split
        if split not in self.splits:
            raise ConfigurationError(
                f"{type(self).__name__} has no split {split!r}; use one of {list(self.splits)}.",
                split=split,
                splits=list(self.splits),
            )
        return self._task_ids(split)

    def has_task(self, task_id: str) -> bool:
        """Whether ``task_id`` belongs to any split. Families may override with a faster test."""
        return any(task_id in self._task_ids(split) for split in self.splits)

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[str, dict[str, Any]]:
        """Start an episode.

        Args:
            seed: seeds ``self.np_random``; when no task id is given, the task is drawn with it.
            options: ``{"task_id": id}`` picks the task; ``{"split": name}`` picks the split to draw from.

        Returns:
            The first observation and the ``info`` dict (see :data:`INFO_KEYS`).

        Raises:
            UnknownTaskError: the task id is not one of the env's tasks.
        """
        super().reset(seed=seed)
        options = dict(options or {})
        task_id = options.get("task_id")
        if task_id is None:
            ids = self.task_ids(options.get("split"))
            if len(ids) == 0:
                raise ConfigurationError(
                    f"{type(self).__name__} has no tasks in that split.", split=options.get("split")
                )
            task_id = ids[int(self.np_random.integers(len(ids)))]
        task_id = str(task_id)
        if not self.has_task(task_id):
            examples = self._task_ids(self.default_split)
            raise UnknownTaskError(
                task_id,
                env=type(self).__name__,
                splits=self.splits,
                examples=examples[: min(3, len(examples))],
            )
        self._task_id = task_id
        self._steps = 0
        self._done = False
        outcome = self._reset_task(task_id)
        self._last = outcome
        return outcome.observation, self._info(outcome)

    def step(self, action: Any) -> tuple[str, SupportsFloat, bool, bool, dict[str, Any]]:
        """Apply one text action. Never raises on the action's content.

        Returns:
            ``(observation, reward, terminated, truncated, info)``; ``truncated`` is always
            ``False`` here because ``TimeLimit`` applies the step limit.

        Raises:
            ResetNeededError: no episode was started.
        """
        if self._last is None:
            raise ResetNeededError(type(self).__name__)
        if self._done:
            # Defined behaviour after the end: repeat the final state, score nothing, say why.
            final = self._last
            info = self._info(final)
            info.update(
                is_action_valid=False, error="The episode has ended; call reset() to start a new one."
            )
            return final.observation, 0.0, True, False, info
        outcome = self._step(_as_text(action))
        self._steps += 1
        self._last = outcome
        self._done = outcome.terminated
        return (
            outcome.observation,
            float(outcome.reward),
            bool(outcome.terminated),
            False,
            self._info(outcome),
        )

    def render(self) -> str | None:
        """With ``render_mode="ansi"``, the task id, step count and last observation as text."""
        if self.render_mode is None:
            gymnasium.logger.warn(
                "render() was called without a render mode; create the env with render_mode='ansi'."
            )
            return None
        if self._last is None:
            return f"[{type(self).__name__}] not reset yet"
        return f"[{type(self).__name__} task={self._task_id} step={self._steps}]\n{self._last.observation}"

    def close(self) -> None:
        self._close()
        super().close()

    # -- helpers ---------------------------------------------------------------------------

    def _info(self, outcome: Outcome) -> dict[str, Any]:
        info: dict[str, Any] = dict(outcome.extra)
        info.update(
            anchor=outcome.observation if outcome.anchor is None else outcome.anchor,
            admissible_actions=None
            if outcome.admissible_actions is None
            else list(outcome.admissible_actions),
            won=bool(outcome.won),
            task_id=self._task_id,
            task_score=float(outcome.won) if outcome.task_score is None else float(outcome.task_score),
            is_action_valid=bool(outcome.is_action_valid),
        )
        return info


def _as_text(action: Any) -> str:
    """Coerce any action to a bounded ``str`` without raising."""
    if isinstance(action, str):
        text = action
    elif isinstance(action, bytes | bytearray):
        text = bytes(action).decode("utf-8", errors="replace")
    elif action is None:
        text = ""
    else:
        try:
            text = str(action)
        except Exception:  # an object whose __str__ raises is still just a bad action
            text = ""
    return text[:MAX_ACTION_CHARS]
