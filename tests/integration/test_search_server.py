"""Search-QA through the real env server: a group of 4 on one question, stepped with batch steps.

The second test runs the whole search fleet on loopback: the env server's sessions search
through ``retriever="remote"`` against envhub's own retrieval server (Search-R1's
``POST /retrieve``).
"""

from __future__ import annotations

import asyncio
import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import httpx
import pytest
import uvicorn

from envhub.envs.search.bm25 import BM25Retriever
from envhub.envs.search.data import EMBEDDED_DATA_DIR, load_dataset
from envhub.envs.search.parsing import INVALID_ACTION_FEEDBACK
from envhub.envs.search.service import create_app
from envhub.server import ServerSettings
from envhub.server.testing import serve_in_thread
from tests.scrape import scrape

pytestmark = pytest.mark.integration


def _single_hop_task() -> tuple[str, str, str]:
    question = next(q for q in load_dataset(EMBEDDED_DATA_DIR).splits["test"] if q.hops == 1)
    return question.id, question.question, question.golden_answers[0]


def _batch_step(client: httpx.Client, items: list[dict[str, str]]) -> list[dict[str, Any]]:
    reply = client.post("/v1/batch/step", json=items)
    assert reply.status_code == 200, reply.text
    slots = reply.json()["results"]
    assert all(slot["ok"] for slot in slots), slots
    return [slot["result"] for slot in slots]


def _play_group(base_url: str, env_kwargs: dict[str, Any]) -> list[dict[str, Any]]:
    """Four members on one task: right (x2), wrong, invalid-then-right; returns the final results."""
    task_id, question, golden = _single_hop_task()
    plans = [
        [f"<search>{question}</search>", f"<answer>{golden}</answer>"],
        [f"<think>look it up</think><search>{question}</search>", f"<answer> {golden.upper()} </answer>"],
        [f"<search>{question}</search>", "<answer>somebody else</answer>"],
        ["I will just guess", f"<search>{question}</search>", f"<answer>{golden}</answer>"],
    ]
    with httpx.Client(base_url=base_url, timeout=120) as client:
        created = client.post(
            "/v1/groups", json={"group_size": 4, "task_id": task_id, "env_kwargs": env_kwargs}
        )
        assert created.status_code == 201, created.text
        members = created.json()["sessions"]
        assert {m["observation"] for m in members} == {question}
        assert {m["info"]["anchor"] for m in members} == {question}
        sessions = [m["session_id"] for m in members]
        final: dict[str, dict[str, Any]] = {}
        for turn in range(max(len(p) for p in plans)):
            items = [
                {"session_id": sid, "action": plan[turn]}
                for sid, plan in zip(sessions, plans, strict=True)
                if turn < len(plan)
            ]
            results = _batch_step(client, items)
            if turn == 0:
                # members that searched the same query reach the same state: same anchor
                searched = [r for item, r in zip(items, results, strict=True) if "<search>" in item["action"]]
                assert len({r["info"]["anchor"] for r in searched}) == 1
                assert all(r["observation"].startswith("\n\n<information>Doc 1(Title:") for r in searched)
                assert all(r["info"]["supporting_hit"] for r in searched)
                assert results[3]["observation"] == INVALID_ACTION_FEEDBACK
                assert results[3]["info"]["is_action_valid"] is False
            for item, result in zip(items, results, strict=True):
                if result["terminated"]:
                    final[item["session_id"]] = result
        return [final[sid] for sid in sessions]


def _assert_outcomes(final: list[dict[str, Any]]) -> None:
    assert [(r["reward"], r["info"]["won"]) for r in final] == [
        (1.0, True),
        (1.0, True),
        (0.0, False),
        (1.0, True),
    ]
    assert [r["info"]["n_searches"] for r in final] == [1, 1, 1, 1]


def test_group_of_4_on_one_question_over_http() -> None:
    with serve_in_thread(ServerSettings(env_id="envhub/SearchQA-v0", workers=2)) as server:
        _assert_outcomes(_play_group(server.base_url, {}))


@contextmanager
def _retrieval_server() -> Iterator[str]:
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    app = create_app(lambda: BM25Retriever.build(load_dataset(EMBEDDED_DATA_DIR).passages))
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning", lifespan="on"))
    thread = threading.Thread(target=lambda: asyncio.run(server.serve(sockets=[sock])), daemon=True)
    thread.start()
    deadline = time.monotonic() + 60
    while not server.started:
        assert time.monotonic() < deadline and thread.is_alive(), "the retrieval server did not start"
        time.sleep(0.02)
    try:
        yield f"http://127.0.0.1:{port}/retrieve"
    finally:
        server.should_exit = True
        thread.join(timeout=30)
        sock.close()


def test_env_server_sessions_search_through_the_retrieval_server() -> None:
    with _retrieval_server() as url:
        with serve_in_thread(ServerSettings(env_id="envhub/SearchQA-v0", workers=2)) as server:
            _assert_outcomes(_play_group(server.base_url, {"retriever": "remote", "retriever_url": url}))
        with httpx.Client(base_url=url.removesuffix("/retrieve")) as c:
            assert scrape(c).value("envhub_retriever_queries_total") == 4
