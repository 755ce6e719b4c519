"""``/v1/tasks``: paging through the env's task ids."""

from __future__ import annotations

import httpx

from envhub.core.wire import TaskList

from .conftest import error_code


def test_tasks_default_split_lists_all(client: httpx.Client) -> None:
    page = TaskList.model_validate(client.get("/v1/tasks").json())
    assert (page.split, page.total, page.task_ids) == ("train", 10, [f"t{i}" for i in range(10)])


def test_tasks_pages_with_offset_and_limit(client: httpx.Client) -> None:
    page = client.get("/v1/tasks", params={"split": "test", "offset": 1, "limit": 2}).json()
    assert page == {"split": "test", "offset": 1, "limit": 2, "total": 5, "task_ids": ["u1", "u2"]}


def test_unknown_split_is_400_invalid_config(client: httpx.Client) -> None:
    response = client.get("/v1/tasks", params={"split": "dev"})
    assert response.status_code == 400
    assert error_code(response) == "INVALID_CONFIG"
    assert "train" in response.json()["message"]


def test_negative_offset_is_422(client: httpx.Client) -> None:
    response = client.get("/v1/tasks", params={"offset": -1})
    assert response.status_code == 422
    assert error_code(response) == "VALIDATION_ERROR"
