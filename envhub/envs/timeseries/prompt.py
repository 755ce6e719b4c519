"""Prompts for the time-series env (contract: :mod:`envhub.agent.prompt`).

The task statement and the series summary arrive in the first observation only, so every
later prompt repeats them as the task; the history window then shows the tool calls and their
results. The model reasons in ``<think>`` tags and writes one command in ``<action>`` tags
(projection rule ``think_action``).
"""

from __future__ import annotations

__all__ = ["FIRST_STEP", "HISTORY_IMAGE", "HISTORY_LENGTH", "MEMORY_STYLE", "WITH_HISTORY", "extract_task"]

MEMORY_STYLE = "step"
HISTORY_LENGTH = 4  # tool results are the evidence: keep more of them than ALFWorld's 2

_TOOLS = (
    "Commands: stats[a:b] (mean, std, min/max, quantiles), zscore[a:b] (the 5 most extreme points), "
    "fft[a:b] (dominant periods), zoom[a:b] (the values, at most 200 shown), and the final "
    "answer[<class>; a:b, c:d] with half-open index intervals (answer[normal] when there is no anomaly)."
)
_ANSWER_FORMAT = (
    "Reason step by step inside <think> </think> tags, then write exactly one command inside "
    "<action> </action> tags."
)

FIRST_STEP = "You are a time-series analyst.\n{observation}\n\n" + _TOOLS + "\n" + _ANSWER_FORMAT

WITH_HISTORY = (
    "You are a time-series analyst.\n{task}\n\n"
    "You have run {step_count} command(s). The last {history_length}, with their results:\n{history}\n"
    "This is step {current_step}. Latest result: {observation}\n\n" + _TOOLS + "\n" + _ANSWER_FORMAT
)

HISTORY_IMAGE = (
    "You are a time-series analyst.\n{task}\n\n"
    "The image above lists the {history_length} command(s) you ran, one per line, with their results.\n"
    "This is step {current_step}. Latest result: {observation}\n\n" + _TOOLS + "\n" + _ANSWER_FORMAT + " "
    "Finally, choose how much to shrink the next history image: a factor above 1.0 inside "
    "<compression> </compression> tags, for example <compression>1.2</compression>."
)


def extract_task(observation: str) -> str:
    """The task statement and series summary (the whole first observation)."""
    return observation.strip()
