"""Turn model text into a Search-QA action: a search, an answer, or an invalid action.

Two rule sets are offered:

* ``search-r1`` (the default) reproduces Search-R1's ``llm_agent/generation.py``: the action is
  the *first* complete ``<search>…</search>`` or ``<answer>…</answer>`` block (tags are
  case-sensitive, content may span lines and is stripped); anything without such a block
  is invalid.
* ``strict`` adds verl-agent's ``search_projection`` rules: a response holding both a search and
  an answer block, more than one block of a kind, or CJK characters is invalid; tags are
  matched case-insensitively.

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
# The CJK ranges verl-agent's projection rejects (ideographs, kana, hangul, CJK punctuation).
_CJK = re.compile(r"[\u3000-\u303f\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff]")


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
        if _CJK.search(text):
            return ParsedAction("invalid", reason="the response contains CJK characters")
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
