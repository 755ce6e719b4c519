"""BM25 retrieval with bm25s, its index cached on disk next to the corpus.

bm25s builds the index (tokenise with its English stop words, Lucene BM25, k1=1.5, b=0.75)
and stores it as a sparse token-by-passage matrix of precomputed term scores. Querying reads
that matrix directly: a query's score vector is the sum of its tokens' rows, gathered with one
``numpy.bincount`` over the concatenated postings, and the top ``k`` come from ``k`` passes of
``argmax``. Scores equal ``bm25s.BM25.get_scores``; ties are broken by passage order, so a
ranking never depends on anything but the index and the query.
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from envhub.core.errors import DependencyMissingError
from envhub.envs.search.data import Passage, load_corpus
from envhub.envs.search.retrieval import Hit, Retriever, corpus_fingerprint, default_index_dir

__all__ = ["BM25Retriever"]

# bm25s's default tokenisation: lower case, words of two or more word characters.
_TOKEN = re.compile(r"(?u)\b\w\w+\b")
_META = "envhub-meta.json"
_FORMAT_VERSION = 1


def _bm25s() -> Any:
    try:
        import bm25s
    except ImportError as exc:
        raise DependencyMissingError("bm25s", extra="search") from exc
    return bm25s


class BM25Retriever(Retriever):
    """Lexical retrieval over a fixed corpus.

    Args:
        passages: the corpus, in index order.
        model: a built ``bm25s.BM25`` over ``passages`` (see :meth:`build` and :meth:`from_corpus`).
    """

    name = "bm25"

    def __init__(self, passages: Sequence[Passage], model: Any) -> None:
        bm25s = _bm25s()
        self._passages = tuple(passages)
        scores = model.scores
        self._data: NDArray[np.float32] = np.asarray(scores["data"], dtype=np.float32)
        self._indices: NDArray[np.int64] = np.asarray(scores["indices"], dtype=np.int64)
        self._indptr: NDArray[np.int64] = np.asarray(scores["indptr"], dtype=np.int64)
        self._n_docs = int(scores["num_docs"])
        self._vocab: dict[str, int] = dict(model.vocab_dict)
        self._stopwords = frozenset(bm25s.stopwords.STOPWORDS_EN)
        #: Seconds spent building or loading the index (reported by the benchmark).
        self.load_seconds = 0.0

    # -- construction ------------------------------------------------------------------------

    @classmethod
    def build(cls, passages: Sequence[Passage]) -> BM25Retriever:
        """Index ``passages`` in memory."""
        return cls(passages, _build_model(passages))

    @classmethod
    def from_corpus(
        cls,
        corpus_path: Path,
        *,
        passages: Sequence[Passage] | None = None,
        index_dir: Path | None = None,
        rebuild: bool = False,
    ) -> BM25Retriever:
        """Load the cached index of ``corpus_path``, building and saving it first if needed.

        The cache is valid only for the exact corpus bytes it was built from (a SHA-256 in
        ``envhub-meta.json``); an index that is missing, stale or unreadable is rebuilt. When
        the index directory cannot be written, the index is kept in memory only.

        Args:
            corpus_path: Search-R1 corpus jsonl.
            passages: the corpus already loaded from that file.
            index_dir: where the index lives (default: next to the corpus, see
                :func:`~envhub.envs.search.retrieval.default_index_dir`).
            rebuild: ignore any cached index.
        """
        start = time.perf_counter()
        corpus_path = Path(corpus_path)
        passages = tuple(passages) if passages is not None else load_corpus(corpus_path)
        index_dir = Path(index_dir) if index_dir is not None else default_index_dir(corpus_path, "bm25s")
        fingerprint = corpus_fingerprint(corpus_path)
        model = None if rebuild else _load_model(index_dir, fingerprint, len(passages))
        if model is None:
            model = _build_model(passages)
            _save_model(model, index_dir, fingerprint, len(passages))
        retriever = cls(passages, model)
        retriever.load_seconds = time.perf_counter() - start
        return retriever

    # -- queries ---------------------------------------------------------------------------------

    @property
    def size(self) -> int:
        return len(self._passages)

    @property
    def index_bytes(self) -> int:
        """Memory held by the score matrix."""
        return int(self._data.nbytes + self._indices.nbytes + self._indptr.nbytes)

    def token_ids(self, query: str) -> list[int]:
        """The query's tokens as index vocabulary ids (unknown words and stop words dropped)."""
        vocab, stop = self._vocab, self._stopwords
        ids = []
        for token in _TOKEN.findall(query.lower()):
            if token not in stop:
                token_id = vocab.get(token)
                if token_id is not None:
                    ids.append(token_id)
        return ids

    def scores(self, query: str) -> NDArray[np.float64]:
        """The BM25 score of every passage for ``query`` (zeros where no token matches)."""
        ids = self.token_ids(query)
        if not ids:
            return np.zeros(self._n_docs)
        rows = self._postings(ids)
        scores: NDArray[np.float64] = np.bincount(
            self._indices[rows], weights=self._data[rows], minlength=self._n_docs
        ).astype(np.float64, copy=False)
        return scores

    def search(self, queries: Sequence[str], k: int) -> list[list[Hit]]:
        return [self._search_one(query, k) for query in queries]

    def _search_one(self, query: str, k: int) -> list[Hit]:
        k = max(0, min(int(k), self._n_docs))
        if k == 0:
            return []
        return [Hit(self._passages[i], score) for i, score in _top_k(self.scores(query), k)]

    def _postings(self, ids: Sequence[int]) -> NDArray[np.int64]:
        """Positions in the score arrays of every posting of the given tokens."""
        starts, ends = self._indptr[list(ids)], self._indptr[np.asarray(ids) + 1]
        if len(ids) == 1:
            return np.arange(int(starts[0]), int(ends[0]))
        return np.concatenate([np.arange(s, e) for s, e in zip(starts.tolist(), ends.tolist(), strict=True)])


