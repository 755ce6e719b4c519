"""Wire models of Search-R1's retrieval API (``POST /retrieve``), shared by server and client.

Request: ``{"queries": [str, ...], "topk": int | null, "return_scores": bool}``. Response:
``{"result": [[...], ...]}`` with one list per query; each item is
``{"document": {"id", "contents"}, "score": float}`` when ``return_scores`` is true and the bare
document ``{"id", "contents"}`` otherwise. SkyRL/verl-agent's single-query form
``{"query": str, ...}`` is accepted too and answered in the same batch shape.
"""

from __future__ import annotations

from typing import Self

from pydantic import BaseModel, ConfigDict, Field, model_validator

__all__ = [
    "MAX_QUERIES",
    "MAX_TOPK",
    "Document",
    "HealthResponse",
    "RetrieveRequest",
    "RetrieveResponse",
    "ScoredDocument",
]

#: Most queries one request may carry (a guard against accidental corpus-sized batches).
MAX_QUERIES = 4096
#: Largest ``topk`` a request may ask for.
MAX_TOPK = 1000


class RetrieveRequest(BaseModel):
    """Body of ``POST /retrieve``."""

    model_config = ConfigDict(
        extra="forbid",
        json_schema_extra={"examples": [{"queries": ["Who established Velmora Dynamics?"], "topk": 3}]},
    )

    queries: list[str] | None = Field(
        default=None, max_length=MAX_QUERIES, description="The queries of the batch (Search-R1)."
    )
    query: str | None = Field(default=None, description="A single query (SkyRL/verl-agent's search tool).")
    topk: int | None = Field(
        default=None, ge=1, le=MAX_TOPK, description="Passages per query; null = the server's default."
    )
    return_scores: bool = Field(default=False, description="Wrap each document as {document, score}.")

    @model_validator(mode="after")
    def _one_form(self) -> Self:
        if (self.queries is None) == (self.query is None):
            raise ValueError("give exactly one of 'queries' (a list of strings) or 'query' (one string)")
        return self

    def all_queries(self) -> list[str]:
        """The request's queries as a list, whichever form it used."""
        return list(self.queries) if self.queries is not None else [str(self.query)]


class Document(BaseModel):
    """A corpus row as Search-R1 returns it."""

    # Foreign corpora carry extra columns (title, text) and may use integer ids; a client
    # keeps what it needs.
    model_config = ConfigDict(extra="ignore", coerce_numbers_to_str=True)

    id: str = Field(description="Corpus id.")
    contents: str = Field(description='"Title"\\ntext, as in the corpus jsonl.')


class ScoredDocument(BaseModel):
    """A document and its retrieval score (``return_scores=true``)."""

    model_config = ConfigDict(extra="ignore")

    document: Document
    score: float = Field(description="Retriever score; higher is better.")


class RetrieveResponse(BaseModel):
    """Body of the ``POST /retrieve`` reply: one list per query, best first."""

    model_config = ConfigDict(extra="forbid")

    result: list[list[ScoredDocument]] | list[list[Document]] = Field(description="Per-query results.")


class HealthResponse(BaseModel):
    """Body of ``GET /health``."""

    model_config = ConfigDict(extra="forbid")

    status: str = Field(description='"ok" once the index is loaded.')
    retriever: str = Field(description="Retriever kind (bm25, dense, remote).")
    passages: int = Field(description="Indexed passages (-1 when unknown).")
    default_topk: int = Field(description="topk used when a request gives none.")
