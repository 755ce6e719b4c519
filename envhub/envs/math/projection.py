"""Model text -> Math action: the whole solution, valid when it states a final answer.

The env reads the answer itself (:func:`envhub.envs.math.answer.extract_final_answer`), so the
action is the model's text unchanged, as the authors' math env receives the response; the step
is valid when that text has a ``\\boxed{…}`` answer the env can read (the authors' solver
projection's rule). Invalid steps still go to the env, which scores them 0.
"""

from __future__ import annotations

from envhub.agent.projection import Projection, as_text
from envhub.envs.math.answer import extract_final_answer

__all__ = ["project_boxed"]


def project_boxed(output: object) -> Projection:
    """The text as the action; valid with a readable ``\\boxed{}`` answer. Never raises."""
    text = as_text(output)
    if extract_final_answer(text) is None:
        return Projection(
            action=text, is_valid=False, reason="no final answer in \\boxed{...}", kind="answer"
        )
    return Projection(action=text, is_valid=True, kind="answer")
