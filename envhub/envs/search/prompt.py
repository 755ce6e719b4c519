"""Prompts for search QA: the structure of verl-agent's search prompt, in envhub's own words.

Read by :func:`envhub.agent.prompt.family_template` (the contract is documented there). The
history lists earlier ``<search>`` queries with the ``<information>`` they returned; the model
reasons in ``<think>`` tags, then either searches or answers (projection rule ``search``).
"""

from __future__ import annotations

__all__ = [
    "FIRST_STEP",
    "HISTORY_IMAGE",
    "HISTORY_IMAGE_STYLE",
    "HISTORY_LENGTH",
    "MEMORY_STYLE",
    "WITH_HISTORY",
    "extract_task",
]

MEMORY_STYLE = "search"
HISTORY_IMAGE_STYLE = "ocr-search"  # AgentOCR's search history lines
HISTORY_LENGTH = 4  # verl-agent's env.history_length for search

_ANSWER_FORMAT = (
    "Reason first, inside <think> </think> tags. Then do exactly one of these two things:\n"
    "(1) if you still miss some knowledge, search for it: <search> your query </search>; the "
    "results come back inside <information> </information>;\n"
    "(2) if you know the answer, give it briefly inside <answer> </answer>, "
    "for example <answer>Paris</answer>."
)

FIRST_STEP = (
    "You are an expert agent who answers questions step by step. Your question: {task}\n\n" + _ANSWER_FORMAT
)

WITH_HISTORY = (
    "You are an expert agent who answers questions step by step. Your question: {task}\n"
    "You have taken {step_count} step(s) so far. Your last {history_length} search(es), each "
    "query inside <search> </search> and its results inside <information> </information>:\n"
    "{history}\n\n"
    "This is step {current_step}. " + _ANSWER_FORMAT
)

HISTORY_IMAGE = (
    "You are an expert agent who answers questions step by step. Your question: {task}\n"
    "The image above shows your last {history_length} search(es): each query inside "
    "<search> </search> and its results inside <information> </information>.\n\n"
    "This is step {current_step}. " + _ANSWER_FORMAT + "\n"
    "Finally, choose how much to shrink the next history image: a factor above 1.0 inside "
    "<compression> </compression> tags, for example <compression>1.1</compression>."
)


def extract_task(observation: str) -> str:
    """The question: the env's first observation, stripped."""
    return observation.strip()
