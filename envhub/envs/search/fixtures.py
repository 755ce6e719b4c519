"""envhub's seeded generator of a fictional world: a corpus plus questions that need retrieval.

The world has countries, rivers, cities, people and companies, tied by the relations of
:data:`envhub.envs.search.world.RELATIONS` (a company's founder is a person, a person's
birthplace is a city, a city lies on a river...). Every entity is written as one or two
passages in Search-R1's corpus format, one sentence per fact. Questions ask for one fact
(single-hop) or follow a chain of two or three relations (multi-hop, e.g. "In which year was
the founder of the company that employs Alena Vostrik born?"); each has its golden answers
and the ids of the passages that state the facts on its chain.

Names are invented from syllables, so a model cannot answer from memory, and they are
unique, so every question has exactly one answer. Everything is drawn from a
``numpy.random.Generator`` seeded by the caller: the same seed gives the same files.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from envhub.envs.search.data import (
    Passage,
    Question,
    write_corpus_jsonl,
    write_questions_jsonl,
    write_questions_parquet,
)
from envhub.envs.search.world import RELATIONS, Relation

__all__ = ["DATA_SOURCE", "PARQUET_PROMPT", "World", "generate_questions", "generate_world", "write_world"]

#: ``data_source`` of every generated question.
DATA_SOURCE = "envhub-world"

_ONSETS = (
    "b",
    "d",
    "f",
    "g",
    "k",
    "l",
    "m",
    "n",
    "p",
    "r",
    "s",
    "t",
    "v",
    "z",
    "br",
    "dr",
    "kr",
    "st",
    "th",
    "sh",
)
_VOWELS = ("a", "e", "i", "o", "u", "ae", "ia", "ou")
_CODAS = ("", "", "n", "r", "l", "s", "th", "nd", "rk", "st")
_FIRST_NAMES = (
    "Alena", "Boris", "Calla", "Dorian", "Elsa", "Fenwick", "Greta", "Hollis", "Ines", "Jasper", "Katya",
    "Lucan", "Mirela", "Nils", "Odile", "Petra", "Quentin", "Rosalind", "Soren", "Talia", "Ulrich", "Vesna",
    "Wendel", "Xenia", "Yorick", "Zora",
)  # fmt: skip
_COMPANY_SUFFIXES = ("Dynamics", "Works", "Holdings", "Industries", "Labs", "Foundry", "Systems", "Trading")
_CITY_SUFFIXES = ("ford", "ham", "burg", "port", "vale", "mere", "stead", "wick")
_INDUSTRIES = (
    "shipbuilding",
    "textile",
    "software",
    "mining",
    "brewing",
    "aerospace",
    "pharmaceutical",
    "glassware",
)
_OCCUPATIONS = ("architect", "engineer", "painter", "surgeon", "astronomer", "lawyer", "composer", "botanist")
_FILLERS = (
    "This entry belongs to the regional encyclopedia.",
    "More details are kept in the local archives.",
    "The entry was last revised in the spring edition.",
    "Several chronicles mention this entry.",
    "Older travel guides cite this entry.",
)
#: The user message of the parquet rows (Search-R1's layout: instructions, then the question last,
#: after "Question:", which is where :func:`~envhub.envs.search.data.load_questions` finds it).
PARQUET_PROMPT = (
    "Answer the question below. Think inside <think> </think> first. When you are missing a fact, "
    "search for it with <search> query </search>; the results come back between <information> and "
    "</information>. Search as often as you need. When you know the answer, give it briefly inside "
    "<answer> </answer>. Question: {question}\n"
)
#: Share of single-, two- and three-hop questions.
_HOP_MIX = (0.5, 0.35, 0.15)


@dataclass
class World:
    """A generated world: its passages and, per fact, the passage that states it.

    Attributes:
        passages: the corpus, ids ``"0"``, ``"1"``, ... in order.
        facts: ``(kind, entity) -> {relation name: (object, passage id)}``.
        names: ``kind -> entity names`` in creation order.
        answers: alternative spellings accepted for an object (``"Oskar"`` -> ``"the Oskar river"``).
    """

    passages: list[Passage] = field(default_factory=list)
    facts: dict[tuple[str, str], dict[str, tuple[str, str]]] = field(default_factory=dict)
    names: dict[str, list[str]] = field(default_factory=dict)
    answers: dict[str, tuple[str, ...]] = field(default_factory=dict)


class _Names:
    """Unique invented names drawn from one generator."""

    def __init__(self, rng: np.random.Generator) -> None:
        self._rng = rng
        self._used: set[str] = set()

    def word(self, syllables: int) -> str:
        while True:
            parts = [self.pick(_ONSETS) + self.pick(_VOWELS) + self.pick(_CODAS) for _ in range(syllables)]
            name = "".join(parts).capitalize()
            if name not in self._used and len(name) >= 4:
                self._used.add(name)
                return name

    def pick(self, options: Sequence[str]) -> str:
        return str(options[int(self._rng.integers(len(options)))])


def generate_world(n_passages: int, *, seed: int = 0) -> World:
    """Generate a world whose corpus has exactly ``n_passages`` passages.

    Args:
        n_passages: corpus size (at least 10).
        seed: seed of the generator.

    Returns:
        The world: passages plus the fact table questions are drawn from.
    """
    n_passages = max(10, int(n_passages))
    rng = np.random.default_rng(seed)
    names = _Names(rng)
    # One "unit" (1 city, 3 people, 1 company, 1/4 river) yields about 10.5 passages.
    n_cities = max(2, int(np.ceil(n_passages / 10.0)))
    countries = [names.word(2) + "ia" for _ in range(max(2, n_cities // 40))]
    rivers = [names.word(2) for _ in range(max(1, n_cities // 4))]
    cities = [names.word(2) + names.pick(_CITY_SUFFIXES) for _ in range(n_cities)]
    people = [
        f"{names.pick(_FIRST_NAMES)} {names.word(2 + int(rng.integers(2)))}" for _ in range(3 * n_cities)
    ]
    companies = [f"{names.word(2)} {names.pick(_COMPANY_SUFFIXES)}" for _ in range(n_cities)]

    world = World(names={"river": rivers, "city": cities, "person": people, "company": companies})
    objects: dict[tuple[str, str], dict[str, str]] = {}
    for river in rivers:
        objects[("river", river)] = {
            "length": str(int(rng.integers(40, 3000))),
            "mouth": f"the {names.word(2)} Sea",
        }
        world.answers[river] = (river, f"the river {river}", f"{river} river")
    for city in cities:
        objects[("city", city)] = {
            "country": names.pick(countries),
            "city_founded": str(int(rng.integers(800, 1900))),
            "river": names.pick(rivers),
            "mayor": names.pick(people),
        }
    for person in people:
        objects[("person", person)] = {
            "born_year": str(int(rng.integers(1900, 2001))),
            "birthplace": names.pick(cities),
            "occupation": names.pick(_OCCUPATIONS),
            "employer": names.pick(companies),
        }
    for company in companies:
        objects[("company", company)] = {
            "founded_year": str(int(rng.integers(1800, 2020))),
            "founder": names.pick(people),
            "headquarters": names.pick(cities),
            "industry": names.pick(_INDUSTRIES),
        }
    _render(world, objects, rng, n_passages)
    return world


def _render(
    world: World, objects: dict[tuple[str, str], dict[str, str]], rng: np.random.Generator, n_passages: int
) -> None:
    """Write each entity's facts as one or two passages, stopping at ``n_passages``.

    Entities are written in an interleaved order so that a cut at ``n_passages`` drops whole
    passages (their facts become unknown to the question generator), never half a fact.
    """
    by_relation = {r.name: r for r in RELATIONS}
    keys = list(objects)
    order = rng.permutation(len(keys))
    for index in order:
        kind, name = keys[int(index)]
        relation_names = list(objects[(kind, name)])
        split = int(rng.integers(1, len(relation_names))) if len(relation_names) > 2 else len(relation_names)
        groups = (
            [relation_names[:split], relation_names[split:]]
            if split < len(relation_names)
            else [relation_names]
        )
        for group in groups:
            if len(world.passages) >= n_passages:
                return
            passage_id = str(len(world.passages))
            sentences = []
            for relation_name in group:
                obj = objects[(kind, name)][relation_name]
                shown = f"{_article(obj)} {obj}" if relation_name == "occupation" else obj
                sentences.append(by_relation[relation_name].sentence.format(s=name, o=shown))
                world.facts.setdefault((kind, name), {})[relation_name] = (obj, passage_id)
            sentences.insert(
                int(rng.integers(len(sentences) + 1)), _FILLERS[int(rng.integers(len(_FILLERS)))]
            )
            world.passages.append(Passage(id=passage_id, title=name, text=" ".join(sentences)))


def _article(word: str) -> str:
    return "an" if word[:1].lower() in "aeiou" else "a"


def generate_questions(
    world: World, n_questions: int, *, seed: int = 0, id_prefix: str = "q"
) -> list[Question]:
    """Draw ``n_questions`` distinct questions from the world's facts.

    Args:
        world: from :func:`generate_world`.
        n_questions: how many to draw (fewer when the world has fewer distinct chains).
        seed: seed of the generator.
        id_prefix: task ids are ``<id_prefix><n>``.

    Returns:
        The questions, with golden answers and supporting passage ids.
    """
    rng = np.random.default_rng(seed)
    by_subject: dict[str, list[Relation]] = {}
    for relation in RELATIONS:
        by_subject.setdefault(relation.subject, []).append(relation)
    subjects = [
        (kind, name) for kind, names in world.names.items() for name in names if (kind, name) in world.facts
    ]
    seen: set[str] = set()
    questions: list[Question] = []
    attempts = 0
    while len(questions) < n_questions and attempts < 50 * max(1, n_questions) and subjects:
        attempts += 1
        hops = 1 + int(rng.choice(len(_HOP_MIX), p=_HOP_MIX))
        start = subjects[int(rng.integers(len(subjects)))]
        chain = _walk(world, by_subject, start, hops, rng)
        if chain is None:
            continue
        text, answer, supporting = chain
        if text in seen:
            continue
        seen.add(text)
        golden = world.answers.get(answer, (answer,))
        questions.append(
            Question(
                id=f"{id_prefix}{len(questions):05d}",
                question=text,
                golden_answers=tuple(dict.fromkeys(golden)),
                supporting_ids=tuple(supporting),
                data_source=DATA_SOURCE,
                hops=hops,
            )
        )
    return questions


def _walk(
    world: World,
    by_subject: dict[str, list[Relation]],
    start: tuple[str, str],
    hops: int,
    rng: np.random.Generator,
) -> tuple[str, str, list[str]] | None:
    """Follow ``hops`` known facts from ``start``; returns (question, answer, supporting ids)."""
    kind, name = start
    phrase = name
    supporting: list[str] = []
    for hop in range(hops):
        last = hop == hops - 1
        known = world.facts.get((kind, name), {})
        options = [
            r
            for r in by_subject.get(kind, [])
            if r.name in known and (last or (r.target is not None and r.phrase is not None))
        ]
        if not options:
            return None
        relation = options[int(rng.integers(len(options)))]
        obj, passage_id = known[relation.name]
        supporting.append(passage_id)
        if last:
            return relation.question.format(s=phrase), obj, supporting
        if relation.phrase is None or relation.target is None:  # excluded by the filter above
            return None
        phrase = relation.phrase.format(s=phrase)
        kind, name = relation.target, obj
    return None


def write_world(
    out: Path,
    *,
    n_passages: int,
    n_train: int,
    n_test: int,
    seed: int = 0,
    parquet: bool = False,
    prompt: str | None = None,
) -> dict[str, int]:
    """Generate a world and write it as a dataset directory (the layout ``load_dataset`` reads).

    Writes ``corpus.jsonl``, ``train.jsonl`` and ``test.jsonl`` (and, with ``parquet``,
    ``train.parquet``/``test.parquet`` as Search-R1 processed rows using ``prompt``).

    Returns:
        The number of passages and of questions per split.
    """
    world = generate_world(n_passages, seed=seed)
    questions = generate_questions(world, n_train + n_test, seed=seed + 1)
    train = [_renamed(q, f"train-{i:05d}") for i, q in enumerate(questions[:n_train])]
    test = [_renamed(q, f"test-{i:05d}") for i, q in enumerate(questions[n_train:])]
    out = Path(out)
    write_corpus_jsonl(world.passages, out / "corpus.jsonl")
    write_questions_jsonl(train, out / "train.jsonl")
    write_questions_jsonl(test, out / "test.jsonl")
    if parquet:
        template = prompt or PARQUET_PROMPT
        write_questions_parquet(train, out / "train.parquet", split="train", prompt=template)
        write_questions_parquet(test, out / "test.parquet", split="test", prompt=template)
    return {"passages": len(world.passages), "train": len(train), "test": len(test)}


def _renamed(question: Question, new_id: str) -> Question:
    return Question(
        id=new_id,
        question=question.question,
        golden_answers=question.golden_answers,
        supporting_ids=question.supporting_ids,
        data_source=question.data_source,
        hops=question.hops,
    )
