"""Search-QA data: passages, questions and the loaders for Search-R1's formats.

Two on-disk formats are read, both as Search-R1 and FlashRAG publish them:

* **corpus** ``*.jsonl``: one passage per line, ``{"id": "0", "contents": "\\"Title\\"\\ntext"}``
  (the title is the first line of ``contents``, in double quotes);
* **questions**, one file per split, either FlashRAG's raw jsonl rows
  (``{"id", "question", "golden_answers", "metadata"}``) or Search-R1's processed parquet rows
  (``{"data_source", "prompt": [{"role", "content"}], "ability",
  "reward_model": {"style", "ground_truth": {"target": [...]}}, "extra_info": {"split", "index"}}``),
  where the question is read from the ``question`` column when present and otherwise from the
  prompt text after ``Question:``.

A dataset directory holds ``corpus.jsonl`` and ``<split>.jsonl`` or ``<split>.parquet`` for
each split. envhub's own generator (:mod:`envhub.envs.search.fixtures`) writes this layout,
and a small generated dataset ships as package data (the embedded default).
"""

from __future__ import annotations

import importlib.util
import json
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from envhub.core.errors import ConfigurationError, DataNotFoundError, DependencyMissingError
from envhub.core.registry import DataStatus
from envhub.envs.search.settings import SearchSettings

__all__ = [
    "EMBEDDED_DATA_DIR",
    "Passage",
    "Question",
    "SearchDataset",
    "data_status",
    "default_data_dir",
    "load_corpus",
    "load_dataset",
    "load_questions",
    "read_corpus_jsonl",
    "write_corpus_jsonl",
    "write_questions_jsonl",
    "write_questions_parquet",
]

#: The generated dataset shipped with envhub (the embedded default and the test fixture).
EMBEDDED_DATA_DIR = Path(__file__).resolve().parent / "data"

_HOW_TO_GET = (
    "point ENVHUB_SEARCH_DATA_DIR at a directory with corpus.jsonl and train/test question files "
    "(Search-R1 parquet or FlashRAG jsonl), or generate one with `envhub data search generate --out DIR`."
)


@dataclass(frozen=True)
class Passage:
    """One retrievable passage.

    Attributes:
        id: the corpus id (a string, as in Search-R1's corpora).
        title: the passage title (the first line of ``contents``, without quotes).
        text: the passage body.
    """

    id: str
    title: str
    text: str

    @property
    def contents(self) -> str:
        """The Search-R1 ``contents`` field: the quoted title, a newline, then the text."""
        return f'"{self.title}"\n{self.text}'

    @classmethod
    def from_contents(cls, id: str, contents: str) -> Passage:
        """Split a Search-R1 ``contents`` string into title and text."""
        title, _, text = contents.partition("\n")
        return cls(id=str(id), title=title.strip().strip('"'), text=text.strip())


@dataclass(frozen=True)
class Question:
    """One QA task.

    Attributes:
        id: the task id.
        question: the question text.
        golden_answers: every accepted answer (EM against any of them wins).
        supporting_ids: corpus ids of the passages that hold the needed facts (may be empty
            for real datasets, which do not record them).
        data_source: the dataset the question comes from (``nq``, ``hotpotqa``, ``envhub-world``).
        hops: number of retrieval hops the question needs (0 when unknown).
    """

    id: str
    question: str
    golden_answers: tuple[str, ...]
    supporting_ids: tuple[str, ...] = ()
    data_source: str = "unknown"
    hops: int = 0

    def to_row(self) -> dict[str, Any]:
        """The FlashRAG-style jsonl row envhub writes."""
        return {
            "id": self.id,
            "question": self.question,
            "golden_answers": list(self.golden_answers),
            "data_source": self.data_source,
            "metadata": {"supporting_ids": list(self.supporting_ids), "hops": self.hops},
        }


@dataclass(frozen=True)
class SearchDataset:
    """A corpus and its question splits, as loaded from one directory."""

    root: Path
    corpus_path: Path
    passages: tuple[Passage, ...]
    splits: Mapping[str, tuple[Question, ...]] = field(default_factory=dict)

    def question_index(self) -> dict[str, Question]:
        """Every question of every split by id."""
        return {q.id: q for questions in self.splits.values() for q in questions}


# -- corpus -------------------------------------------------------------------------------------


