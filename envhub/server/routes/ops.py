"""Operations: liveness, readiness, Prometheus metrics and the worker debug view."""

from __future__ import annotations

from fastapi import APIRouter, Depends, Request, Response
from fastapi.responses import JSONResponse
from prometheus_client import CONTENT_TYPE_LATEST

from envhub.core.wire import ErrorBody, Health, Readiness, WorkerInfo, WorkerList
from envhub.server.deps import ManagerDep, require_token

__all__ = ["health", "metrics", "ready", "router", "workers"]

router = APIRouter(tags=["operations"])


@router.get("/health", response_model=Health)
async def health(manager: ManagerDep) -> Health:
    """Liveness (no token needed): the server answers. ``degraded`` while a worker is replaced."""
    alive = sum(slot.alive for slot in manager.pool.slots)
    return Health(status="healthy" if alive == len(manager.pool.slots) else "degraded")


@router.get("/ready", response_model=Readiness, responses={503: {"model": Readiness}})
async def ready(manager: ManagerDep) -> JSONResponse:
    """Readiness (no token needed): 200 when every worker is alive and a session slot is free, else 503."""
    alive = sum(slot.alive for slot in manager.pool.slots)
    body = Readiness(
        ready=alive == len(manager.pool.slots) and manager.active < manager.max_sessions,
        env_id=manager.env_id,
        active_sessions=manager.active,
        max_sessions=manager.max_sessions,
        workers_alive=alive,
        workers_total=len(manager.pool.slots),
    )
    return JSONResponse(body.model_dump(), status_code=200 if body.ready else 503)


@router.get(
    "/metrics",
    dependencies=[Depends(require_token)],
    response_class=Response,
    responses={200: {"content": {"text/plain": {}}}, 401: {"model": ErrorBody}},
)
async def metrics(request: Request, manager: ManagerDep) -> Response:
    """Prometheus metrics of this server (its own registry), with the workers' render counters."""
    request.app.state.metrics.history.update(await manager.render_stats())
    return Response(request.app.state.metrics.render(), media_type=CONTENT_TYPE_LATEST)


@router.get(
    "/v1/debug/workers",
    response_model=WorkerList,
    dependencies=[Depends(require_token)],
    responses={401: {"model": ErrorBody}},
)
async def workers(manager: ManagerDep) -> WorkerList:
    """The worker processes: pid, liveness, sessions pinned, restarts (for operators and tests)."""
    return WorkerList(
        workers=[
            WorkerInfo(index=s.index, pid=s.pid, alive=s.alive, sessions=s.sessions, restarts=s.restarts)
            for s in manager.pool.slots
        ]
    )
