"""The trainer's rollout sources: the ack interval checked at start-up, the jobs they submit."""

from __future__ import annotations

from pathlib import Path

import pytest

from envhub.core.errors import ConfigurationError
from envhub.train.rollouts import check_ack_interval


def test_a_checkpoint_interval_holding_more_groups_than_the_bound_is_refused_at_start_up() -> None:
    # The compose GPU recipe: 150 iterations x 32 groups, checkpoint only at the end.
    with pytest.raises(ConfigurationError, match=r"output\.checkpoint_every") as caught:
        check_ack_interval(checkpoint_every=0, iterations=150, groups_per_iteration=32, max_unacked=1024)
    assert "4800" in str(caught.value) and "ENVHUB_QUEUE_MAX_UNACKED" in str(caught.value)
    check_ack_interval(checkpoint_every=32, iterations=150, groups_per_iteration=32, max_unacked=1024)
    check_ack_interval(checkpoint_every=0, iterations=10, groups_per_iteration=32, max_unacked=1024)


async def test_a_rollout_service_job_carries_trajectory_mode(tmp_path: Path) -> None:
    from envhub.core.wire import SamplingRequest
    from envhub.rollout.engine import GroupTask
    from envhub.train.config import RolloutSettings
    from envhub.train.rollouts import ServiceRollouts

    settings = RolloutSettings(envs=["http://127.0.0.1:9"], trajectory_mode=True)
    source = ServiceRollouts(
        service_url="http://127.0.0.1:9",
        env_id="envhub/SearchQA-v0",
        settings=settings,
        policy_url="http://127.0.0.1:9",
        tokenizer=str(tmp_path),
    )
    try:
        request = source.request([GroupTask(0, "t", 0)], version=1, sampling=SamplingRequest())
    finally:
        await source.aclose()
    assert request.trajectory_mode  # the section's one field, passed on in the job
