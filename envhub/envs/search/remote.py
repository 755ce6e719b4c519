"""A retriever that asks a Search-R1-compatible server (``POST /retrieve``) over HTTP.

Works against ``envhub serve-retriever``, Search-R1's own ``retrieval_server.py`` and anything
else speaking that API. Connection failures and 5xx replies are retried a few times with a
short backoff (as verl-agent's search tool does); what still fails raises
:class:`~envhub.core.errors.RetrieverUnavailableError`.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import cast

import httpx
from pydantic import BaseModel, ValidationError

from envhub.core.errors import RetrieverUnavailableError
from envhub.envs.search.data import Passage
from envhub.envs.search.protocol import Document, RetrieveRequest, RetrieveResponse, ScoredDocument
from envhub.envs.search.retrieval import Hit, Retriever

__all__ = ["RemoteRetriever"]


class RemoteRetriever(Retriever):
    """Batch retrieval through ``POST {url}``.

    Args:
        url: the full endpoint, e.g. ``http://127.0.0.1:8000/retrieve``.
        timeout_s: per-request timeout.
        retries: extra attempts after a connection error or a 5xx reply.
        backoff_s: sleep before the first retry (doubles each time).
        transport: an httpx transport to use instead of the network (tests, in-process apps).
        token: bearer token of a server started with one (``envhub serve-retriever --token``).
    """

    name = "remote"

    def __init__(
        self,
        url: str,
        *,
        timeout_s: float = 30.0,
        retries: int = 3,
        backoff_s: float = 0.2,
        transport: httpx.BaseTransport | None = None,
        token: str | None = None,
    ) -> None:
        self.url = url
        self._retries = max(0, int(retries))
        self._backoff_s = backoff_s
        headers = {"Authorization": f"Bearer {token}"} if token else None
        self._client = httpx.Client(timeout=timeout_s, transport=transport, headers=headers)

    @property
    def size(self) -> int:
        return -1

    def search(self, queries: Sequence[str], k: int) -> list[list[Hit]]:
        if not queries:
            return []
        body = RetrieveRequest(queries=list(queries), topk=max(1, int(k)), return_scores=True)
        reply = self._post(body.model_dump(exclude_none=True))
        try:
            parsed = RetrieveResponse.model_validate(reply)
        except ValidationError as exc:
            raise RetrieverUnavailableError(
                self.url, reason=f"the reply is not a /retrieve response: {exc}"
            ) from exc
        if len(parsed.result) != len(queries):
            raise RetrieverUnavailableError(
                self.url, reason=f"{len(parsed.result)} result lists for {len(queries)} queries"
            )
        return [[_hit(item, rank) for rank, item in enumerate(row)][:k] for row in parsed.result]

    def _post(self, body: dict[str, object]) -> object:
        delay = self._backoff_s
        reason = ""
        for attempt in range(1, self._retries + 2):
            try:
                response = self._client.post(self.url, json=body)
            except httpx.HTTPError as exc:
                reason = f"{type(exc).__name__}: {exc}"
            else:
                if response.status_code < 500:
                    if response.status_code >= 400:
                        raise RetrieverUnavailableError(
                            self.url,
                            reason=f"HTTP {response.status_code}: {response.text[:300]}",
                            attempts=attempt,
                        )
                    try:
                        return response.json()
                    except ValueError as exc:
                        raise RetrieverUnavailableError(self.url, reason="the reply is not JSON") from exc
                reason = f"HTTP {response.status_code}"
            if attempt <= self._retries:
                time.sleep(delay)
                delay *= 2
        raise RetrieverUnavailableError(self.url, reason=reason, attempts=self._retries + 1)

    def close(self) -> None:
        self._client.close()


def _hit(item: BaseModel, rank: int) -> Hit:
    if isinstance(item, ScoredDocument):
        return Hit(Passage.from_contents(item.document.id, item.document.contents), item.score)
    # Without scores, keep the server's order with decreasing pseudo-scores.
    document = cast(Document, item)  # RetrieveResponse holds only these two types
    return Hit(Passage.from_contents(document.id, document.contents), -float(rank))
