"""Around a weight push, a served policy samples no group with weights of another version than
the one the group is labelled with.

The real trainer and its real :class:`~envhub.train.rollouts.EngineRollouts` over a served
policy: one set of weights that a weight sync swaps in place. The served policy here is the
in-process sampler over the small tiny model, and the weight sync a test one that swaps its
weights and then takes a while (as a reload into vLLM does), so the window between the start of
a push and the version bump is wide and the same on every machine. The env
(:mod:`tests.train.uneven_env`) makes a group fail exactly while the push waits for the groups
in flight, which is what frees the producer to admit one in its place.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
import redis

from envhub.core.errors import ConfigurationError
from envhub.policy.base import Completion, SamplingParams
from envhub.policy.transformers_backend import TransformersBackend
from envhub.rollout.queue.base import GroupQueue
from envhub.train.config import load_config
from envhub.train.rollouts import EngineRollouts, RolloutSource, build_env_pool
from envhub.train.tracking import read_metrics
from envhub.train.trainer import Trainer
from tests.integration.rollout_service_proc import redis_up
from tests.train.test_staleness import TASKS, UNEVEN, _used


class _Weights:
    """The served weights' version: what the sync last loaded (not the label a request gets)."""

    def __init__(self) -> None:
        self.version = 0
        self.pushes = 0


class _ServedSampler(TransformersBackend):
    """The served policy: one set of weights; records, for every call, the version it stamped
    and the version of the weights before and after it sampled."""

    def __init__(self, model_dir: Path, weights: _Weights) -> None:
        super().__init__(model_dir)
        self.weights = weights
        self.calls: list[tuple[int, int, int]] = []

    async def generate(self, prompts: Any, sampling: SamplingParams) -> list[Completion]:
        before = self.weights.version
        out = await super().generate(prompts, sampling)
        after = self.weights.version
        self.calls.extend((int(c.policy_version), before, after) for c in out)
        return out


class _SlowSync:
    """A weight sync into the served sampler: the weights change at once, the push then takes
    ``hold_s`` more (vLLM's reload and resume), and the version label is the trainer's to set."""

    def __init__(self, served: _ServedSampler, hold_s: float) -> None:
        self.served, self.hold_s = served, hold_s

    async def push(self, model: Any, version: int) -> dict[str, float]:
        self.served.weights.pushes += 1
        self.served.set_weights(getattr(model, "module", model), version=self.served.policy_version)
        self.served.weights.version = version
        await asyncio.sleep(self.hold_s)
        return {}


class _ServedTrainer(Trainer):
    """The trainer, with its served policy the in-process sampler behind the slow sync."""

    served: _ServedSampler

    async def _source(self, queue: GroupQueue) -> RolloutSource:
        self.served = _ServedSampler(Path(self.config.model.path), _Weights())
        return EngineRollouts(
            envs=build_env_pool(self.env_id, self.config.rollout),
            queue=queue,
            settings=self.config.rollout,
            served=self.served,
            weight_sync=_SlowSync(self.served, hold_s=0.5),
            run_id=self.run_id,
        )


