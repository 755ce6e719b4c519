"""The sans-I/O core: request building, reply parsing, error mapping and the retry flow.

Nothing here needs a server: the inputs are the exact bytes a server sends, built from the
server's own error classes and wire models.
"""

from __future__ import annotations

import json
import random
from typing import Any

import pytest

from envhub.client import Protocol, RetryPolicy
from envhub.client._retry import Reply, Send, Sleep, TransportFailure, exchange
from envhub.core.errors import (
    CapacityReachedError,
    ConfigurationError,
    EnvhubError,
    ExecutionError,
    ProtocolError,
    RequestValidationError,
    ServerUnreachableError,
    SessionExpiredError,
    SessionLostError,
    SessionNotFoundError,
    StepTimeoutError,
    UnauthorizedError,
    UnknownTaskError,
)
from envhub.core.wire import BatchStepItem, Readiness, SessionCreated, StepResponse

PROTO = Protocol()

SERVER_ERRORS: list[EnvhubError] = [
    SessionNotFoundError("s-1"),
    SessionExpiredError("s-1", ttl_s=5),
    SessionLostError("s-1", reason="worker 0 died"),
    CapacityReachedError(active=4, max_sessions=4, retry_after_s=2),
    StepTimeoutError("s-1", timeout_s=1),
    ExecutionError("boom", exception_type="RuntimeError", session_id="s-1"),
    UnauthorizedError(),
    UnknownTaskError("x", env="CounterEnv", splits=["train"], examples=["t0"]),
    RequestValidationError([{"loc": ["body", "seed"], "msg": "must be >= 0", "type": "x"}]),
]


def _body(error: EnvhubError) -> bytes:
    return json.dumps(error.to_dict()).encode()


def _stepped() -> bytes:
    reply = StepResponse(
        session_id="s-1",
        observation="ok",
        reward=0.0,
        terminated=False,
        truncated=False,
        done=False,
        info={},
        step_count=1,
        expires_at=1.0,
    )
    return reply.model_dump_json().encode()


def _created() -> bytes:
    return SessionCreated(session_id="s-1", env_id="e", expires_at=1.0).model_dump_json().encode()


@pytest.mark.parametrize("error", SERVER_ERRORS, ids=lambda e: type(e).__name__)
def test_error_body_is_raised_as_the_servers_class(error: EnvhubError) -> None:
    with pytest.raises(type(error)) as caught:
        PROTO.step("s-1", "x").parse(error.status_code, {}, _body(error))
    assert type(caught.value) is type(error)
    assert str(caught.value) == error.message
    assert caught.value.detail == json.loads(json.dumps(error.detail))
    assert caught.value.status_code == error.status_code


def test_retry_after_header_fills_a_capacity_error_without_one() -> None:
    body = json.dumps({"code": "CAPACITY_REACHED", "message": "full", "detail": {}}).encode()
    with pytest.raises(CapacityReachedError) as caught:
        PROTO.create_session().parse(503, {"retry-after": "3"}, body)
    assert caught.value.retry_after_s == 3.0


def test_a_reply_that_is_not_envhub_raises_protocol_error() -> None:
    with pytest.raises(ProtocolError, match="502") as caught:
        PROTO.health().parse(502, {}, b"<html>Bad Gateway</html>")
    assert caught.value.detail["body"].startswith("<html>")
    with pytest.raises(ProtocolError, match="schema"):
        PROTO.health().parse(200, {}, b'{"unexpected": true}')


def test_ready_parses_its_503_body_instead_of_raising() -> None:
    body = Readiness(
        ready=False, env_id="e", active_sessions=2, max_sessions=2, workers_alive=1, workers_total=1
    ).model_dump_json()
    assert PROTO.ready().parse(503, {}, body.encode()).ready is False


def test_steps_and_resets_carry_a_fresh_request_id_and_are_replay_safe() -> None:
    first, second = PROTO.step("s-1", "a"), PROTO.step("s-1", "a")
    ids = [json.loads(call.body or b"")["request_id"] for call in (first, second)]
    assert ids[0] and ids[0] != ids[1]
    assert first.replay_safe and PROTO.reset("s-1").replay_safe
    assert json.loads(PROTO.step("s-1", "a", request_id="mine").body or b"")["request_id"] == "mine"
    assert not PROTO.create_session().replay_safe and not PROTO.create_group(2).replay_safe


