"""A scripted WebShop shopper: the demo's built-in policy.

It searches the instruction's words, opens the top result, clicks every option value the
instruction names, and buys. It reads only what an agent sees: the observation and
``info`` (``page``, ``instruction``, ``available_actions``).
"""

from __future__ import annotations

import re
from typing import Any

__all__ = ["ScriptedShopper"]

_NAVIGATION = {
    "back to search",
    "next >",
    "< prev",
    "search",
    "buy now",
    "description",
    "features",
    "reviews",
    "attributes",
}
_TAIL = re.compile(r"(, and price lower than .*| with [a-z ]+: .*)$")


def _mentions(text: str, value: str) -> bool:
    return re.search(rf"(?<![\w.]){re.escape(value)}(?![\w.])", text) is not None


class ScriptedShopper:
    """Search -> top result -> the instruction's options -> buy now.

    Args:
        seed: unused (the policy is deterministic); accepted so ``envhub demo`` can build it.
    """

    def __init__(self, seed: int | None = None) -> None:
        self._chosen: set[str] = set()

    def reset(self, observation: str, info: dict[str, Any]) -> None:
        self._chosen = set()

    def act(self, observation: str, info: dict[str, Any]) -> str:
        page = info.get("page", "")
        instruction = str(info.get("instruction", "")).lower()
        clickables = list((info.get("available_actions") or {}).get("clickables", []))
        if page == "search":
            query = _TAIL.sub("", instruction).replace("i am looking for", "").replace("i need", "")
            return f"search[{query.strip()}]"
        if page == "results":
            products = [c for c in clickables if c not in _NAVIGATION]
            return f"click[{products[0]}]" if products else "click[back to search]"
        if page == "item":
            wanted = [
                c
                for c in clickables
                if c not in _NAVIGATION and c not in self._chosen and _mentions(instruction, c)
            ]
            if wanted:
                choice = max(wanted, key=len)  # "navy blue" before "blue"
                self._chosen.add(choice)
                return f"click[{choice}]"
            return "click[buy now]"
        if page == "sub":
            return "click[< prev]"
        return "click[back to search]"
