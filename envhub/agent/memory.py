"""Per-episode history of what the agent saw and did, and the text windows built from it.

One :class:`MemoryRecord` per step: the observation the action was taken in, the projected
action, and (for search) the result that action produced. :meth:`EpisodeMemory.window` returns
the last ``k`` records formatted in one of the reference formats
(``shared/reference/algorithms.md`` §4-5):

========== ====================================================================
style      one line per step (``t`` is the 1-based global step number)
========== ====================================================================
``step``   ``[Observation t: '<obs>', Action t: '<action>']`` (verl-agent)
``search`` ``Step t:<search>q</search> <information>…</information>`` + ``\n`` (verl-agent)
``ocr``    ``[Observation]: <obs> [Action]: <action>`` (AgentOCR; each newline -> a space)
``ocr-search`` ``<search>q</search> <information>…</information>`` (AgentOCR search)
========== ====================================================================

Lines are joined by ``\n``. As in verl-agent's ``SearchMemory``, each ``search`` entry ends
with its own newline, so the joined text has a blank line between steps.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

from envhub.core.errors import ConfigurationError

__all__ = ["MEMORY_STYLES", "EpisodeMemory", "HistoryWindow", "MemoryRecord"]

_SEARCH_BLOCK = re.compile(r"<search>(.*?)</search>", re.IGNORECASE | re.DOTALL)
_INFORMATION_TAGS = re.compile(r"</?information>", re.IGNORECASE)


@dataclass(frozen=True)
class MemoryRecord:
    """One step of an episode.

    Attributes:
        observation: the observation the action was taken in.
        action: the action sent to the env (after projection).
        result: what the action produced, where a format shows it (search: the retrieved text).
        extras: anything else the caller wants kept (validity, reward, ...).
    """

    observation: str
    action: str
    result: str = ""
    extras: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class HistoryWindow:
    """The last records of an episode, formatted.

    Attributes:
        lines: one formatted line (or block, for ``search``) per step, oldest first.
        first_step: 1-based global number of the first step shown (``len + 1`` when empty).
        total_steps: how many steps the episode has taken so far.
    """

    lines: tuple[str, ...]
    first_step: int
    total_steps: int

    @property
    def text(self) -> str:
        """The lines joined by newlines (``""`` when empty)."""
        return "\n".join(self.lines)

    def __len__(self) -> int:
        return len(self.lines)


def _fold(text: str) -> str:
    # AgentOCR keeps one step per rendered line: every newline becomes one space (other
    # whitespace is kept, as the reference keeps it), and a literal \" that came from
    # JSON-escaped text is turned back into a quote.
    return text.replace('\\"', '"').replace("\r", " ").replace("\n", " ")


def _search_pair(r: MemoryRecord) -> str:
    """``<search>q</search> <information>…</information>``; a non-search action (an answer, an
    invalid text) is shown as it was, followed by its information if it produced any."""
    match = _SEARCH_BLOCK.search(r.action)
    information = _INFORMATION_TAGS.sub("", r.result).strip()
    action = f"<search>{match.group(1).strip()}</search>" if match else r.action.strip()
    if match or information:
        return f"{action} <information>{information}</information>"
    return action


def _step_line(t: int, r: MemoryRecord) -> str:
    return f"[Observation {t}: '{r.observation}', Action {t}: '{r.action}']"


def _search_line(t: int, r: MemoryRecord) -> str:
    # verl-agent's SearchMemory: no space after the colon, and a newline closing each entry.
    return f"Step {t}:{_search_pair(r)}\n"


def _ocr_line(t: int, r: MemoryRecord) -> str:
    return f"[Observation]: {_fold(r.observation)} [Action]: {_fold(r.action)}"


def _ocr_search_line(t: int, r: MemoryRecord) -> str:
    return _fold(_search_pair(r))


MEMORY_STYLES: Mapping[str, Callable[[int, MemoryRecord], str]] = MappingProxyType(
    {"step": _step_line, "search": _search_line, "ocr": _ocr_line, "ocr-search": _ocr_search_line}
)


class EpisodeMemory:
    """The records of one episode; :meth:`reset` at the start of every episode.

    Example:
        >>> memory = EpisodeMemory()
        >>> memory.store("You are in a room.", "look")
        >>> memory.store("You see a desk.", "go to desk 1")
        >>> print(memory.window(1).text)
        [Observation 2: 'You see a desk.', Action 2: 'go to desk 1']
    """

    def __init__(self) -> None:
        self._records: list[MemoryRecord] = []

    def reset(self) -> None:
        """Forget every record (a new episode starts)."""
        self._records.clear()

    def store(self, observation: str, action: str, *, result: str = "", **extras: Any) -> None:
        """Append one step.

        Args:
            observation: the observation the action was taken in.
            action: the projected action.
            result: the observation the action produced, for formats that show it (search).
            **extras: kept on the record, not formatted.
        """
        self._records.append(MemoryRecord(str(observation), str(action), str(result), dict(extras)))

    @property
    def records(self) -> tuple[MemoryRecord, ...]:
        """All records, oldest first."""
        return tuple(self._records)

    def __len__(self) -> int:
        return len(self._records)

    def window(self, k: int, style: str = "step") -> HistoryWindow:
        """The last ``k`` steps formatted in ``style``.

        ``k = 0`` shows nothing (unlike the reference's ``records[-0:]``, which returns every
        record); ``k`` larger than the episode shows every step.

        Args:
            k: how many of the most recent steps to show (>= 0).
            style: one of :data:`MEMORY_STYLES` (``step``, ``search``, ``ocr``, ``ocr-search``).

        Returns:
            The formatted window.

        Raises:
            ConfigurationError: ``k`` is negative or not an int, or ``style`` is unknown.
        """
        if not isinstance(k, int) or isinstance(k, bool) or k < 0:
            raise ConfigurationError(f"History window k must be an int >= 0 (e.g. 2); got {k!r}.", k=k)
        formatter = MEMORY_STYLES.get(style)
        if formatter is None:
            raise ConfigurationError(
                f"Unknown memory style {style!r}; use one of {sorted(MEMORY_STYLES)}.", style=style
            )
        total = len(self._records)
        first = total - min(k, total)
        lines = tuple(formatter(first + i + 1, r) for i, r in enumerate(self._records[first:]))
        return HistoryWindow(lines=lines, first_step=first + 1, total_steps=total)