def test_no_group_is_admitted_during_a_push_so_none_samples_new_weights_under_the_old_label(
    small_model_dir: Path, tmp_path: Path
) -> None:
    # k = 1, B = 2: the first play holds four tasks at version 0, the long task t7 among them.
    # t7 goes on until the trainer has written iteration 1's groups, right before it pushes
    # version 1, and then fails: its group is lost while the push waits for the groups in
    # flight, so the trainer admits one in its place. Admitted then at version 0, it would be
    # sampled by version 1's weights under version 0's label.
    run = tmp_path / "run"
    env = {"progress": str(run / "rollouts" / "iter_000001.jsonl"), "outlast": 1, "fail_long": True}
    config = load_config(
        None,
        {
            "env": UNEVEN,
            "algo": "grpo",
            "model.path": str(small_model_dir),
            "seed": 0,  # t7 is the second task of the schedule (test_staleness checks it)
            "iterations": 2,
            "max_staleness": 1,
            "output.run_dir": str(run),
            "output.tensorboard": False,
            "rollout.group_size": 2,
            "rollout.batch_tasks": 2,
            "rollout.max_steps": 2000,
            "rollout.task_ids": TASKS,
            "rollout.max_tokens": 4,
            "rollout.context.family": "envhub/SearchQA-v0",
            "rollout.context.projection": "think_action",
            "rollout.env_kwargs": env,
            "rollout.on_failure": "drop",  # a retry would play t7 again, waiting for a line never written
            "optim.lr": 1e-3,
            "optim.micro_batch_rows": 8,
        },
    )
    trainer = _ServedTrainer(config)
    result = asyncio.run(trainer.run())
    assert result.policy_version == 2
    served = trainer.served
    assert served.weights.pushes == 3  # the start's, then one per iteration
    # The long group was played and lost (no update used it), and one group came in its place.
    used = _used(run)
    assert sorted(used) == [1, 2] and all(g["task_id"] != "t7" for gs in used.values() for g in gs)
    # Every completion was sampled from start to end by the weights of the version it carries.
    mixed = [(label, before, after) for label, before, after in served.calls if not label == before == after]
    assert not mixed, (
        f"{len(mixed)} of {len(served.calls)} completions: (label, weights before, after) {mixed[:5]}"
    )
    assert {0, 1} <= {label for label, _, _ in served.calls}
    assert [r["staleness/dropped"] for r in read_metrics(run)] == [0.0, 0.0]


def _drain_config(run: Path, model: Path, queue: str, stream: str, k: int, batch: int) -> Any:
    return load_config(
        None,
        {
            "env": "envhub/SearchQA-v0",
            "algo": "grpo",
            "model.path": str(model),
            "iterations": 2,
            "seed": 1,
            "max_staleness": k,
            "output.run_dir": str(run),
            "output.tensorboard": False,
            "output.checkpoint_every": 1,
            "rollout.group_size": 1,
            "rollout.batch_tasks": batch,
            "rollout.max_steps": 1,
            "rollout.max_tokens": 2,
            "rollout.queue": queue,
            "rollout.queue_stream": stream,
            "optim.lr": 1e-4,
            "optim.micro_batch_rows": 8,
        },
    )


def test_a_served_run_whose_drain_cannot_fit_the_queues_lag_bound_is_refused_at_start(
    small_model_dir: Path, tmp_path: Path, monkeypatch: Any
) -> None:
    # k x B groups can be published and unread while a push drains a served policy (the trainer
    # reads none until the push returns); past ENVHUB_QUEUE_MAX_LAG the plays' puts wait for a
    # read that never comes, the push waits for the plays: the run hung with no message.
    if not redis_up():
        pytest.skip("needs Redis on 127.0.0.1:6379")
    monkeypatch.setenv("ENVHUB_QUEUE_MAX_LAG", "2")
    stream = f"envhub-test:drain:{tmp_path.name}"
    config = _drain_config(
        tmp_path / "run", small_model_dir, "redis://127.0.0.1:6379/0", stream, k=3, batch=1
    )
    try:
        with pytest.raises(ConfigurationError, match="ENVHUB_QUEUE_MAX_LAG"):
            asyncio.run(asyncio.wait_for(_ServedTrainer(config).run(), timeout=120))
    finally:
        client = redis.Redis.from_url("redis://127.0.0.1:6379/0")
        for key in client.scan_iter(f"{stream}*"):
            client.delete(key)
        client.close()


def test_the_in_process_queue_holds_what_a_served_push_drains_at_any_k(
    small_model_dir: Path, tmp_path: Path
) -> None:
    # The in-process queue was sized max(4 B, 64) whatever k: k = 40, B = 2 hung at the first push.
    config = _drain_config(tmp_path / "run", small_model_dir, "memory", "unused", k=40, batch=2)
    result = asyncio.run(asyncio.wait_for(_ServedTrainer(config).run(), timeout=240))
    assert result.policy_version == 2
