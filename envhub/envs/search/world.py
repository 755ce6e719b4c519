"""The relations of envhub's fictional world and how each is written and asked.

One table drives three things, so they cannot drift apart: the sentence that states a fact
in a passage (:mod:`fixtures` renders it), the question that asks for the fact, and the noun
phrase that refers to the fact's object inside a longer, multi-hop question. The scripted
demo policy (:mod:`policy`) reads passages and questions back with the same table.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

__all__ = ["RELATIONS", "Relation"]


@dataclass(frozen=True)
class Relation:
    """One attribute or relation of an entity kind.

    Attributes:
        name: the relation's key.
        subject: the entity kind it belongs to (``company``, ``person``, ``city``, ``river``).
        target: the entity kind of the object, or ``None`` for a literal value (year, number, word).
        sentence: how a passage states it; ``{s}`` is the subject's name, ``{o}`` the object.
        question: how a question asks for the object; ``{s}`` is the subject (a name or a noun phrase).
        phrase: the noun phrase for the object inside a multi-hop question (``None`` when the
            relation cannot be chained).
    """

    name: str
    subject: str
    target: str | None
    sentence: str
    question: str
    phrase: str | None = None

    def sentence_pattern(self, subject: str) -> re.Pattern[str]:
        """A regex that finds this relation's sentence about ``subject`` and captures the object."""
        before, _, after = self.sentence.partition("{o}")
        head, tail = _flexible(before.format(s=subject)), _flexible(after.format(s=subject))
        # Objects are names, numbers or words: the lazy group stops at the sentence's own
        # closing text; a leading article ("works as an architect") is not part of the object.
        return re.compile(r"\b" + head + r"(?:an?\s+)?(.+?)" + tail, re.IGNORECASE)

    def question_pattern(self) -> re.Pattern[str]:
        """A regex that recognises this relation's question and captures the subject part."""
        before, _, after = self.question.partition("{s}")
        return re.compile("^" + re.escape(before) + "(.+)" + re.escape(after) + "$", re.IGNORECASE)

    def phrase_pattern(self) -> re.Pattern[str] | None:
        """A regex that recognises this relation's noun phrase and captures its subject part."""
        if self.phrase is None:
            return None
        before, _, after = self.phrase.partition("{s}")
        return re.compile("^" + re.escape(before) + "(.+)" + re.escape(after) + "$", re.IGNORECASE)


def _flexible(text: str) -> str:
    """``text`` as a regex that also matches where line breaks or runs of spaces replace a space."""
    words = text.split(" ")
    return r"\s+".join(re.escape(word) for word in words)


#: Every relation of the world. Sentences keep the subject's full name in each sentence so a
#: single passage can be matched without resolving pronouns.
RELATIONS: tuple[Relation, ...] = (
    Relation("founded_year", "company", None, "{s} was founded in {o}.", "In which year was {s} founded?"),
    Relation(
        "founder",
        "company",
        "person",
        "{s} was established by {o}.",
        "Who established {s}?",
        "the founder of {s}",
    ),
    Relation(
        "headquarters",
        "company",
        "city",
        "{s} is headquartered in {o}.",
        "In which city is {s} headquartered?",
        "the city where {s} is headquartered",
    ),
    Relation(
        "industry", "company", None, "{s} works in the {o} industry.", "In which industry does {s} work?"
    ),
    Relation("born_year", "person", None, "{s} was born in the year {o}.", "In which year was {s} born?"),
    Relation(
        "birthplace",
        "person",
        "city",
        "{s} was born in the city of {o}.",
        "In which city was {s} born?",
        "the city where {s} was born",
    ),
    Relation("occupation", "person", None, "{s} works as {o}.", "What is the occupation of {s}?"),
    Relation(
        "employer",
        "person",
        "company",
        "{s} is employed by {o}.",
        "Which company employs {s}?",
        "the company that employs {s}",
    ),
    Relation("country", "city", None, "{s} is a city in {o}.", "In which country is {s}?"),
    Relation(
        "city_founded", "city", None, "{s} was first settled in {o}.", "In which year was {s} first settled?"
    ),
    Relation("river", "city", "river", "{s} lies on the river {o}.", "On which river does {s} lie?"),
    Relation(
        "mayor", "city", "person", "The mayor of {s} is {o}.", "Who is the mayor of {s}?", "the mayor of {s}"
    ),
    Relation(
        "length",
        "river",
        None,
        "The river {s} is {o} kilometres long.",
        "How many kilometres long is the river {s}?",
    ),
    Relation(
        "mouth", "river", None, "The river {s} flows into {o}.", "Into which sea does the river {s} flow?"
    ),
)
