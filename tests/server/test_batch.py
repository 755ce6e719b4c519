"""``/v1/batch``: many sessions per request, results in order, one slot per item."""

from __future__ import annotations

import httpx
import pytest

from envhub.core.wire import BatchResetResponse, BatchStepResponse

from .conftest import error_code, new_session

# Every test here runs on both request paths (the hot path and FastAPI's routes).
pytestmark = pytest.mark.usefixtures("both_paths")


def test_batch_step_answers_in_request_order(client: httpx.Client) -> None:
    ids = [new_session(client, task_id=f"t{i}")[0] for i in range(6)]
    items = [{"session_id": sid, "action": f"a{i}"} for i, sid in enumerate(ids)]
    body = BatchStepResponse.model_validate(client.post("/v1/batch/step", json=items).json())
    assert [slot.ok for slot in body.results] == [True] * 6
    assert [slot.result.session_id for slot in body.results if slot.result] == ids
    assert [slot.result.observation for slot in body.results if slot.result] == [
        f"echo a{i} #1" for i in range(6)
    ]


def test_batch_step_reports_a_bad_item_in_its_slot_only(client: httpx.Client) -> None:
    good, _ = new_session(client)
    unreset = client.post("/v1/sessions", json={}).json()["session_id"]
    items = [
        {"session_id": good, "action": "x"},
        {"session_id": "s-does-not-exist", "action": "x"},
        {"session_id": unreset, "action": "x"},
        {"session_id": good, "action": "y"},
    ]
    response = client.post("/v1/batch/step", json=items)
    assert response.status_code == 200
    slots = BatchStepResponse.model_validate(response.json()).results
    assert [s.ok for s in slots] == [True, False, False, True]
    assert slots[1].error is not None and slots[1].error.code == "SESSION_NOT_FOUND"
    assert slots[2].error is not None and slots[2].error.code == "RESET_NEEDED"
    assert (
        slots[3].result is not None and slots[3].result.observation == "echo y #2"
    )  # same session, in order


def test_batch_step_request_ids_are_idempotent(client: httpx.Client) -> None:
    sid, _ = new_session(client)
    items = [{"session_id": sid, "action": "x", "request_id": "b-1"}]
    first = client.post("/v1/batch/step", json=items).json()
    again = client.post("/v1/batch/step", json=items).json()
    assert first == again
    assert client.get(f"/v1/sessions/{sid}").json()["step_count"] == 1


def test_batch_reset_resets_each_item(client: httpx.Client) -> None:
    ids = [client.post("/v1/sessions", json={}).json()["session_id"] for _ in range(3)]
    items = [
        {"session_id": ids[0], "task_id": "t1"},
        {"session_id": ids[1], "task_id": "zzz"},
        {"session_id": ids[2], "seed": 5},
    ]
    slots = BatchResetResponse.model_validate(client.post("/v1/batch/reset", json=items).json()).results
    assert [s.ok for s in slots] == [True, False, True]
    assert slots[0].result is not None and slots[0].result.info["task_id"] == "t1"
    assert slots[1].error is not None and slots[1].error.code == "UNKNOWN_TASK"


def test_empty_batch_is_an_empty_answer(client: httpx.Client) -> None:
    assert client.post("/v1/batch/step", json=[]).json() == {"results": []}


def test_batch_body_must_be_a_list_of_items(client: httpx.Client) -> None:
    for body in (
        {"session_id": "x", "action": "y"},
        [{"session_id": "x"}],
        [{"session_id": "x", "action": "y", "z": 1}],
    ):
        response = client.post("/v1/batch/step", json=body)
        assert response.status_code == 422
        assert error_code(response) == "VALIDATION_ERROR"
