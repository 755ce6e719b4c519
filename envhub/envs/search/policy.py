"""Built-in Search-QA policies: a scripted multi-hop reader (the demo) and a naive baseline.

:class:`ScriptedSearchPolicy` reads questions and passages written in envhub's fictional-world
phrasing (:data:`~envhub.envs.search.world.RELATIONS`). It first searches the question
itself, then resolves the question's chain of relations one hop at a time from the text it
has retrieved, searching ``"<entity> <relation words>"`` when a fact is still missing, and
answers with the object of the last hop. On questions in other phrasings it searches the
question and answers with the title of the best passage, so it is imperfect by design.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from envhub.envs.search.world import RELATIONS, Relation

__all__ = ["FirstTitlePolicy", "ScriptedSearchPolicy", "parse_question"]

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
    """

    def __init__(self, seed: int | None = None, *, max_turns: int = 4) -> None:
        self._max_turns = max_turns
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
        if self._turn == 1:
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