def read_corpus_jsonl(path: Path) -> Iterator[Passage]:
    """Yield the passages of a Search-R1 corpus jsonl file, in file order.

    Raises:
        DataNotFoundError: the file does not exist.
        ConfigurationError: a line is not a ``{"id", "contents"}`` JSON object.
    """
    path = Path(path)
    if not path.is_file():
        raise DataNotFoundError(
            "The Search-QA corpus", path=path, env_var="ENVHUB_SEARCH_DATA_DIR", how_to_get=_HOW_TO_GET
        )
    with path.open(encoding="utf-8") as handle:
        for number, line in enumerate(handle, start=1):
            if not line.strip():
                continue
            try:
                row = json.loads(line)
                yield Passage.from_contents(str(row["id"]), str(row["contents"]))
            except (json.JSONDecodeError, KeyError, TypeError) as exc:
                raise ConfigurationError(
                    f"{path}:{number} is not a corpus row; each line must be a JSON object "
                    '{"id": ..., "contents": "\\"Title\\"\\ntext"} as in Search-R1\'s wiki-18.jsonl.',
                    path=str(path),
                    line=number,
                ) from exc


def load_corpus(path: Path) -> tuple[Passage, ...]:
    """All passages of a corpus jsonl file (see :func:`read_corpus_jsonl`)."""
    return tuple(read_corpus_jsonl(path))


