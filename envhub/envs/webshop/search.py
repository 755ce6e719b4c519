"""The shop's search engine: BM25 over the documents WebShop indexes.

WebShop indexes, per product, ``lower(Title + " " + Description + " " + BulletPoints[0] +
" " + option text)`` (option text = ``"name: v1, v2, and name2: ..."``) with Lucene's
English analyser and BM25 (k1 = 0.9, b = 0.4), and shows the top 50 hits, 10 per page.
envhub uses bm25s in its Lucene mode with the same parameters, Lucene's 33 English stop
words and the Porter stemmer (PyStemmer); on WebShop's own queries its top-10 sets matched
pyserini's (reference notes B5).
"""

from __future__ import annotations

from collections.abc import Sequence

from envhub.core.errors import DependencyMissingError
from envhub.envs.webshop.catalogue import Catalogue, Product

__all__ = ["PAGE_SIZE", "SEARCH_RETURN_N", "SearchIndex", "document_text"]

#: Results a search returns (WebShop's ``SEARCH_RETURN_N``).
SEARCH_RETURN_N = 50
#: Results per page (WebShop's ``PRODUCT_WINDOW``).
PAGE_SIZE = 10


def document_text(product: Product) -> str:
    """The text WebShop indexes for ``product`` (its ``documents.jsonl`` ``contents``)."""
    option_text = ", and ".join(f"{name}: {', '.join(values)}" for name, values in product.options.items())
    first_bullet = product.bullet_points[0] if product.bullet_points else ""
    return " ".join([product.title, product.description, first_bullet, option_text]).lower()


class SearchIndex:
    """A BM25 index over a catalogue's products.

    Args:
        catalogue: the products to index.

    Raises:
        DependencyMissingError: bm25s is not installed.
    """

    def __init__(self, catalogue: Catalogue) -> None:
        try:
            import bm25s
        except ImportError as exc:
            raise DependencyMissingError("bm25s", extra="webshop") from exc
        self._bm25s = bm25s
        self._asins = [p.asin for p in catalogue.products]
        self._stemmer = _porter_stemmer()
        corpus = [document_text(p) for p in catalogue.products]
        self._retriever = bm25s.BM25(method="lucene", k1=0.9, b=0.4)
        self._retriever.index(self._tokenize(corpus), show_progress=False)

    def _tokenize(self, texts: Sequence[str]) -> object:
        return self._bm25s.tokenize(list(texts), stopwords="en", stemmer=self._stemmer, show_progress=False)

    def search(self, query: str, k: int = SEARCH_RETURN_N) -> list[str]:
        """The asins of the best ``k`` products for ``query``, best first (only positive scores)."""
        if not self._asins or not query.strip():
            return []
        tokens = self._tokenize([query])
        docs, scores = self._retriever.retrieve(tokens, k=min(k, len(self._asins)), show_progress=False)
        return [self._asins[int(i)] for i, s in zip(docs[0], scores[0], strict=True) if s > 0]


def _porter_stemmer() -> object | None:
    """Lucene's English analyser stems with Porter; PyStemmer provides the same algorithm."""
    try:
        import Stemmer
    except ImportError:
        return None
    return Stemmer.Stemmer("porter")
