"""The retriever factory: a retriever by name (``bm25``, ``dense`` or ``remote``).

It sits above the interface (:mod:`envhub.envs.search.retrieval`) and the three backends,
which import only the interface; the backends load here on first use, since each needs an
optional extra (bm25s, sentence-transformers, httpx).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from envhub.core.errors import ConfigurationError
from envhub.envs.search.data import Passage
from envhub.envs.search.retrieval import Retriever

__all__ = ["RETRIEVER_KINDS", "make_retriever"]

#: Names accepted by :func:`make_retriever` (and the env's ``retriever=`` argument).
RETRIEVER_KINDS = ("bm25", "dense", "remote")


def make_retriever(
    kind: str,
    *,
    corpus_path: Path | None = None,
    passages: Sequence[Passage] | None = None,
    index_dir: Path | None = None,
    url: str | None = None,
    **options: Any,
) -> Retriever:
    """Build a retriever by name.

    Args:
        kind: one of :data:`RETRIEVER_KINDS`.
        corpus_path: the corpus jsonl (``bm25``/``dense``; the index is cached next to it).
        passages: the corpus already loaded (saves reading it again).
        index_dir: where to cache the index (default: :func:`default_index_dir`).
        url: the ``/retrieve`` endpoint (``remote`` only).
        options: passed to the retriever's constructor.

    Raises:
        ConfigurationError: unknown kind, or the inputs the kind needs are missing.
        DependencyMissingError: the kind's extra is not installed.
    """
    if kind == "remote":
        if not url:
            raise ConfigurationError(
                "retriever='remote' needs retriever_url, e.g. 'http://127.0.0.1:8000/retrieve' "
                "(start one with `envhub serve-retriever`).",
                kind=kind,
            )
        from envhub.envs.search.remote import RemoteRetriever

        return RemoteRetriever(url, **options)
    if kind not in RETRIEVER_KINDS:
        raise ConfigurationError(
            f"Unknown retriever {kind!r}; use one of {list(RETRIEVER_KINDS)}.",
            kind=kind,
            kinds=list(RETRIEVER_KINDS),
        )
    if corpus_path is None:
        raise ConfigurationError(f"retriever={kind!r} needs a corpus path (corpus.jsonl).", kind=kind)
    if kind == "bm25":
        from envhub.envs.search.bm25 import BM25Retriever

        return BM25Retriever.from_corpus(corpus_path, passages=passages, index_dir=index_dir, **options)
    from envhub.envs.search.dense import DenseRetriever

    return DenseRetriever.from_corpus(corpus_path, passages=passages, index_dir=index_dir, **options)
