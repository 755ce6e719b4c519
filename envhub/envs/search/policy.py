"""Built-in Search-QA policies: a scripted multi-hop reader (the demo) and a naive baseline.

:class:`ScriptedSearchPolicy` reads questions and passages written in envhub's fictional-world
phrasing (:data:`~envhub.envs.search.world.RELATIONS`). It first searches the question
itself, then resolves the question's chain of relations one hop at a time from the text it
has retrieved, searching ``"<entity> <relation words>"`` when a fact is still missing, and
answers with the object of the last hop. On questions in other phrasings it searches the
question and answers with the title of the best passage, so it is imperfect by design.

:func:`team_verifier`, :func:`team_searcher` and :func:`team_answerer` are scripted roles of the
search orchestra (Dr. MAS; :mod:`envhub.rollout.orchestra.search`): each replays the scripted
reader over the member's observations (``prompt.metadata["observations"]``, which the
orchestra sends) and plays its part of the reader's decision; the search agent searches the
first hop's ``"<entity> <relation words>"`` at once rather than the whole question. Members with
an odd index have a hasty verifier, which lets the answer agent answer after the first search.
:func:`team_member` plays whichever role the prompt is for (``metadata["role"]``): one shared
policy for the team. :func:`coin_verifier` is a verifier that never reads the observation: the
warm start's label for a verifier whose routing RL is to learn.
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass
from typing import Any

from envhub.envs.search.world import RELATIONS, Relation

__all__ = [
    "FirstTitlePolicy",
    "ScriptedSearchPolicy",
    "coin_verifier",
    "parse_question",
    "team_answerer",
    "team_member",
    "team_searcher",
    "team_verifier",
]

_TITLE = re.compile(r"Doc 1\(Title: \"?([^\"\)\n]*)\"?\)")


@dataclass(frozen=True)
class _Plan:
    """A parsed question: the named entity and the relations to follow from it, in order."""

    entity: str
    chain: tuple[Relation, ...]


def parse_question(question: str) -> _Plan | None:
    """Recognise a fictional-world question; ``None`` when its phrasing is unknown."""
    text = question.strip()
    for relation in RELATIONS:
        match = relation.question_pattern().match(text)
        if match is None:
            continue
        inner = _parse_phrase(match.group(1).strip())
        if inner is not None:
            return _Plan(inner.entity, (*inner.chain, relation))
    return None


def _parse_phrase(phrase: str) -> _Plan:
    """A noun phrase: either ``<relation phrase of (phrase)>`` or an entity name."""
    for relation in RELATIONS:
        pattern = relation.phrase_pattern()
        match = pattern.match(phrase) if pattern is not None else None
        if match is not None:
            inner = _parse_phrase(match.group(1).strip())
            return _Plan(inner.entity, (*inner.chain, relation))
    return _Plan(phrase, ())


class ScriptedSearchPolicy:
    """Searches the question, follows the relation chain through retrieved text, answers.

    Args:
        seed: unused (the policy is deterministic); kept for the ``Policy(seed)`` contract.
        max_turns: turns the env allows; the policy answers on the last one whatever it knows.
        question_first: search the whole question first (the demo); ``False`` searches the first
            hop's ``"<entity> <relation words>"`` at once, as it does for every later hop.
    """

    def __init__(self, seed: int | None = None, *, max_turns: int = 4, question_first: bool = True) -> None:
        self._max_turns = max_turns
        self._question_first = question_first
        self._plan: _Plan | None = None
        self._question = ""
        self._read = ""
        self._turn = 0
        self._first_title = ""

    def reset(self, observation: str, info: dict[str, Any]) -> None:
        self._question = observation.strip()
        self._plan = parse_question(self._question)
        self._read = ""
        self._turn = 0
        self._first_title = ""

    def act(self, observation: str, info: dict[str, Any]) -> str:
        if "<information>" in observation:
            self._read += "\n" + observation
            if not self._first_title:
                match = _TITLE.search(observation)
                self._first_title = match.group(1).strip() if match else ""
        self._turn += 1
        last_turn = self._turn >= self._max_turns
        if self._turn == 1 and (self._question_first or self._plan is None):
            return f"<search>{self._question}</search>"
        if self._plan is None:
            return f"<answer>{self._first_title}</answer>"
        subject = self._plan.entity
        for relation in self._plan.chain:
            match = relation.sentence_pattern(subject).search(self._read)
            if match is None:
                if last_turn:
                    return f"<answer>{subject}</answer>"
                query = relation.sentence.partition("{o}")[0].format(s=subject).strip()
                return f"<search>{query}</search>"
            subject = match.group(1).strip()
        return f"<answer>{subject}</answer>"


class FirstTitlePolicy:
    """Baseline: search the question once, answer with the title of the top passage.

    Args:
        seed: unused (deterministic); kept for the ``Policy(seed)`` contract.
    """

    def __init__(self, seed: int | None = None) -> None:
        self._question = ""

    def reset(self, observation: str, info: dict[str, Any]) -> None:
        self._question = observation.strip()

    def act(self, observation: str, info: dict[str, Any]) -> str:
        match = _TITLE.search(observation)
        if match is None:
            return f"<search>{self._question}</search>"
        return f"<answer>{match.group(1).strip()}</answer>"


def _reader_action(observations: list[str], *, question_first: bool = True) -> str:
    """What :class:`ScriptedSearchPolicy` does at the last of ``observations`` (replayed from the first)."""
    reader = ScriptedSearchPolicy(question_first=question_first)
    reader.reset(observations[0], {})
    action = ""
    for observation in observations:
        action = reader.act(observation, {})
    return action


def _observations(prompt: Any) -> list[str]:
    seen = list(getattr(prompt, "metadata", {}).get("observations") or [])
    if not seen:
        raise ValueError("The team scripts play the search orchestra's prompts (metadata['observations']).")
    return [str(o) for o in seen]


def team_verifier(prompt: Any) -> str:
    """The verifier: "yes" when the reader would answer now (or, hasty, after any search)."""
    seen = _observations(prompt)
    hasty = int(prompt.metadata.get("member_index", 0)) % 2 == 1
    enough = _reader_action(seen).startswith("<answer>") or (hasty and len(seen) > 1)
    return f"<think>scripted</think>\n<verify>{'yes' if enough else 'no'}</verify>"


def coin_verifier(prompt: Any) -> str:
    """A verifier blind to the observation: "yes" or "no" by a fair coin seeded with the prompt's
    text (the same prompt, the same word). As the warm start's label for the verifier
    (``warm_start.labels``) it teaches the format and no routing: over any set of prompts, the
    search's results or the step number shown tell nothing of the word."""
    text = json.dumps(prompt.messages, sort_keys=True, ensure_ascii=False)
    heads = hashlib.sha256(text.encode("utf-8")).digest()[0] % 2 == 0
    return f"<think>scripted</think>\n<verify>{'yes' if heads else 'no'}</verify>"


