"""Built-in Math policies: a scripted solver of envhub's generated problems, and scripted team roles.

:func:`solve` reads a generated problem back through its template
(:data:`~envhub.envs.math.fixtures.TEMPLATES`) and works it out; problems in other phrasings
(GSM8K's) are beyond it. :class:`TemplateSolverPolicy` answers with it (the demo's policy).

:func:`team_solver`, :func:`team_verifier` and :func:`team_member` are scripted roles of the math
orchestra (Dr. MAS; :mod:`envhub.rollout.orchestra.math`), for tests and demos. They read the
problem from ``prompt.metadata["observations"][0]`` and the team's calls so far from
``metadata["team"]``, which the orchestra sends. The solver's first attempt is off by one for
members with an odd index (``metadata["member_index"]``); it answers right once a verifier has
rejected an attempt. The verifier checks the latest attempt against :func:`solve` and rejects a
wrong one with a critique, except that members whose index is 3 modulo 4 have a hasty verifier,
which approves anything. So in a group of four, members 0 and 2 are right at once, member 1 is
right after one rejection, and member 3's wrong answer is approved.
"""

from __future__ import annotations

from typing import Any

from envhub.envs.math.answer import extract_final_answer, parse_number
from envhub.envs.math.fixtures import TEMPLATES

__all__ = ["TemplateSolverPolicy", "solve", "team_member", "team_solver", "team_verifier"]

_PATTERNS = tuple((t, t.pattern()) for t in TEMPLATES)


def solve(question: str) -> int | None:
    """The answer of a problem envhub generated; ``None`` for another phrasing."""
    text = question.strip()
    for template, pattern in _PATTERNS:
        match = pattern.fullmatch(text)
        if match is not None:
            numbers = {k: int(v) for k, v in match.groupdict().items()}
            return template.solve(numbers)[0]
    return None


class TemplateSolverPolicy:
    """Answers a generated problem by reading it through its template (``\\boxed{?}`` otherwise).

    Args:
        seed: unused (the policy is deterministic); kept for the ``Policy(seed)`` contract.
    """

    def __init__(self, seed: int | None = None) -> None:
        self._question = ""

    def reset(self, observation: str, info: dict[str, Any]) -> None:
        self._question = observation

    def act(self, observation: str, info: dict[str, Any]) -> str:
        answer = solve(self._question)
        return (
            f"<think>read the numbers off the problem</think>\n\\boxed{{{'?' if answer is None else answer}}}"
        )


def _problem(prompt: Any) -> str:
    seen = list(getattr(prompt, "metadata", {}).get("observations") or [])
    if not seen:
        raise ValueError("The team scripts play the math orchestra's prompts (metadata['observations']).")
    return str(seen[0])


def _team(prompt: Any) -> list[dict[str, str]]:
    return [dict(c) for c in prompt.metadata.get("team") or []]


def team_solver(prompt: Any) -> str:
    """The solver: the right answer, except a first attempt off by one for odd members."""
    answer = solve(_problem(prompt))
    rejected = any(c["role"] == "verifier" for c in _team(prompt))
    careless = int(prompt.metadata.get("member_index", 0)) % 2 == 1 and not rejected
    shown = "?" if answer is None else answer + 1 if careless else answer
    return f"<think>scripted</think>\nThe answer is \\boxed{{{shown}}}."


def team_verifier(prompt: Any) -> str:
    """The verifier: approves the latest attempt when it is right (a hasty one always)."""
    attempts = [c["text"] for c in _team(prompt) if c["role"] == "solver"]
    given = parse_number(extract_final_answer(attempts[-1]) or "") if attempts else None
    right = solve(_problem(prompt))
    hasty = int(prompt.metadata.get("member_index", 0)) % 4 == 3
    if hasty or (given is not None and right is not None and given == right):
        return "The steps check out.\n<verify>approve</verify>"
    return f"The last step is wrong: recompute it, it does not give {given}.\n<verify>reject</verify>"


def team_member(prompt: Any) -> str:
    """Whichever role ``prompt.metadata["role"]`` names: one scripted policy for the whole team."""
    role = prompt.metadata.get("role")
    play = {"solver": team_solver, "verifier": team_verifier}.get(str(role))
    if play is None:
        raise ValueError(f"team_member plays the math orchestra's roles, not {role!r}.")
    return play(prompt)
