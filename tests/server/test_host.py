"""The worker-side host, in-process: ops run in order and answer for themselves."""

from __future__ import annotations

import json
import pickle

import numpy as np
import pytest

from envhub.envs.registry import make
from envhub.server.host import EnvHost
from envhub.server.messages import (
    CloseOp,
    CreateOp,
    Op,
    PingOp,
    ResetOp,
    StateOp,
    StepOp,
    TasksOp,
    from_wire,
    to_wire,
)

from .conftest import COUNTER, CRASHY


def _host(env_id: str = COUNTER) -> EnvHost:
    return EnvHost(lambda **kw: make(env_id, **kw), env_id)


def test_ops_run_in_order_and_render_json() -> None:
    host = _host()
    results = host.run(
        [
            CreateOp("a", {}),
            ResetOp("a", 1, "t2", {}, None, "rest", {"expires_at": 9.0}),
            StepOp("a", "hi", None, "rest", {"expires_at": 9.0}),
            StateOp("a", "rest", {"created_at": 1.0, "expires_at": 9.0}),
        ]
    )
    assert [ok for ok, _ in results] == [True, True, True, True]
    step = json.loads(results[2][1])
    assert (step["observation"], step["step_count"], step["expires_at"]) == ("echo hi #1", 1, 9.0)
    assert json.loads(results[3][1])["last_observation"] == "echo hi #1"


def test_env_exception_is_that_items_execution_error_only() -> None:
    host = _host(CRASHY)
    results = host.run(
        [
            CreateOp("a", {}),
            ResetOp("a", None, None, {}, None, "rest", {"expires_at": 0.0}),
            StepOp("a", "raise", None, "rest", {"expires_at": 0.0}),
            StepOp("a", "fine", None, "rest", {"expires_at": 0.0}),
        ]
    )
    assert results[2][0] is False
    assert results[2][1]["code"] == "EXECUTION_ERROR"
    assert "CrashyEnv was asked to raise" in results[2][1]["message"]
    assert results[3][0] is True


def test_unknown_session_is_session_not_found() -> None:
    ok, error = _host().run([StepOp("ghost", "x", None, "rest", {"expires_at": 0.0})])[0]
    assert not ok and error["code"] == "SESSION_NOT_FOUND"


def test_stored_answer_is_returned_for_a_repeated_request_id() -> None:
    host = _host()
    host.run([CreateOp("a", {}), ResetOp("a", None, None, {}, None, "rest", {"expires_at": 0.0})])
    op = StepOp("a", "x", "same", "rest", {"expires_at": 0.0})
    first, again = host.run([op, op])
    assert first == again
    assert (
        json.loads(host.run([StateOp("a", "rest", {"created_at": 0, "expires_at": 0})])[0][1])["step_count"]
        == 1
    )


def test_info_values_json_cannot_hold_are_converted() -> None:
    from envhub.server.host import _dumps

    body = json.loads(
        _dumps({"a": np.float32(1.5), "b": np.arange(3), "c": b"\x89PNG", "d": {1, 2}, "e": object})
    )
    assert (
        body["a"] == 1.5
        and body["b"] == [0, 1, 2]
        and body["c"] == "iVBORw=="
        and sorted(body["d"]) == [1, 2]
    )
    assert isinstance(body["e"], str)


def test_close_all_closes_every_env() -> None:
    host = _host()
    host.run([CreateOp("a", {}), CreateOp("b", {})])
    host.close_all()
    assert host.run([StateOp("a", "rest", {})])[0][1]["code"] == "SESSION_NOT_FOUND"


def test_every_op_is_a_typed_message_and_unknown_ones_are_errors() -> None:
    host = _host()
    pid, tasks, closed, bogus = host.run([PingOp(), TasksOp("test", 1, 2), CloseOp("nobody"), ("step", "a")])  # type: ignore[list-item]
    assert pid[0] and isinstance(pid[1], int)
    assert json.loads(tasks[1])["task_ids"] == ["u1", "u2"]
    assert closed == (True, None)
    assert not bogus[0] and bogus[1]["code"] == "EXECUTION_ERROR"  # a positional tuple is no op


@pytest.mark.parametrize(
    "op",
    [
        CreateOp("a", {"prefix": "p"}),
        ResetOp("a", 1, "t2", {}, "r-1", "openenv", {"expires_at": 9.0}),
        StepOp("a", "go", None, "rest", {}),
        StateOp("a", "rest", {}),
        CloseOp("a"),
        TasksOp(None, 0, 10),
        PingOp(),
    ],
)
def test_every_op_survives_its_wire_form(op: Op) -> None:
    wire = to_wire([op])[0]
    assert type(wire) is tuple
    assert from_wire(pickle.loads(pickle.dumps(wire))) == op and type(from_wire(wire)) is type(op)
