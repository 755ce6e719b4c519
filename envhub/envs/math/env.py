"""The Math environment: solve a word problem, state the final answer in ``\\boxed{}``."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import ClassVar

from envhub.core.env import AgentEnv, Outcome
from envhub.envs.math.answer import answers_equal, extract_final_answer
from envhub.envs.math.data import SPLITS, MathDataset, MathTask, load_dataset

__all__ = ["NO_ANSWER_FEEDBACK", "MathEnv", "breakdown"]

#: The observation after a solution without a readable final answer.
NO_ANSWER_FEEDBACK = "No final answer found: it goes inside \\boxed{}, for example \\boxed{42}."


class MathEnv(AgentEnv):
    """Solve an arithmetic word problem in one step; the final answer is read from ``\\boxed{}``.

    ## Description

    The math env of Dr. MAS (its math orchestra's env): the agent sees a problem and answers
    once. The default tasks are envhub's own generated arithmetic word problems (one to three
    operations, integer answers; 1,000 train and 200 test problems, always the same); GSM8K,
    or any data in its ``{"question", "answer"}`` jsonl format, loads from a directory.

    ## Action Space

    Any Unicode string (:class:`~envhub.core.spaces.UnicodeText`): the solution. Its final
    answer is the argument of its last ``\\boxed{…}``, read after the first ``</think>`` when
    there is one (:mod:`envhub.envs.math.answer`). A solution without one is invalid.

    ## Observation Space

    Text. After ``reset``: the problem. After the answer: the empty string. After a step
    without a readable final answer: :data:`NO_ANSWER_FEEDBACK`.

    ## Rewards

    1.0 when the final answer's number equals the gold's (``42``, ``42.0``, ``\\$42`` and
    ``x = 42`` all answer 42), else 0.0, as the authors' reward (``correct_reward`` 1, every
    other case 0).

    ## Starting State

    The problem of ``options["task_id"]``, or one drawn with ``self.np_random`` from the split
    (``options["split"]``, default ``train``).

    ## Episode End

    Terminated at the first step with a readable final answer, right or wrong. A step without
    one is an invalid action: reward 0, the episode goes on, and gymnasium's ``TimeLimit`` ends
    it at ``max_episode_steps`` (1 as registered, so every episode is one step, as in the
    authors' env, which is done after one step; it scores an answerless step 0 too). The env
    itself always returns ``truncated=False``. Stepping after the end repeats the final
    observation with reward 0 and ``is_action_valid=False``.

    ## Information

    Every ``info`` has ``anchor`` (the problem), ``admissible_actions`` (``None``: free text),
    ``won`` (the answer is right), ``task_id``, ``task_score`` (the reward), ``is_action_valid``,
    plus ``data_source`` and ``kind`` (the generator's template, ``""`` for real data); the step
    adds ``answer`` (the final answer read, ``None`` without one) and ``gold``.

    ## Arguments

    | argument        | default  | meaning                                                       |
    |-----------------|----------|---------------------------------------------------------------|
    | ``data_dir``    | ``None`` | GSM8K-format directory; ``None``: ``ENVHUB_MATH_DATA_DIR``,   |
    |                 |          | else the generated problems                                   |
    | ``render_mode`` | ``None`` | ``"ansi"`` or ``None``                                        |

    >>> import gymnasium, envhub
    >>> env = gymnasium.make("envhub/Math-v0")
    >>> obs, info = env.reset(options={"task_id": "test-00000"})
    >>> obs.endswith("?")
    True
    >>> obs, reward, terminated, truncated, info = env.step("I think it is \\\\boxed{-1}.")
    >>> reward, terminated, info["answer"]
    (0.0, True, '-1')

    ## Reference

    Dr. MAS (``langfengQ/DrMAS`` @19c632b): ``agent_system/environments/env_package/math/``
    (``envs.py``: one step, then done; ``math_reward.py`` and ``utils.py``: the answer after
    ``</think>``, the last ``\\boxed{}``, graded against the gold). GSM8K's file format
    (``openai/grade-school-math``).

    ## Version History

    * v0: initial version.
    """

    splits: ClassVar[tuple[str, ...]] = SPLITS
    default_split: ClassVar[str] = "train"

    def __init__(self, *, data_dir: str | Path | None = None, render_mode: str | None = None) -> None:
        super().__init__(render_mode=render_mode)
        # Instances in one process share the loaded problems (data.load_dataset caches them).
        self._dataset: MathDataset = load_dataset(data_dir)
        self._tasks = self._dataset.index()
        self._task: MathTask | None = None

    # -- AgentEnv hooks -----------------------------------------------------------------------

    def _task_ids(self, split: str) -> Sequence[str]:
        return [t.id for t in self._dataset.splits[split]]

    def has_task(self, task_id: str) -> bool:
        return task_id in self._tasks

    def _reset_task(self, task_id: str) -> Outcome:
        self._task = self._tasks[task_id]
        question = self._task.question
        return Outcome(observation=question, anchor=question, extra=self._extra())

    def _step(self, action: str) -> Outcome:
        assert self._task is not None  # set by reset; the base class refuses step() before it
        answer = extract_final_answer(action)
        won = answers_equal(answer, self._task.answer)
        reward = 1.0 if won else 0.0
        return Outcome(
            observation="" if answer is not None else NO_ANSWER_FEEDBACK,
            anchor=self._task.question,
            reward=reward,
            terminated=answer is not None,
            won=won,
            task_score=reward,
            is_action_valid=answer is not None,
            extra={**self._extra(), "answer": answer, "gold": self._task.answer},
        )

    def _extra(self) -> dict[str, str]:
        assert self._task is not None
        return {"data_source": self._task.data_source, "kind": self._task.kind}

    @property
    def task(self) -> MathTask | None:
        """The current problem (``None`` before the first reset)."""
        return self._task


def breakdown(task_id: str, task_score: float) -> dict[str, str]:
    """``envhub eval``'s breakdown of a Math episode: the problem's template (or its source).

    Read from the dataset this install uses (``ENVHUB_MATH_DATA_DIR`` or the generated one).
    """
    task = load_dataset().index().get(task_id)
    if task is None:
        return {"kind": "unknown"}
    return {"kind": task.kind or task.data_source}
