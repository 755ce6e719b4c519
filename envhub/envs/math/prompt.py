"""Prompts for Math (contract: :mod:`envhub.agent.prompt`).

One step: the problem, then the model reasons and puts its final answer in ``\\boxed{}``, the
only place the env reads it (:mod:`envhub.envs.math.answer`). The authors' math prompt is the
problem alone ("Math problem: ..."), with the ``\\boxed{}`` instruction in their solver's role
prompt; the wording here is envhub's own.
"""

from __future__ import annotations

__all__ = ["FIRST_STEP", "HISTORY_LENGTH", "MEMORY_STYLE", "WITH_HISTORY", "extract_task"]

MEMORY_STYLE = "step"
HISTORY_LENGTH = 1  # one step per episode: there is no history to show

_ANSWER_FORMAT = (
    "Work it out step by step. Then give the final answer, a number, inside \\boxed{{}}, for "
    "example \\boxed{{42}}."
)

FIRST_STEP = "Solve this math word problem.\nProblem: {task}\n\n" + _ANSWER_FORMAT

# The env ends every episode at its first step; this is what a longer step limit would show.
WITH_HISTORY = (
    "Solve this math word problem.\nProblem: {task}\n\nYour earlier attempt(s):\n{history}\n\n"
    + _ANSWER_FORMAT
)


def extract_task(observation: str) -> str:
    """The problem: the env's first observation, stripped."""
    return observation.strip()
