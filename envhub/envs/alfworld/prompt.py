"""Prompts for ALFWorld: the structure of verl-agent's, in envhub's own words.

Read by :func:`envhub.agent.prompt.family_template` (the contract is documented there). The
first step shows the observation and the admissible actions; later steps add the task, the
number of steps taken and the last ``HISTORY_LENGTH`` observation/action pairs. The model
reasons in ``<think>`` tags and answers in ``<action>`` tags (projection rule ``alfworld``).
"""

from __future__ import annotations

__all__ = ["FIRST_STEP", "HISTORY_IMAGE", "HISTORY_LENGTH", "MEMORY_STYLE", "WITH_HISTORY", "extract_task"]

MEMORY_STYLE = "step"
HISTORY_LENGTH = 2  # verl-agent's env.history_length for ALFWorld

_ANSWER_FORMAT = (
    "First think the situation through, step by step, inside <think> </think> tags. "
    "Then pick exactly one of the actions listed above and write it inside <action> </action> tags."
)

FIRST_STEP = (
    "You are an expert household agent in a text-based ALFRED environment (ALFWorld).\n"
    "What you observe now: {observation}\n"
    "The actions available to you now are:\n [{admissible_actions}].\n\n"
    "Choose your next move. " + _ANSWER_FORMAT
)

WITH_HISTORY = (
    "You are an expert household agent in a text-based ALFRED environment (ALFWorld). "
    "Your task is: {task}\n"
    "You have taken {step_count} step(s) so far. Here are your last {history_length} "
    "observation(s) and the action you took after each:\n{history}\n"
    "This is step {current_step}. What you observe now: {observation}\n"
    "The actions available to you now are:\n [{admissible_actions}].\n\n"
    "Choose your next move. " + _ANSWER_FORMAT
)

# AgentOCR: the image before this text shows every earlier step, one line each.
HISTORY_IMAGE = (
    "You are an expert household agent in a text-based ALFRED environment (ALFWorld). "
    "Your task is: {task}\n"
    "The image above lists the {history_length} step(s) you have taken, one per line: what you "
    "observed ([Observation]) and what you did ([Action]).\n"
    "This is step {current_step}. What you observe now: {observation}\n"
    "The actions available to you now are:\n [{admissible_actions}].\n\n"
    "Choose your next move. " + _ANSWER_FORMAT + " "
    "Finally, choose how much to shrink the next history image: a factor above 1.0 inside "
    "<compression> </compression> tags, for example <compression>1.1</compression>."
)


def extract_task(observation: str) -> str:
    """The goal from ALFWorld's first observation: the text after ``Your task is to: ``."""
    marker = "Your task is to: "
    at = observation.find(marker)
    return observation[at + len(marker) :].strip() if at != -1 else ""
