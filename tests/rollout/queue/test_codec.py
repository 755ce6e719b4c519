"""The compact payload codec: exact round trips, packed arrays, clear errors on foreign bytes."""

from __future__ import annotations

import json
from collections.abc import Callable

import msgpack
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from envhub.core.errors import QueueError
from envhub.core.records import Group, Step, TokenSequence, Trajectory
from envhub.rollout.queue.codec import decode_group, decode_step, encode_group, encode_step, pack, unpack

_text = st.text(max_size=12)
_json = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**40), 2**40) | st.floats(allow_nan=False) | _text,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(_text, inner, max_size=3),
    max_leaves=6,
)
_ids = st.lists(st.integers(-(2**63), 2**64 - 1), max_size=20) | st.lists(
    st.integers(0, 2**32 - 1), max_size=20
)
# Logprobs: exact float32 values (what models produce) and arbitrary float64 values.
_f32 = st.floats(width=32, allow_nan=False)
_logprobs = st.lists(_f32, max_size=20) | st.lists(st.floats(allow_nan=False), max_size=20)


@st.composite
def _steps(draw: st.DrawFn, uid: str, traj_id: str, idx: int) -> Step:
    return Step(
        uid=uid,
        traj_id=traj_id,
        step_idx=idx,
        agent_id=draw(_text),
        env_step=draw(st.none() | st.integers(min_value=0, max_value=1_000)),
        anchor=draw(_text),
        observation=draw(_text),
        prompt_messages=draw(st.none() | st.lists(st.dictionaries(_text, _json, max_size=2), max_size=2)),
        prompt_token_ids=draw(st.none() | _ids),
        response_text=draw(_text),
        response_token_ids=draw(st.none() | _ids),
        response_logprobs=draw(st.none() | _logprobs),
        action=draw(_text),
        is_action_valid=draw(st.booleans()),
        reward=draw(st.floats(allow_nan=False, allow_infinity=False)),  # inf - inf: a NaN return
        terminated=draw(st.booleans()),
        truncated=draw(st.booleans()),
        info=draw(st.dictionaries(_text, _json, max_size=3)),
        history_image=draw(st.none() | st.binary(max_size=64)),
        policy_version=draw(st.none() | st.integers(0, 10**6)),
        finish_reason=draw(st.none() | st.sampled_from(["stop", "length"])),
        token_exact=draw(st.booleans()),
        timings=draw(st.dictionaries(st.sampled_from(["policy", "env", "render"]), st.floats(0, 10))),
        history_image_ref=draw(st.none() | _text),
        vision_tokens=draw(st.none() | st.integers(0, 4096)),
        text_tokens=draw(st.none() | st.integers(0, 4096)),
    )


@st.composite
def _sequences(draw: st.DrawFn, uid: str, traj_id: str) -> TokenSequence:
    n = draw(st.integers(0, 12))
    return TokenSequence(
        uid=uid,
        traj_id=traj_id,
        segment=draw(st.integers(0, 3)),
        first_step=draw(st.integers(0, 50)),
        prompt_length=draw(st.integers(0, n)),
        token_ids=draw(st.lists(st.integers(0, 2**32 - 1), min_size=n, max_size=n)),
        loss_mask=draw(st.lists(st.integers(0, 1), min_size=n, max_size=n)),
        logprobs=draw(st.lists(_f32 | st.floats(allow_nan=False), min_size=n, max_size=n)),
        policy_versions=draw(st.lists(st.integers(0, 100), max_size=3)),
        reward=draw(st.floats(allow_nan=False, allow_infinity=False)),  # inf - inf: a NaN return
    )


@st.composite
def _groups(draw: st.DrawFn) -> Group:
    uid = draw(_text)
    trajectories = []
    for k in range(draw(st.integers(0, 3))):
        traj_id = f"{uid}/{k}"
        trajectories.append(
            Trajectory(
                uid=uid,
                traj_id=traj_id,
                env_id="envhub/X-v0",
                task_id=draw(_text),
                steps=[draw(_steps(uid, traj_id, i)) for i in range(draw(st.integers(0, 3)))],
                won=draw(st.booleans()),
                task_score=draw(st.floats(allow_nan=False)),
                sequences=[draw(_sequences(uid, traj_id)) for _ in range(draw(st.integers(0, 2)))],
                final_anchor=draw(st.none() | _text),
            )
        )
    return Group(
        uid=uid,
        env_id="envhub/X-v0",
        task_id=draw(_text),
        trajectories=trajectories,
        policy_version=draw(st.none() | st.integers(0, 10**6)),
        job_id=draw(st.none() | _text),
        attempt=draw(st.integers(0, 5)),
    )


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(group=_groups(), compress=st.sampled_from([None, 1, 6]))
def test_encode_then_decode_gives_back_an_equal_group(group: Group, compress: int | None) -> None:
    again = decode_group(encode_group(group, compress=compress))
    assert again == group
    assert again.model_dump() == group.model_dump()


