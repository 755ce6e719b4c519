"""The time-series action grammar and its parser.

Grammar (case-insensitive; spaces anywhere; the first command found in the text is used, so
an action may carry reasoning around it)::

    tool    := ("stats" | "zscore" | "fft" | "zoom") "[" [range] "]"
    range   := [int] ":" [int]                    half-open [a, b); a defaults to 0, b to L
    answer  := "answer[" class [";" intervals] "]"
    intervals := interval ("," interval)*         interval := int ":" int | int "-" int   ([a, b))
    class   := one of KINDS, or an alias ("global point", "trend", "seasonal", ...)

AnomSeer's answer format is accepted as well:
``<answer>[[s, e], ...]</answer> <class>contextual point</class>``.

Parsing never raises: an unusable action becomes an :class:`Invalid` carrying a message that
says what was expected.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass

from envhub.envs.timeseries.generator import ALIASES, KINDS

__all__ = ["EXPECTED", "TOOLS", "Answer", "Invalid", "ToolCall", "normalise_class", "parse_action"]

TOOLS: tuple[str, ...] = ("stats", "zscore", "fft", "zoom")

_COMMAND = re.compile(r"\b(stats|zscore|fft|zoom|answer)\s*\[", re.IGNORECASE)
_RANGE = re.compile(r"^\s*(-?\d+)?\s*:\s*(-?\d+)?\s*$")
_INTERVAL = re.compile(r"^\s*(-?\d+)\s*[:\-]\s*(-?\d+)\s*$")
_ANOMSEER_CLASS = re.compile(r"<class>(.*?)</class>", re.IGNORECASE | re.DOTALL)
_ANOMSEER_ANSWER = re.compile(r"<answer>(.*?)</answer>", re.IGNORECASE | re.DOTALL)
_MAX_INTERVALS = 64

EXPECTED = (
    "Expected one of: stats[a:b], zscore[a:b], fft[a:b], zoom[a:b] (0 <= a < b <= length), "
    "or answer[<class>; a:b, c:d] with <class> in " + ", ".join(KINDS) + "."
)


@dataclass(frozen=True)
class ToolCall:
    """A tool applied to the window ``[start, end)``."""

    name: str
    start: int
    end: int


@dataclass(frozen=True)
class Answer:
    """The final answer: a class and the anomalous intervals (half-open)."""

    kind: str
    intervals: tuple[tuple[int, int], ...]


@dataclass(frozen=True)
class Invalid:
    """An action that could not be used, and why."""

    message: str


def normalise_class(text: str) -> str | None:
    """Map a class name or alias to one of :data:`KINDS` (``None`` if unknown)."""
    key = re.sub(r"[\s_\-]+", " ", text.strip().strip("\"'").lower()).strip()
    if key.replace(" ", "_") in KINDS:
        return key.replace(" ", "_")
    return ALIASES.get(key)


def parse_action(text: str, length: int) -> ToolCall | Answer | Invalid:
    """Parse one action for a series of ``length`` points."""
    if "<class>" in text.lower():
        return _parse_anomseer(text, length)
    match = _COMMAND.search(text)
    if match is None:
        return Invalid(f"No command found in the action. {EXPECTED}")
    name = match.group(1).lower()
    close = text.find("]", match.end())
    if close < 0:
        return Invalid(f"'{name}[' is not closed with ']'. {EXPECTED}")
    body = text[match.end() : close]
    if name == "answer":
        return _parse_answer(body, length)
    return _parse_tool(name, body, length)


def _parse_tool(name: str, body: str, length: int) -> ToolCall | Invalid:
    if not body.strip():
        return ToolCall(name, 0, length)
    found = _RANGE.match(body)
    if found is None:
        return Invalid(f"{name}[{body[:40]}] has no valid range: write {name}[a:b] with integers a < b.")
    start = 0 if found.group(1) is None else int(found.group(1))
    end = length if found.group(2) is None else int(found.group(2))
    problem = _check_range(start, end, length)
    if problem:
        return Invalid(f"{name}[{start}:{end}]: {problem}")
    return ToolCall(name, start, end)


def _parse_answer(body: str, length: int) -> Answer | Invalid:
    kind_text, _, rest = body.partition(";")
    kind = normalise_class(kind_text)
    if kind is None:
        return Invalid(f"answer[{kind_text.strip()[:40]}]: unknown class. Use one of {', '.join(KINDS)}.")
    intervals: list[tuple[int, int]] = []
    for part in filter(str.strip, rest.split(",")):
        found = _INTERVAL.match(part)
        if found is None:
            return Invalid(f"answer interval {part.strip()[:40]!r} is not 'a:b'. {EXPECTED}")
        start, end = int(found.group(1)), int(found.group(2))
        problem = _check_range(start, end, length)
        if problem:
            return Invalid(f"answer interval {start}:{end}: {problem}")
        intervals.append((start, end))
    if len(intervals) > _MAX_INTERVALS:
        return Invalid(f"answer has {len(intervals)} intervals; at most {_MAX_INTERVALS} are allowed.")
    return Answer(kind, tuple(intervals))


def _parse_anomseer(text: str, length: int) -> Answer | Invalid:
    kind_match = _ANOMSEER_CLASS.search(text)
    kind = normalise_class(kind_match.group(1)) if kind_match else None
    if kind is None:
        return Invalid(f"<class> must hold one of {', '.join(KINDS)}.")
    answer_match = _ANOMSEER_ANSWER.search(text)
    if answer_match is None:
        return Invalid("AnomSeer format needs <answer>[[start, end], ...]</answer> with <class>.")
    try:
        raw = ast.literal_eval(answer_match.group(1).strip() or "[]")
    except (ValueError, SyntaxError, MemoryError, RecursionError):
        return Invalid("<answer> must be a list of [start, end] pairs, e.g. <answer>[[10, 14]]</answer>.")
    intervals: list[tuple[int, int]] = []
    for item in raw if isinstance(raw, list | tuple) else [None]:
        if isinstance(item, dict):
            item = (item.get("start"), item.get("end"))
        if not (isinstance(item, list | tuple) and len(item) == 2 and all(isinstance(v, int) for v in item)):
            return Invalid("<answer> must be a list of [start, end] integer pairs.")
        problem = _check_range(int(item[0]), int(item[1]), length)
        if problem:
            return Invalid(f"<answer> interval {item[0]}:{item[1]}: {problem}")
        intervals.append((int(item[0]), int(item[1])))
    return Answer(kind, tuple(intervals[:_MAX_INTERVALS]))


def _check_range(start: int, end: int, length: int) -> str:
    if start < 0 or end < 0:
        return f"indices must be >= 0 (the series has indices 0..{length - 1})."
    if start >= end:
        return "the start must be smaller than the end (half-open range [a, b))."
    if end > length:
        return f"the end must be <= {length}, the series length."
    return ""