def test_batch_items_get_request_ids_and_keep_given_ones() -> None:
    call = PROTO.batch_step([("s-1", "a"), BatchStepItem(session_id="s-2", action="b", request_id="keep")])
    items = json.loads(call.body or b"")
    assert [item["session_id"] for item in items] == ["s-1", "s-2"]
    assert items[0]["request_id"] and items[1]["request_id"] == "keep"


def test_session_ids_are_escaped_in_paths() -> None:
    assert PROTO.state("a/b c").path == "/v1/sessions/a%2Fb%20c"


def test_token_becomes_a_bearer_header() -> None:
    assert Protocol(token="t0k").headers["authorization"] == "Bearer t0k"
    assert "authorization" not in Protocol().headers


def test_out_of_range_arguments_raise_request_validation_error() -> None:
    with pytest.raises(RequestValidationError, match="seed"):
        PROTO.reset("s-1", seed=-5)
    with pytest.raises(RequestValidationError, match="group_size"):
        PROTO.create_group(0)


def test_backoff_grows_exponentially_up_to_the_cap_with_bounded_jitter() -> None:
    policy = RetryPolicy(backoff_s=0.1, max_backoff_s=1.0, jitter=0.5)
    assert [policy.backoff(n, unit_random=0.0) for n in (1, 2, 3, 4, 5, 6)] == [0.1, 0.2, 0.4, 0.8, 1.0, 1.0]
    assert policy.backoff(1, unit_random=0.999) == pytest.approx(0.05, abs=1e-3)
    assert policy.backoff(1, unit_random=0.5, at_least=2.0) == 2.0


@pytest.mark.parametrize("bad", [{"max_attempts": 0}, {"backoff_s": -1}, {"jitter": 1.5}])
def test_invalid_retry_policy_is_a_configuration_error(bad: dict[str, Any]) -> None:
    with pytest.raises(ConfigurationError, match="RetryPolicy"):
        RetryPolicy(**bad)


def _drive(flow: Any, outcomes: list[Reply | TransportFailure]) -> tuple[list[Send | Sleep], Any]:
    """Run an exchange flow, answering each Send with the next outcome; return instructions and result."""
    seen: list[Send | Sleep] = []
    instruction = next(flow)
    while True:
        seen.append(instruction)
        feedback = outcomes.pop(0) if isinstance(instruction, Send) else None
        try:
            instruction = flow.send(feedback)
        except StopIteration as done:
            return seen, done.value


FULL = Reply(
    503, {"retry-after": "2"}, _body(CapacityReachedError(active=1, max_sessions=1, retry_after_s=2))
)


def test_capacity_reached_is_retried_after_retry_after_then_succeeds() -> None:
    flow = exchange(PROTO.create_session(), RetryPolicy(), base_url="http://h", randoms=random.Random(0))
    seen, result = _drive(flow, [FULL, Reply(201, {}, _created())])
    assert [type(i) for i in seen] == [Send, Sleep, Send]
    assert isinstance(seen[1], Sleep) and seen[1].seconds >= 2.0
    assert result.session_id == "s-1"


def test_capacity_reached_is_raised_when_attempts_run_out() -> None:
    flow = exchange(
        PROTO.create_session(), RetryPolicy(max_attempts=2), base_url="http://h", randoms=random.Random()
    )
    with pytest.raises(CapacityReachedError):
        _drive(flow, [FULL, FULL])


def test_refused_connection_is_retried_for_any_call() -> None:
    refused = TransportFailure(request_sent=False, reason="refused")
    flow = exchange(PROTO.create_session(), RetryPolicy(), base_url="http://h", randoms=random.Random())
    seen, result = _drive(flow, [refused, Reply(201, {}, _created())])
    assert [type(i) for i in seen] == [Send, Sleep, Send] and result.session_id == "s-1"