@settings(max_examples=80, deadline=None)
@given(step=_steps("g", "g/0", 4))
def test_encode_then_decode_gives_back_an_equal_step(step: Step) -> None:
    assert decode_step(encode_step(step)) == step


def test_token_ids_travel_as_uint32_bytes_and_float32_logprobs_as_float32_bytes(
    group_factory: Callable[..., Group],
) -> None:
    step = group_factory("g", n=1, steps=1).trajectories[0].steps[0]
    step.prompt_token_ids = list(range(100_000, 102_048))
    step.response_logprobs = np.linspace(-5, 0, 512, dtype=np.float32).tolist()
    payload = encode_step(step)
    # 2048 ids x 4 bytes + 512 logprobs x 4 bytes, plus a small envelope.
    assert 2048 * 4 + 512 * 4 < len(payload) < 2048 * 4 + 512 * 4 + 600
    assert decode_step(payload).response_logprobs == step.response_logprobs


def test_logprobs_that_are_not_float32_values_keep_float64_exactly() -> None:
    step = Step(
        uid="g", traj_id="t", step_idx=0, anchor="", action="", reward=0.0, response_logprobs=[0.1, -1 / 3]
    )
    assert decode_step(encode_step(step)).response_logprobs == [0.1, -1 / 3]


def test_payload_is_much_smaller_than_json(group_factory: Callable[..., Group]) -> None:
    group = group_factory("g", n=4, steps=10)
    for traj in group.trajectories:
        for step in traj.steps:
            step.prompt_token_ids = list(range(140_000, 142_048))
    assert len(encode_group(group)) < 0.65 * len(group.model_dump_json())
    assert len(encode_group(group, compress=1)) < len(encode_group(group))
    assert json.loads(group.model_dump_json()) == json.loads(
        decode_group(encode_group(group)).model_dump_json()
    )


@pytest.mark.parametrize(
    "data",
    [b"not msgpack \xc1", pack({"schema": 99, "kind": "group", "zlib": False, "body": b""}), pack([1, 2])],
)
def test_foreign_bytes_give_a_queue_error_that_names_the_problem(data: bytes) -> None:
    with pytest.raises(QueueError, match="Cannot decode a queued group payload"):
        decode_group(data)


def test_a_step_payload_is_not_taken_for_a_group() -> None:
    step = Step(uid="g", traj_id="t", step_idx=0, anchor="", action="", reward=0.0)
    with pytest.raises(QueueError, match="not an envhub group payload"):
        decode_group(encode_step(step))


def test_a_payload_whose_fields_do_not_match_the_records_gives_a_queue_error() -> None:
    body = pack({"uid": "g", "env_id": "e", "task_id": "t", "bogus": 1})
    payload = pack({"schema": 1, "kind": "group", "zlib": False, "body": body})
    with pytest.raises(QueueError, match="does not match"):
        decode_group(payload)


def test_pack_refuses_values_that_are_not_json_like_with_a_clear_error() -> None:
    with pytest.raises(QueueError, match="JSON-like"):
        pack({"x": object()})
    assert unpack(pack({"a": [1, b"x", None]})) == {"a": [1, b"x", None]}
    assert msgpack.unpackb(pack(1)) == 1


def test_a_float_array_in_a_token_id_field_is_still_validated() -> None:
    step = Step(uid="g", traj_id="t", step_idx=0, anchor="", action="", reward=0.0)
    body = step.model_dump(exclude_computed_fields=True)
    body["response_token_ids"] = msgpack.ExtType(4, np.asarray([0.5], dtype="<f4").tobytes())
    payload = pack({"schema": 1, "kind": "step", "zlib": False, "body": pack(body)})
    with pytest.raises(QueueError, match="does not match"):
        decode_step(payload)
