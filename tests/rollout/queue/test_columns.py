"""The columnar decode: a payload straight to the trainer's rows, equal to the pydantic path."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import msgpack
import pytest
import torch

from envhub.core.errors import ConfigurationError, QueueError
from envhub.core.records import Group
from envhub.rollout.queue.codec import decode_columns, decode_group, encode_group, pack, unpack
from envhub.train.rows import Overlong, build_rows, build_rows_from_columns

_TENSORS = (
    "input_ids",
    "attention_mask",
    "response_index",
    "response_ids",
    "response_mask",
    "rollout_logprobs",
    "advantages",
    "policy_version",
    "group_index",
)


def _mixed(group_factory: Callable[..., Group]) -> list[Group]:
    """Groups with a long prompt, an untokenised step, a step without logprobs, and no version."""
    first = group_factory("g0", n=2, steps=3)
    second = group_factory("g1", n=3, steps=2, task_id="t1")
    steps = second.trajectories[0].steps
    steps[0].prompt_token_ids = list(range(40))
    steps[1].response_token_ids = None
    second.trajectories[1].steps[0].response_logprobs = None
    second.trajectories[1].steps[1].policy_version = None
    second.trajectories[2].steps[0].token_exact = False
    second.trajectories[2].steps[1].response_token_ids = list(range(9))  # over max_response_tokens
    second.trajectories[2].steps[1].response_logprobs = [-0.5] * 9
    return [first, second]


@pytest.mark.parametrize("compress", [None, 1])
@pytest.mark.parametrize("max_prompt_tokens", [None, 16])
@pytest.mark.parametrize("max_response_tokens", [None, 4])
@pytest.mark.parametrize("overlong", ["mask", "truncate", "penalise"])
def test_columnar_rows_equal_the_rows_of_the_decoded_records(
    group_factory: Callable[..., Group],
    compress: int | None,
    max_prompt_tokens: int | None,
    max_response_tokens: int | None,
    overlong: Overlong,
) -> None:
    payloads = [encode_group(g, compress=compress) for g in _mixed(group_factory)]
    limits: dict[str, Any] = {
        "max_prompt_tokens": max_prompt_tokens,
        "max_response_tokens": max_response_tokens,
        "overlong": overlong,
        "overlong_penalty": 0.5,
    }
    slow = build_rows([decode_group(p) for p in payloads], pad_token_id=7, **limits)
    fast = build_rows_from_columns([decode_columns(p) for p in payloads], pad_token_id=7, **limits)
    assert slow.truncated == fast.truncated
    for name in _TENSORS:
        assert torch.equal(getattr(slow.rows, name), getattr(fast.rows, name)), name
    assert slow.rows.has_rollout_logprobs == fast.rows.has_rollout_logprobs
    assert torch.equal(slow.rows.rows_with_logprobs(), fast.rows.rows_with_logprobs())
    assert (slow.kept == fast.kept).all()
    assert (slow.dropped_long, slow.dropped_untokenized, slow.inexact) == (
        fast.dropped_long,
        fast.dropped_untokenized,
        fast.inexact,
    )
    for column in ("uid", "traj_id", "step_idx", "anchor", "reward", "is_action_valid"):
        assert list(getattr(slow.steps, column)) == list(getattr(fast.steps, column)), column


def test_columns_carry_the_group_header_and_per_trajectory_values(
    group_factory: Callable[..., Group],
) -> None:
    group = group_factory("g0", n=2, steps=3).model_copy(update={"job_id": "job-1"})
    columns = decode_columns(encode_group(group))
    assert (columns.uid, columns.env_id, columns.job_id, columns.policy_version) == (
        "g0",
        "envhub/Test-v0",
        "job-1",
        3,
    )
    assert len(columns) == 6
    assert list(columns.episode_return) == [t.episode_return for t in group.trajectories]
    assert list(columns.length) == [3, 3]


def test_columnar_decode_of_foreign_bytes_is_a_queue_error() -> None:
    with pytest.raises(QueueError, match="Cannot decode"):
        decode_columns(b"\x93not a payload")


def test_columnar_rows_of_untokenised_groups_say_what_to_do(group_factory: Callable[..., Group]) -> None:
    group = group_factory("g0", n=1, steps=1)
    group.trajectories[0].steps[0].prompt_token_ids = None
    with pytest.raises(ConfigurationError, match="model backend"):
        build_rows_from_columns([decode_columns(encode_group(group))], pad_token_id=0)


def test_columns_carry_each_trajectorys_final_state_and_old_payloads_still_decode(
    group_factory: Callable[..., Group],
) -> None:
    group = group_factory("g0", n=2, steps=3)
    group.trajectories[0].final_anchor = "room 9"  # the second recorded none
    columns = decode_columns(encode_group(group))
    assert columns.final_anchor == ["room 9", None]
    built = build_rows_from_columns([columns], pad_token_id=0)
    slow = build_rows([decode_group(encode_group(group))], pad_token_id=0)
    for steps in (built.steps, slow.steps):
        assert steps.next_anchor is not None
        assert steps.next_anchor.tolist() == ["room 1", "room 2", "room 9", "room 1", "room 2", None]
    # A payload written before trajectories had final_anchor (the field absent from its body).
    body = unpack(msgpack.unpackb(encode_group(group_factory("g1")))["body"])
    for traj in body["trajectories"]:
        traj.pop("final_anchor", None)
    old = msgpack.packb({"schema": 1, "kind": "group", "zlib": False, "body": pack(body)})
    assert [t.final_anchor for t in decode_group(old).trajectories] == [None, None]
    assert decode_columns(old).final_anchor == [None, None]
    assert build_rows_from_columns([decode_columns(old)], pad_token_id=0).steps.next_anchor is None