def test_lost_reply_is_retried_only_for_replay_safe_calls() -> None:
    lost = TransportFailure(request_sent=True, reason="reset by peer")
    create = exchange(PROTO.create_session(), RetryPolicy(), base_url="http://h", randoms=random.Random())
    with pytest.raises(ServerUnreachableError, match="http://h"):
        _drive(create, [lost])
    step = exchange(PROTO.step("s-1", "a"), RetryPolicy(), base_url="http://h", randoms=random.Random())
    seen, result = _drive(step, [lost, Reply(200, {}, _stepped())])
    assert [type(i) for i in seen] == [Send, Sleep, Send] and result.observation == "ok"


def test_other_errors_are_raised_without_retrying() -> None:
    flow = exchange(PROTO.step("s-1", "a"), RetryPolicy(), base_url="http://h", randoms=random.Random())
    with pytest.raises(SessionLostError):
        _drive(flow, [Reply(410, {}, _body(SessionLostError("s-1", reason="worker died")))])


def test_history_option_is_validated_before_sending_and_travels_in_the_body() -> None:
    call = PROTO.create_session({"k": 1}, history={"preset": "search", "style": "ocr-search", "window": 4})
    assert call.body is not None
    assert json.loads(call.body)["history"] == {
        "style": "ocr-search",
        "window": 4,
        "preset": "search",
        "compression": False,
        "compression_lam": 0.01,
        "compression_mu": 0.0,
    }
    group = PROTO.create_group(2, history={})
    assert group.body is not None and "history" in json.loads(group.body)
    assert "history" not in json.loads(PROTO.create_session().body or b"{}")
    with pytest.raises(RequestValidationError):
        PROTO.create_session(history={"preset": "nope"})


def test_history_png_is_a_replay_safe_get_returning_raw_bytes() -> None:
    call = PROTO.history_png("s/1")
    assert (call.method, call.path, call.replay_safe) == ("GET", "/v1/sessions/s%2F1/history.png", True)
    assert call.parse(200, {}, b"\x89PNG") == b"\x89PNG"
    with pytest.raises(ConfigurationError):
        call.parse(400, {}, _body(ConfigurationError("created without history")))


@pytest.mark.parametrize(
    "action", ["stats", 'quote " and backslash \\', "line\nbreak\ttab\x00nul", "é \u2028 😀 \ud7ff", ""]
)
def test_a_step_body_is_the_json_the_request_model_would_send(action: str) -> None:
    from envhub.core.wire import StepRequest

    call = PROTO.step("s-1", action, request_id='id "with" quotes')
    assert StepRequest.model_validate_json(call.body or b"") == StepRequest(
        action=action, request_id='id "with" quotes'
    )


@pytest.mark.parametrize(
    ("action", "request_id"), [("x" * ((1 << 20) + 1), None), ("ok", "r" * 256), (7, None)]
)
def test_a_step_outside_the_request_models_limits_is_refused_before_sending(
    action: Any, request_id: str | None
) -> None:
    with pytest.raises(RequestValidationError):
        PROTO.step("s-1", action, request_id=request_id)


def test_batch_items_of_every_form_encode_to_the_models_json() -> None:
    from pydantic import TypeAdapter

    items: list[Any] = [
        BatchStepItem(session_id="s-1", action="go", request_id="r-1"),
        ("s-2", 'say "hi"\n'),
        ("s-3", "é", "r-3"),
        ("s-4", "x", None),
    ]
    call = PROTO.batch_step(items)
    decoded = TypeAdapter(list[BatchStepItem]).validate_json(call.body or b"")
    assert [(d.session_id, d.action) for d in decoded] == [
        ("s-1", "go"),
        ("s-2", 'say "hi"\n'),
        ("s-3", "é"),
        ("s-4", "x"),
    ]
    assert decoded[0].request_id == "r-1" and decoded[2].request_id == "r-3"
    assert decoded[1].request_id and decoded[3].request_id  # generated
    with pytest.raises(RequestValidationError):
        PROTO.batch_step([("s" * 256, "x")])
