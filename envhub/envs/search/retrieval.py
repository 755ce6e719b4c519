"""The retriever interface and Search-R1's result formatting.

Every retriever answers a *batch* of queries with, per query, up to ``k`` :class:`Hit` s,
best first. Three implementations exist: :class:`~envhub.envs.search.bm25.BM25Retriever`
(bm25s, the default), :class:`~envhub.envs.search.dense.DenseRetriever` (sentence-transformers,
extra ``envhub-rl[search-dense]``) and :class:`~envhub.envs.search.remote.RemoteRetriever` (any
server that speaks Search-R1's ``POST /retrieve``, including ``envhub serve-retriever``).
They import this module; the factory that picks one by name,
:func:`envhub.envs.search.retrievers.make_retriever`, sits above them, so the imports run
one way only.
"""

from __future__ import annotations

import hashlib
import os
from abc import ABC, abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from envhub.envs.search.data import EMBEDDED_DATA_DIR, Passage
from envhub.envs.search.settings import SearchSettings

__all__ = [
    "Hit",
    "Retriever",
    "corpus_fingerprint",
    "default_index_dir",
    "format_information",
    "information_observation",
]


@dataclass(frozen=True)
class Hit:
    """One retrieved passage and its score (higher is better)."""

    passage: Passage
    score: float


class Retriever(ABC):
    """Ranks passages for text queries.

    Implementations must be safe to call from several threads at once (the retrieval
    server runs requests in a thread pool) and deterministic for a fixed index.
    """

    #: Short name reported by ``/health`` and the benchmark.
    name: str = "retriever"

    @abstractmethod
    def search(self, queries: Sequence[str], k: int) -> list[list[Hit]]:
        """Rank passages for each query.

        Args:
            queries: the query texts.
            k: the most hits to return per query.

        Returns:
            One list per query, best hit first, at most ``k`` long.
        """

    def search_one(self, query: str, k: int) -> list[Hit]:
        """:meth:`search` for a single query."""
        return self.search([query], k)[0]

    @property
    @abstractmethod
    def size(self) -> int:
        """Number of indexed passages (``-1`` when unknown, e.g. for a remote index)."""

    def close(self) -> None:  # noqa: B027 -- optional hook: most retrievers hold nothing to release
        """Release connections or memory held by the retriever."""


def format_information(hits: Sequence[Hit]) -> str:
    """Search-R1's passage listing: ``Doc {i}(Title: {first line}) {rest}`` per hit, one per line.

    The title is the first line of ``contents`` as stored (Search-R1 keeps its quotes).
    """
    lines = []
    for i, hit in enumerate(hits, start=1):
        title, _, text = hit.passage.contents.partition("\n")
        lines.append(f"Doc {i}(Title: {title}) {text}")
    return "\n".join(lines)


def information_observation(hits: Sequence[Hit]) -> str:
    """The observation after a search, exactly as Search-R1 appends it to the rollout."""
    return f"\n\n<information>{format_information(hits).strip()}</information>\n\n"


def corpus_fingerprint(path: Path) -> str:
    """SHA-256 of a corpus file's bytes: an index built from other bytes is stale."""
    digest = hashlib.sha256()
    with Path(path).open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def default_index_dir(corpus_path: Path, kind: str, *, settings: SearchSettings | None = None) -> Path:
    """Where the index of ``corpus_path`` is cached.

    Next to the corpus (``<stem>.<kind>/``) when that directory is writable; under the settings'
    ``cache_dir`` for envhub's own package data (so the source tree stays clean) and for
    read-only corpus directories.
    """
    corpus_path = Path(corpus_path).resolve()
    parent = corpus_path.parent
    if parent != EMBEDDED_DATA_DIR and os.access(parent, os.W_OK):
        return parent / f"{corpus_path.stem}.{kind}"
    settings = settings or SearchSettings()
    key = hashlib.sha256(str(corpus_path).encode()).hexdigest()[:16]
    return Path(settings.cache_dir) / f"{corpus_path.stem}-{key}.{kind}"
