"""The trainer takes groups from Redis decoded as columns, building records only where needed.

Real Redis (127.0.0.1:6379, a stream of the test's own), real groups sampled by the small model.
"""

from __future__ import annotations

import asyncio
import uuid
from pathlib import Path

import pytest

from envhub.core.records import Group
from envhub.rollout.queue.base import Delivery
from envhub.rollout.queue.redis import RedisQueue
from envhub.rollout.queue.settings import QueueSettings
from envhub.train.config import load_config
from envhub.train.rollouts import trainer_queue
from envhub.train.trainer import Trainer
from tests.integration.rollout_service_proc import delete_keys, redis_up
from tests.needs import require

REDIS = "redis://127.0.0.1:6379/0"


def _deliver(groups: list[Group], run: str) -> list[Delivery]:
    require(redis_up(), "a Redis server on 127.0.0.1:6379", how="redis-server --daemonize yes --port 6379")
    stream = f"envhub:test-columns:{uuid.uuid4().hex[:8]}"

    async def go() -> list[Delivery]:
        producer = RedisQueue(REDIS, stream=stream, group=f"trainers:{run}", run=run)
        consumer = trainer_queue(
            REDIS,
            stream=stream,
            consumer="trainer-0",
            run=run,
            groups_per_iteration=4,
            settings=QueueSettings(),
        )
        try:
            for g in groups:
                await producer.put(g)
            got: list[Delivery] = []
            while len(got) < len(groups):
                got += await consumer.get(len(groups) - len(got), timeout_s=2.0)
            await consumer.ack(got)
            return got
        finally:
            await consumer.aclose()
            await producer.aclose()

    try:
        return asyncio.run(go())
    finally:
        delete_keys(REDIS, stream)


def test_the_trainers_redis_queue_delivers_columns_and_decodes_records_only_when_asked(
    sampled_groups: list[Group],
) -> None:
    got = _deliver(sampled_groups, "run-c")
    by_uid = {g.uid: g for g in sampled_groups}
    assert sorted(d.uid for d in got) == sorted(by_uid)
    for d in got:
        assert d.columns is not None and d.columns.uid == d.uid
        assert len(d.columns) == sum(len(t.steps) for t in by_uid[d.uid].trajectories)
        assert d.group == by_uid[d.uid]  # the record, decoded on demand, is the published one


def test_training_on_columns_gives_the_rows_and_metrics_of_training_on_records(
    sampled_groups: list[Group], small_model_dir: Path, tmp_path: Path
) -> None:
    got = sorted(_deliver(sampled_groups, "run-d"), key=lambda d: d.uid)
    config = load_config(
        None,
        {
            "env": "envhub/SearchQA-v0",
            "model.path": str(small_model_dir),
            "output.run_dir": str(tmp_path / "run"),
            "rollout.group_size": 2,
            "rollout.batch_tasks": 4,
            "optim.micro_batch_rows": 8,
        },
    )
    trainer = Trainer(config)
    from_columns = asyncio.run(trainer._train_on(got))
    from_records = asyncio.run(trainer._train_on(sorted(sampled_groups, key=lambda g: g.uid)))
    for key in ("rows/count", "rows/dropped_long", "rows/inexact", "advantage/mean", "advantage/abs_mean"):
        assert from_columns[key] == pytest.approx(from_records[key]), key
    episode_keys = ("rollout/reward", "rollout/success", "rollout/episode_length", "rollout/episodes")
    for key in (*episode_keys, "rollout/valid_action"):
        assert from_columns[key] == pytest.approx(from_records[key]), key