def team_searcher(prompt: Any) -> str:
    """The search agent: the reader's query for the hop it still needs, the first hop's included
    (``"<entity> <relation words>"``, not the whole question: a short span to copy, which a tiny
    model learns from thousands of calls where the whole question it does not); the question
    itself when the reader would answer."""
    seen = _observations(prompt)
    action = _reader_action(seen, question_first=False)
    if not action.startswith("<search>"):
        action = f"<search>{seen[0].strip()}</search>"
    return f"<think>scripted</think>\n{action}"


def team_answerer(prompt: Any) -> str:
    """The answer agent: the reader's answer, else the title of the latest top passage."""
    seen = _observations(prompt)
    action = _reader_action(seen)
    if not action.startswith("<answer>"):
        titles = [m.group(1).strip() for o in seen for m in [_TITLE.search(o)] if m is not None]
        action = f"<answer>{titles[-1] if titles else ''}</answer>"
    return f"<think>scripted</think>\n{action}"


def team_member(prompt: Any) -> str:
    """Whichever role ``prompt.metadata["role"]`` names: one scripted policy for the whole team."""
    role = prompt.metadata.get("role")
    play = {"verifier": team_verifier, "search": team_searcher, "answer": team_answerer}.get(str(role))
    if play is None:
        raise ValueError(f"team_member plays the search orchestra's roles, not {role!r}.")
    return play(prompt)
