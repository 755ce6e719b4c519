"""Prompts for WebShop: the structure of verl-agent's, in envhub's own words.

Read by :func:`envhub.agent.prompt.family_template` (the contract is documented there). The
available actions are ``search[<your query>]`` (when the page has a search bar) and
``click[<clickable>]``; the model reasons in ``<think>`` tags and answers in ``<action>`` tags
(projection rule ``webshop``). A history prompt longer than ``MAX_PROMPT_CHARS`` falls back to
the first-step template, as the reference does.
"""

from __future__ import annotations

from collections.abc import Sequence

__all__ = [
    "FIRST_STEP",
    "HISTORY_LENGTH",
    "MAX_PROMPT_CHARS",
    "MEMORY_STYLE",
    "WITH_HISTORY",
    "extract_task",
    "format_actions",
]

MEMORY_STYLE = "step"
HISTORY_LENGTH = 2
MAX_PROMPT_CHARS = 13_000  # verl-agent drops the history past this many characters

_ANSWER_FORMAT = (
    "First think about the page and your instruction, step by step, inside <think> </think> tags. "
    "Then write exactly one of the available actions inside <action> </action> tags, e.g. "
    "<action>search[red cotton t-shirt]</action> or <action>click[buy now]</action>."
)

FIRST_STEP = (
    "You are an expert shopping agent on a web store (WebShop). Your instruction: {task}\n"
    "The current page: {observation}\n"
    "Available actions:\n{admissible_actions}\n\n" + _ANSWER_FORMAT
)

WITH_HISTORY = (
    "You are an expert shopping agent on a web store (WebShop). Your instruction: {task}\n"
    "You have taken {step_count} step(s) so far. Here are your last {history_length} "
    "page(s) and the action you took on each:\n{history}\n"
    "This is step {current_step}. The current page: {observation}\n"
    "Available actions:\n{admissible_actions}\n\n" + _ANSWER_FORMAT
)


def extract_task(observation: str) -> str:
    """The instruction: the ``[SEP]``-separated part right after ``Instruction:``."""
    parts = [p.strip() for p in observation.split("[SEP]")]
    for i, part in enumerate(parts[:-1]):
        if part == "Instruction:":
            return parts[i + 1]
    return ""


def format_actions(actions: Sequence[str] | None) -> str:
    """Quoted, comma-terminated, one per line, as verl-agent lists WebShop's actions."""
    return "\n".join(f"'{a}'," for a in actions or () if a != "help")
