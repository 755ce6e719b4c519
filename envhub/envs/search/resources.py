"""Corpora, datasets and local indexes shared by the env instances of one process.

An env server or a rollout creates one ``SearchQAEnv`` per session, often a group of 8 at
once, all over the same corpus. Loading a 100k-passage corpus and its index takes seconds
and tens of MiB, so instances share them: each loader below keeps the last few results,
keyed by the files' paths *and* their size and modification time, so an edited file is read
again. What is shared is never mutated after loading (passages are frozen dataclasses, the
retrievers' arrays are read-only in use), which is what makes sharing safe across threads.
Remote retrievers are not shared: each env owns its HTTP client.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from pathlib import Path

from envhub.core.filestamp import FileStamp, file_stamp
from envhub.envs.search.data import (
    Passage,
    Question,
    SearchDataset,
    load_corpus,
    load_dataset,
    load_questions,
)
from envhub.envs.search.retrieval import Retriever
from envhub.envs.search.retrievers import make_retriever

__all__ = ["shared_dataset", "shared_retriever"]


@functools.lru_cache(maxsize=4)
def _corpus(path: str, stamp: FileStamp) -> tuple[Passage, ...]:
    return load_corpus(Path(path))


@functools.lru_cache(maxsize=8)
def _questions(path: str, split: str, stamp: FileStamp) -> tuple[Question, ...]:
    return load_questions(Path(path), split=split)


def shared_dataset(root: Path, splits: Sequence[str]) -> SearchDataset:
    """:func:`~envhub.envs.search.data.load_dataset`, sharing what was already loaded.

    Raises:
        DataNotFoundError: the corpus or a split's question file is missing.
    """
    root = Path(root).resolve()
    corpus_path = root / "corpus.jsonl"
    passages = _corpus(str(corpus_path), file_stamp([corpus_path]))
    loaded: dict[str, tuple[Question, ...]] = {}
    for split in splits:
        found = next((c for c in (root / f"{split}.jsonl", root / f"{split}.parquet") if c.is_file()), None)
        if found is None:
            return load_dataset(root, splits=splits)  # raises the "missing split" error with its advice
        loaded[split] = _questions(str(found), split, file_stamp([found]))
    return SearchDataset(root=root, corpus_path=corpus_path, passages=passages, splits=loaded)


def shared_retriever(kind: str, corpus_path: Path, *, index_dir: Path | None = None) -> Retriever:
    """A local (``bm25`` or ``dense``) retriever over ``corpus_path``, shared per process.

    Raises:
        ConfigurationError: unknown kind.
        DependencyMissingError: the kind's extra is not installed.
    """
    corpus_path = Path(corpus_path).resolve()
    stamp = file_stamp([corpus_path])
    return _retriever(
        kind, str(corpus_path), None if index_dir is None else str(Path(index_dir).resolve()), stamp
    )


@functools.lru_cache(maxsize=4)
def _retriever(kind: str, corpus_path: str, index_dir: str | None, stamp: FileStamp) -> Retriever:
    return make_retriever(
        kind,
        corpus_path=Path(corpus_path),
        passages=_corpus(corpus_path, stamp),
        index_dir=None if index_dir is None else Path(index_dir),
    )
