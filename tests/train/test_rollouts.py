"""The trainer's consumer side: its ack interval checked against the queue's bound at start-up."""

from __future__ import annotations

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