def _top_k(scores: NDArray[np.float64], k: int) -> list[tuple[int, float]]:
    """``(index, score)`` of the ``k`` best positive scores, best first, ties in index order.

    ``scores`` is used as scratch space (its maxima are overwritten).

    For the small ``k`` retrieval uses, ``k`` passes of ``argmax`` beat ``argpartition``,
    which degrades badly on score vectors that are mostly zeros (many ties).
    """
    if k <= 32:
        best: list[tuple[int, float]] = []
        for _ in range(k):
            i = int(np.argmax(scores))  # first maximum: ties go to the earlier passage
            score = float(scores[i])
            if score <= 0.0:
                break
            best.append((i, score))
            scores[i] = -np.inf
        return best
    positive = np.flatnonzero(scores > 0.0)
    order = np.lexsort((positive, -scores[positive]))[:k]
    return [(int(i), float(scores[i])) for i in positive[order]]


def _build_model(passages: Sequence[Passage]) -> Any:
    bm25s = _bm25s()
    tokens = bm25s.tokenize([p.contents for p in passages], stopwords="en", show_progress=False)
    model = bm25s.BM25()
    model.index(tokens, show_progress=False)
    return model


def _load_model(index_dir: Path, fingerprint: str, n_passages: int) -> Any | None:
    meta_path = index_dir / _META
    try:
        meta = json.loads(meta_path.read_text())
        if meta != {"version": _FORMAT_VERSION, "corpus_sha256": fingerprint, "passages": n_passages}:
            return None
        return _bm25s().BM25.load(str(index_dir), show_progress=False)
    except (OSError, ValueError, KeyError):
        return None  # missing or unreadable cache: rebuild


def _save_model(model: Any, index_dir: Path, fingerprint: str, n_passages: int) -> None:
    try:
        index_dir.mkdir(parents=True, exist_ok=True)
        model.save(str(index_dir), show_progress=False)
        meta = {"version": _FORMAT_VERSION, "corpus_sha256": fingerprint, "passages": n_passages}
        # The meta file is written last: an interrupted save leaves no valid-looking index.
        (index_dir / _META).write_text(json.dumps(meta))
    except OSError:
        pass  # a read-only location only costs a rebuild next time
