"""``envhub rollout``: one rollout job in this process, without the service.

The envs are env-server replicas (``env_urls``) or in-process envs (``env_id`` alone); groups go
to a JSONL file or to a queue. The CLI adds a progress bar through ``on_event``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from envhub.policy.base import PolicyBackend
from envhub.rollout.engine import EngineConfig, EngineEvent, RolloutEngine, SequenceBuilderLike
from envhub.rollout.envpool import EnvPool, InProcessEnvPool, RemoteEnvPool
from envhub.rollout.queue.base import GroupQueue
from envhub.rollout.replicas import expand_replicas

__all__ = ["make_pool", "run_rollout"]


def make_pool(
    *, env_id: str, env_urls: Sequence[str], token: str | None = None, resolve_replicas: bool = False
) -> EnvPool:
    """Replicas when URLs are given, else in-process envs of ``env_id``.

    ``resolve_replicas`` makes every address of a URL's host name a replica of its own
    (:func:`~envhub.rollout.replicas.expand_replicas`).
    """
    if env_urls:
        urls = expand_replicas(env_urls) if resolve_replicas else list(env_urls)
        return RemoteEnvPool(urls, env_id=env_id, token=token)
    from envhub.envs.registry import make, resolve

    spec = resolve(env_id)

    def build(**kwargs: Any) -> Any:
        return make(spec.id, **kwargs)

    return InProcessEnvPool(build, env_id=spec.id)


async def run_rollout(
    *,
    envs: EnvPool,
    backend: PolicyBackend,
    config: EngineConfig,
    queue: GroupQueue,
    task_ids: Sequence[str] | None,
    count: int | None,
    job_id: str,
    on_tasks: Callable[[int], None] | None = None,
    on_event: Callable[[EngineEvent], None] | None = None,
    sequence_builder: Callable[[str, str], SequenceBuilderLike] | None = None,
) -> RolloutEngine:
    """Play one job and return its engine (its ``report`` says what happened).

    Raises:
        JobAborted: a failure no re-run can fix (policy down, bad configuration).
    """
    try:
        engine = RolloutEngine(
            envs=envs,
            backend=backend,
            config=config,
            queue=queue,
            job_id=job_id,
            on_event=on_event,
            sequence_builder=sequence_builder,
        )
        tasks = await engine.resolve_tasks(task_ids=task_ids, count=count)
        if on_tasks is not None:
            on_tasks(len(tasks))
        await engine.run(tasks)
        return engine
    finally:
        await envs.aclose()
        await backend.aclose()
        await queue.aclose()