def write_corpus_jsonl(passages: Iterable[Passage], path: Path) -> None:
    """Write passages as Search-R1 corpus jsonl (``{"id", "contents"}`` per line)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", encoding="utf-8") as handle:
        for passage in passages:
            handle.write(
                json.dumps({"id": passage.id, "contents": passage.contents}, ensure_ascii=False) + "\n"
            )


# -- questions ------------------------------------------------------------------------------------


def load_questions(path: Path, *, split: str | None = None) -> tuple[Question, ...]:
    """Load a question file: FlashRAG jsonl rows or Search-R1 processed parquet rows.

    Args:
        path: a ``.jsonl`` or ``.parquet`` file.
        split: used to build ids for rows that carry none (``<split>_<index>``).

    Returns:
        The questions in file order.

    Raises:
        DataNotFoundError: the file does not exist.
        DependencyMissingError: a parquet file was given and pyarrow is not installed.
        ConfigurationError: a row has no question or no golden answer.
    """
    path = Path(path)
    if not path.is_file():
        raise DataNotFoundError(
            "The Search-QA question file", path=path, env_var="ENVHUB_SEARCH_DATA_DIR", how_to_get=_HOW_TO_GET
        )
    prefix = split or path.stem
    rows = _read_parquet_rows(path) if path.suffix == ".parquet" else _read_jsonl_rows(path)
    return tuple(_question_from_row(row, index=i, prefix=prefix, source=path) for i, row in enumerate(rows))


def _read_jsonl_rows(path: Path) -> list[dict[str, Any]]:
    rows = []
    with path.open(encoding="utf-8") as handle:
        for number, line in enumerate(handle, start=1):
            if line.strip():
                try:
                    rows.append(json.loads(line))
                except json.JSONDecodeError as exc:
                    raise ConfigurationError(
                        f"{path}:{number} is not valid JSON.", path=str(path), line=number
                    ) from exc
    return rows


def _read_parquet_rows(path: Path) -> list[dict[str, Any]]:
    try:
        import pyarrow.parquet as pq
    except ImportError as exc:
        raise DependencyMissingError("pyarrow", extra="search") from exc
    rows: list[dict[str, Any]] = pq.read_table(path).to_pylist()
    return rows


def _question_from_row(row: Mapping[str, Any], *, index: int, prefix: str, source: Path) -> Question:
    """Normalise one FlashRAG or Search-R1 row into a :class:`Question`."""
    extra = row.get("extra_info") or {}
    metadata = row.get("metadata") or {}
    question = row.get("question") or extra.get("question") or _question_from_prompt(row.get("prompt"))
    golden = row.get("golden_answers")
    if golden is None:
        ground_truth = (row.get("reward_model") or {}).get("ground_truth") or {}
        golden = ground_truth.get("target") if isinstance(ground_truth, Mapping) else ground_truth
    if isinstance(golden, str):
        golden = [golden]
    if not question or not golden:
        raise ConfigurationError(
            f"{source}: row {index} has no question or no golden answers; rows need 'question' (or a "
            "Search-R1 'prompt') and 'golden_answers' (or 'reward_model.ground_truth.target').",
            path=str(source),
            row=index,
        )
    row_id = row.get("id")
    if row_id is None:
        row_id = f"{prefix}_{extra.get('index', index)}"
    supporting = metadata.get("supporting_ids") or extra.get("supporting_ids") or ()
    return Question(
        id=str(row_id),
        question=str(question).strip(),
        golden_answers=tuple(str(g) for g in golden),
        supporting_ids=tuple(str(s) for s in supporting),
        data_source=str(row.get("data_source") or metadata.get("data_source") or "unknown"),
        hops=int(metadata.get("hops") or extra.get("hops") or 0),
    )


def _question_from_prompt(prompt: Any) -> str | None:
    """The question inside a Search-R1 prompt (the text after the last ``Question:``)."""
    if not prompt:
        return None
    messages = prompt if isinstance(prompt, Sequence) and not isinstance(prompt, str) else [prompt]
    for message in reversed(list(messages)):
        content = message.get("content", "") if isinstance(message, Mapping) else str(message)
        if "Question:" in content:
            return content.rpartition("Question:")[2].strip() or None
    return None


def write_questions_jsonl(questions: Iterable[Question], path: Path) -> None:
    """Write questions as FlashRAG-style jsonl rows (with envhub's ``metadata``)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", encoding="utf-8") as handle:
        for question in questions:
            handle.write(json.dumps(question.to_row(), ensure_ascii=False) + "\n")


def write_questions_parquet(questions: Sequence[Question], path: Path, *, split: str, prompt: str) -> None:
    """Write questions as Search-R1 processed parquet rows, ready for Search-R1/verl-agent training.

    Args:
        questions: the rows to write.
        path: the ``.parquet`` file.
        split: stored in ``extra_info.split``.
        prompt: the user-message template with a ``{question}`` field.

    Raises:
        DependencyMissingError: pyarrow is not installed.
    """
    try:
        import pyarrow as pa
        import pyarrow.parquet as pq
    except ImportError as exc:
        raise DependencyMissingError("pyarrow", extra="search") from exc
    rows = [
        {
            "id": q.id,
            "question": q.question,
            "golden_answers": list(q.golden_answers),
            "data_source": q.data_source,
            "prompt": [{"role": "user", "content": prompt.format(question=q.question)}],
            "ability": "fact-reasoning",
            "reward_model": {"style": "rule", "ground_truth": {"target": list(q.golden_answers)}},
            "extra_info": {
                "split": split,
                "index": i,
                "supporting_ids": list(q.supporting_ids),
                "hops": q.hops,
            },
        }
        for i, q in enumerate(questions)
    ]
    path.parent.mkdir(parents=True, exist_ok=True)
    pq.write_table(pa.Table.from_pylist(rows), path)


# -- datasets ---------------------------------------------------------------------------------------


def default_data_dir(settings: SearchSettings | None = None) -> Path:
    """The dataset directory to use: ``ENVHUB_SEARCH_DATA_DIR`` if set, else the embedded one."""
    settings = settings or SearchSettings()
    return Path(settings.data_dir) if settings.data_dir is not None else EMBEDDED_DATA_DIR


def load_dataset(root: Path, *, splits: Sequence[str] = ("train", "test")) -> SearchDataset:
    """Load ``root/corpus.jsonl`` and one question file per split.

    Each split is read from ``<split>.jsonl`` if present, else ``<split>.parquet``.

    Raises:
        DataNotFoundError: the corpus or a split's question file is missing.
    """
    root = Path(root)
    corpus_path = root / "corpus.jsonl"
    passages = load_corpus(corpus_path)
    loaded: dict[str, tuple[Question, ...]] = {}
    for split in splits:
        candidates = [root / f"{split}.jsonl", root / f"{split}.parquet"]
        found = next((c for c in candidates if c.is_file()), None)
        if found is None:
            raise DataNotFoundError(
                f"The {split!r} question file (tried {', '.join(c.name for c in candidates)})",
                path=root,
                env_var="ENVHUB_SEARCH_DATA_DIR",
                how_to_get=_HOW_TO_GET,
            )
        loaded[split] = load_questions(found, split=split)
    return SearchDataset(root=root, corpus_path=corpus_path, passages=passages, splits=loaded)


def data_status() -> DataStatus:
    """Whether ``envhub/SearchQA-v0`` can run here (used by ``envhub list``)."""
    if importlib.util.find_spec("bm25s") is None:
        return DataStatus(
            available=False, source="-", how_to_get="pip install 'envhub-rl[search]' (needs bm25s)"
        )
    root = default_data_dir()
    if not (root / "corpus.jsonl").is_file():
        return DataStatus(available=False, source=str(root), how_to_get=_HOW_TO_GET)
    source = "embedded (generated)" if root == EMBEDDED_DATA_DIR else str(root)
    return DataStatus(available=True, source=source)
