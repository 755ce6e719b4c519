"""Turn model text into a Search-QA action: a search, an answer, or an invalid action.

Two rule sets are offered:

* ``search-r1`` (the default) reproduces Search-R1's ``llm_agent/generation.py``: the response
  is first cut after its first ``</search>`` (or, when there is none, after its first
  ``</answer>``), as Search-R1 does before executing it; the action is then the *first*
  complete ``<search>…</search>`` or ``<answer>…</answer>`` block of what is left (tags are
  case-sensitive, content may span lines and is stripped); anything without such a block
  is invalid. The cut matters only for a search block nested in an answer block:
  ``<answer><search>x</search></answer>`` is a search for ``x``, as in Search-R1.
* ``strict`` adds verl-agent's ``search_projection`` validity rules: a response holding both a
  ``<search>`` and an ``<answer>`` tag, or more than one tag of a kind, is invalid; tags are
  matched case-insensitively (after the same case-sensitive cut). Like verl-agent's search
  projection, it has no rule about the response's language or script.

Under both, an empty search query is invalid (a retriever cannot rank against nothing). An
invalid action gets Search-R1's corrective observation, :data:`INVALID_ACTION_FEEDBACK`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

__all__ = ["INVALID_ACTION_FEEDBACK", "ParsedAction", "parse_action"]

#: The observation Search-R1 returns for an action with neither tag, verbatim.
INVALID_ACTION_FEEDBACK = (
    "\nMy previous action is invalid. If I want to search, I should put the query between <search> and "
    "</search>. If I want to give the final answer, I should put the answer between <answer> and </answer>. "
    "Let me try again.\n"
)

_FIRST_BLOCK = re.compile(r"<(search|answer)>(.*?)</\1>", re.DOTALL)
_FIRST_BLOCK_ANY_CASE = re.compile(r"<(search|answer)>(.*?)</\1>", re.DOTALL | re.IGNORECASE)
_OPEN_TAG = re.compile(r"<(search|answer)>", re.IGNORECASE)


@dataclass(frozen=True)
class ParsedAction:
    """The action found in a response.

    Attributes:
        kind: ``"search"``, ``"answer"`` or ``"invalid"``.
        content: the query or the answer (stripped); ``""`` when invalid.
        reason: why the action is invalid (``""`` when valid).
    """

    kind: Literal["search", "answer", "invalid"]
    content: str = ""
    reason: str = ""

    @property
    def is_valid(self) -> bool:
        """Whether the response held a usable action."""
        return self.kind != "invalid"


def _cut_like_search_r1(text: str) -> str:
    # Search-R1's _postprocess_responses (and verl-agent's _postprocess_action): keep the response
    # up to its first </search>, else up to its first </answer>; the search tag is checked first,
    # whatever comes first in the text.
    for closing in ("</search>", "</answer>"):
        if closing in text:
            return text.split(closing, 1)[0] + closing
    return text


def parse_action(text: str, *, strict: bool = False) -> ParsedAction:
    """Parse one model response.

    Args:
        text: the response.
        strict: apply verl-agent's extra validity rules (see the module docstring).

    Returns:
        The parsed action; never raises.
    """
    if strict:
        opened = [m.group(1).lower() for m in _OPEN_TAG.finditer(text)]
        if "search" in opened and "answer" in opened:
            return ParsedAction("invalid", reason="the response holds both a <search> and an <answer> block")
        if len(opened) > 1:
            return ParsedAction("invalid", reason=f"the response holds more than one <{opened[0]}> block")
    text = _cut_like_search_r1(text)
    match = (_FIRST_BLOCK_ANY_CASE if strict else _FIRST_BLOCK).search(text)
    if match is None:
        return ParsedAction(
            "invalid", reason="no complete <search>...</search> or <answer>...</answer> block"
        )
    kind = match.group(1).lower()
    content = match.group(2).strip()
    if kind == "search":
        if not content:
            return ParsedAction("invalid", reason="the search query is empty")
        return ParsedAction("search", content)
    return ParsedAction("answer", content)
