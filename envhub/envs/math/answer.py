"""Reading a solution's final answer and comparing it with the gold, as Dr. MAS's math env does.

The authors' math env (``langfengQ/DrMAS`` @19c632b, ``agent_system/environments/env_package/math/``:
``math_reward.py``, ``utils.py``) scores a response like this, and envhub reproduces it:

1. **Where the answer is.** When the response holds ``</think>``, only the text after the first
   ``</think>`` (up to a second one, if any) is read; otherwise the whole response.
2. **Which answer.** The *last* ``\\boxed`` in that text, with its argument taken by balancing
   braces from there: ``\\boxed{\\frac{1}{2}}`` gives ``\\frac{1}{2}``. No ``\\boxed``, an
   unbalanced one, or ``\\boxed`` not followed directly by ``{`` means no answer (reward 0).
   ``<answer>…</answer>`` blocks are not read: the authors' math code uses ``\\boxed{}`` only
   (their search env is the one with ``<answer>``).
3. **Equal to the gold.** The authors grade with Hendrycks' MATH normalisation and a sympy
   equality. For envhub's tasks, whose gold is a number, :func:`parse_number` restates the
   part of it that decides a numeric answer: the answer is normalised (a leading
   ``\\text{…}`` unwrapped; ``\\!``, ``\\,``, ``\\$``, ``$``, ``\\%``, ``%`` and degree marks
   dropped; units after ``\\text{ `` dropped; a left-hand side of at most two characters
   before a single ``=`` dropped, as in ``x = 5``; spaces dropped; commas between groups of
   three digits dropped, as in ``1,000``) and must then be a plain decimal number; it is
   correct when that number equals the gold's (``42``, ``42.0`` and ``\\$42`` all equal
   ``42``). Anything else, such as ``\\frac{84}{2}``, ``6*7`` or ``forty-two``, is wrong, as
   under the authors' grader for an integer gold (it demands a strict match when the gold is an
   integer).
"""

from __future__ import annotations

import re
from decimal import Decimal, InvalidOperation

__all__ = ["answers_equal", "extract_final_answer", "format_number", "parse_number"]

_BOXED = "\\boxed"
_THINK_END = "</think>"
_TEXT_WRAPPER = re.compile(r"^\\text\{(?P<text>.+?)\}")
_DROPPED = ("\\!", "\\,", "\\$", "$", "\\%", "%", "^{\\circ}", "^\\circ")
_THOUSANDS = re.compile(r"(?<=\d),(?=\d{3}(?:\D|$))")
_NUMBER = re.compile(r"[+-]?(?:\d+(?:\.\d*)?|\.\d+)")


def extract_final_answer(text: str) -> str | None:
    """The argument of the last ``\\boxed{…}`` of the solution part (see the module docstring)."""
    if _THINK_END in text:
        text = text.split(_THINK_END)[1]
    start = text.rfind(_BOXED)
    if start < 0:
        return None
    depth = 0
    for i in range(start, len(text)):
        if text[i] == "{":
            depth += 1
        elif text[i] == "}":
            depth -= 1
            if depth == 0:
                boxed = text[start : i + 1]
                # The authors' remove_boxed: the box must open right after "\boxed".
                if not boxed.startswith(_BOXED + "{"):
                    return None
                return boxed[len(_BOXED) + 1 : -1]
    return None


def parse_number(answer: str) -> Decimal | None:
    """The number an answer (or a gold) states, after the normalisation above; ``None`` if none."""
    text = answer.strip()
    wrapped = _TEXT_WRAPPER.search(text)
    if wrapped is not None:
        text = wrapped.group("text").strip()
    text = text.replace("\n", "")
    for dropped in _DROPPED:
        text = text.replace(dropped, "")
    if "\\text{ " in text:  # units on the right ("5 \text{ apples}"), as MATH's normaliser
        text = text.split("\\text{ ", 1)[0]
    sides = text.split("=")
    if len(sides) == 2 and len(sides[0].strip()) <= 2:
        text = sides[1]
    text = _THOUSANDS.sub("", text.replace(" ", ""))
    if _NUMBER.fullmatch(text) is None:
        return None
    try:
        return Decimal(text)
    except InvalidOperation:  # pragma: no cover - the pattern admits only valid literals
        return None


def format_number(number: Decimal) -> str:
    """A number as an answer is written: ``42``, ``-3``, ``2.5`` (no exponent, no trailing zeros)."""
    text = format(number.normalize(), "f")
    return "0" if text in ("-0", "+0") else text


def answers_equal(answer: str | None, gold: str) -> bool:
    """Whether an extracted answer states the gold's number."""
    if answer is None:
        return False
    given, expected = parse_number(answer), parse_number(gold)
    return given is not None and expected is not None and given == expected
