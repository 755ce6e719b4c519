"""``envhub serve-retriever``: a retrieval server with Search-R1's ``POST /retrieve`` API.

Existing Search-R1 and verl-agent clients can point their ``search_url`` at it. Routes:

* ``POST /retrieve`` -- batch retrieval (see :mod:`envhub.envs.search.protocol` for the shapes);
* ``GET /health`` -- ``{"status": "ok", "retriever", "passages", "default_topk"}``;
* ``GET /metrics`` -- Prometheus text: requests, queries, errors and latency.

Started with a token (``--token`` / ``ENVHUB_TOKEN``), every route but ``/health`` needs
``Authorization: Bearer <token>`` (401 ``UNAUTHORIZED`` otherwise), as envhub's env servers do.

The app is built from a *factory* that loads the retriever; the lifespan calls it once before
the first request, so a large index loads once per process. Retrieval runs in FastAPI's
thread pool (the route is a plain ``def``), off the event loop.
"""

from __future__ import annotations

import hmac
import time
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Annotated, Any

from fastapi import Depends, FastAPI, Request
from fastapi.responses import JSONResponse, Response
from prometheus_client import CONTENT_TYPE_LATEST, CollectorRegistry, Counter, Histogram, generate_latest

from envhub.core.errors import EnvhubError, UnauthorizedError
from envhub.envs.search.protocol import (
    Document,
    HealthResponse,
    RetrieveRequest,
    RetrieveResponse,
    ScoredDocument,
)
from envhub.envs.search.retrieval import Retriever

__all__ = ["StateDep", "create_app", "health", "metrics", "retrieve", "serve"]


@dataclass
class _Metrics:
    """The server's Prometheus metrics, in a registry of its own (one per app, not global)."""

    registry: CollectorRegistry
    requests: Counter
    queries: Counter
    errors: Counter
    latency: Histogram

    @classmethod
    def create(cls) -> _Metrics:
        registry = CollectorRegistry()
        return cls(
            registry=registry,
            requests=Counter(
                "envhub_retriever_requests_total", "POST /retrieve requests.", registry=registry
            ),
            queries=Counter("envhub_retriever_queries_total", "Queries answered.", registry=registry),
            errors=Counter("envhub_retriever_errors_total", "Requests that failed.", registry=registry),
            latency=Histogram(
                "envhub_retriever_request_seconds",
                "Time to answer one POST /retrieve.",
                registry=registry,
                buckets=(0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 10.0),
            ),
        )


@dataclass
class _State:
    retriever: Retriever
    default_topk: int
    metrics: _Metrics


def _state(request: Request) -> _State:
    state: _State = request.app.state.search
    return state


StateDep = Annotated[_State, Depends(_state)]


def _require_token(request: Request) -> None:
    """401 ``UNAUTHORIZED`` unless the request carries the server's bearer token (if it has one)."""
    expected: str | None = request.app.state.token
    if expected is None:
        return
    header = request.headers.get("authorization") or ""
    given = header[7:].strip() if header[:7].lower() == "bearer " else ""
    # Constant-time comparison: the token cannot be guessed byte by byte from timings.
    if not hmac.compare_digest(given.encode(), expected.encode()):
        raise UnauthorizedError()


def create_app(
    load_retriever: Callable[[], Retriever], *, default_topk: int = 3, token: str | None = None
) -> FastAPI:
    """Build the retrieval server.

    Args:
        load_retriever: called once at startup; returns the retriever to serve.
        default_topk: passages per query when a request gives no ``topk`` (Search-R1: 3).
        token: bearer token required on ``/retrieve`` and ``/metrics`` (None or empty: none).

    Returns:
        The FastAPI app (run it with uvicorn, or :func:`serve`).

    Raises:
        TypeError: a retriever instance was passed instead of a factory.
    """
    if isinstance(load_retriever, Retriever):
        raise TypeError("create_app takes a factory: pass `lambda: retriever`, not the retriever itself.")

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        retriever = load_retriever()
        app.state.search = _State(retriever=retriever, default_topk=default_topk, metrics=_Metrics.create())
        try:
            yield
        finally:
            retriever.close()

    app = FastAPI(title="envhub retriever", summary="Search-R1-compatible retrieval.", lifespan=lifespan)
    app.state.token = token or None
    protected = [Depends(_require_token)]

    @app.exception_handler(EnvhubError)
    async def _envhub_error(request: Request, exc: EnvhubError) -> JSONResponse:
        return JSONResponse(status_code=exc.status_code, content=exc.to_dict())

    app.add_api_route(
        "/retrieve",
        retrieve,
        methods=["POST"],
        response_model=RetrieveResponse,
        tags=["retrieval"],
        dependencies=protected,
    )
    app.add_api_route("/health", health, methods=["GET"], response_model=HealthResponse, tags=["ops"])
    app.add_api_route(
        "/metrics", metrics, methods=["GET"], response_class=Response, tags=["ops"], dependencies=protected
    )
    return app


def retrieve(body: RetrieveRequest, state: StateDep) -> dict[str, Any]:
    """Answer a batch of queries, each with its top ``topk`` passages."""
    metrics = state.metrics
    metrics.requests.inc()
    start = time.perf_counter()
    queries = body.all_queries()
    try:
        hits = state.retriever.search(queries, body.topk or state.default_topk)
    except Exception:
        metrics.errors.inc()
        raise
    metrics.queries.inc(len(queries))
    result: list[list[Any]]
    if body.return_scores:
        result = [
            [
                ScoredDocument(document=Document(id=h.passage.id, contents=h.passage.contents), score=h.score)
                for h in row
            ]
            for row in hits
        ]
    else:
        result = [[Document(id=h.passage.id, contents=h.passage.contents) for h in row] for row in hits]
    metrics.latency.observe(time.perf_counter() - start)
    return {"result": result}


def health(state: StateDep) -> HealthResponse:
    """Liveness and what is served."""
    return HealthResponse(
        status="ok",
        retriever=state.retriever.name,
        passages=state.retriever.size,
        default_topk=state.default_topk,
    )


def metrics(state: StateDep) -> Response:
    """Prometheus exposition of the server's counters and latency histogram."""
    return Response(generate_latest(state.metrics.registry), media_type=CONTENT_TYPE_LATEST)


def serve(
    load_retriever: Callable[[], Retriever],
    *,
    host: str,
    port: int,
    default_topk: int = 3,
    token: str | None = None,
) -> None:
    """Run the retrieval server in the foreground with uvicorn (blocks until stopped)."""
    import uvicorn

    app = create_app(load_retriever, default_topk=default_topk, token=token)
    uvicorn.run(app, host=host, port=port, log_level="info")
