"""The retrieval server (Search-R1's POST /retrieve) on loopback, and the remote retriever."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
import pytest

from envhub.core.errors import RetrieverUnavailableError
from envhub.envs.search.bm25 import BM25Retriever
from envhub.envs.search.data import load_corpus
from envhub.envs.search.env import SearchQAEnv
from envhub.envs.search.remote import RemoteRetriever
from envhub.envs.search.service import create_app
from tests.scrape import scrape


@pytest.fixture(scope="module")
def bm25(world_dir: Path) -> BM25Retriever:
    return BM25Retriever.build(load_corpus(world_dir / "corpus.jsonl"))


@pytest.fixture(scope="module")
def server(bm25: BM25Retriever, retriever_server: Any) -> Any:
    with retriever_server(lambda: bm25) as base_url:
        yield base_url


QUERIES = ["Who is the mayor?", "In which year was it founded?", "river sea"]


def test_batch_with_scores_has_search_r1_shape(server: str, bm25: BM25Retriever) -> None:
    reply = httpx.post(f"{server}/retrieve", json={"queries": QUERIES, "topk": 3, "return_scores": True})
    assert reply.status_code == 200
    body = reply.json()
    assert list(body) == ["result"] and len(body["result"]) == len(QUERIES)
    for query, row in zip(QUERIES, body["result"], strict=True):
        assert len(row) == 3
        for item, hit in zip(row, bm25.search_one(query, 3), strict=True):
            assert set(item) == {"document", "score"}
            assert item["document"] == {"id": hit.passage.id, "contents": hit.passage.contents}
            assert item["score"] == pytest.approx(hit.score)


def test_batch_without_scores_returns_bare_documents(server: str) -> None:
    body = httpx.post(f"{server}/retrieve", json={"queries": QUERIES, "topk": 2}).json()
    assert [len(row) for row in body["result"]] == [2, 2, 2]
    assert all(set(doc) == {"id", "contents"} for row in body["result"] for doc in row)
    assert body["result"][0][0]["contents"].startswith('"')


def test_topk_defaults_to_the_server_setting(server: str) -> None:
    body = httpx.post(f"{server}/retrieve", json={"queries": ["mayor"], "topk": None}).json()
    assert len(body["result"][0]) == 3


def test_single_query_form_is_answered_in_batch_shape(server: str) -> None:
    body = httpx.post(f"{server}/retrieve", json={"query": "mayor", "topk": 1, "return_scores": True}).json()
    assert len(body["result"]) == 1 and len(body["result"][0]) == 1


@pytest.mark.parametrize(
    "payload",
    [
        {},
        {"queries": "not a list"},
        {"queries": ["a"], "topk": 0},
        {"queries": ["a"], "query": "b"},
        {"queries": ["a"], "k": 3},
    ],
)
def test_bad_requests_are_rejected_with_422(server: str, payload: dict[str, Any]) -> None:
    assert httpx.post(f"{server}/retrieve", json=payload).status_code == 422


def test_health_and_metrics(server: str, bm25: BM25Retriever) -> None:
    health = httpx.get(f"{server}/health").json()
    assert health == {"status": "ok", "retriever": "bm25", "passages": bm25.size, "default_topk": 3}
    with httpx.Client(base_url=server) as c:
        before = scrape(c)
        assert c.post("/retrieve", json={"queries": ["a b", "c d"]}).status_code == 200
        assert c.post("/retrieve", json={"queries": ["e"]}).status_code == 200
        assert c.post("/retrieve", json={"queries": ["a"], "k": 3}).status_code == 422
        after = scrape(c)
    assert after.delta(before, "envhub_retriever_queries_total") == 3
    assert after.delta(before, "envhub_retriever_requests_total") == 2  # the 422 never reached it
    assert after.delta(before, "envhub_retriever_request_seconds_count") == 2
    assert after.delta(before, "envhub_retriever_errors_total") == 0


def test_remote_retriever_matches_local_results(server: str, bm25: BM25Retriever) -> None:
    remote = RemoteRetriever(f"{server}/retrieve")
    try:
        got = remote.search(QUERIES, 3)
    finally:
        remote.close()
    want = bm25.search(QUERIES, 3)
    assert [[h.passage for h in row] for row in got] == [[h.passage for h in row] for row in want]


def test_env_with_remote_retriever_behaves_like_local(server: str, world_dir: Path, tmp_path: Path) -> None:
    remote = SearchQAEnv(data_dir=world_dir, retriever="remote", retriever_url=f"{server}/retrieve")
    local = SearchQAEnv(data_dir=world_dir, index_dir=tmp_path / "i")
    for env in (remote, local):
        env.reset(options={"task_id": "test-00000"})
    action = f"<search>{remote.question.question}</search>"
    assert remote.step(action) == local.step(action)
    remote.close()


def test_unreachable_retriever_raises_a_typed_error() -> None:
    def refuse(request: httpx.Request) -> httpx.Response:
        raise httpx.ConnectError("connection refused", request=request)

    remote = RemoteRetriever(
        "http://127.0.0.1:9/retrieve", retries=1, backoff_s=0.0, transport=httpx.MockTransport(refuse)
    )
    with pytest.raises(RetrieverUnavailableError, match="serve-retriever") as info:
        remote.search(["q"], 3)
    assert info.value.detail["attempts"] == 2


def test_server_errors_are_retried_then_reported() -> None:
    calls: list[int] = []

    def flaky(request: httpx.Request) -> httpx.Response:
        calls.append(1)
        if len(calls) < 3:
            return httpx.Response(503)
        return httpx.Response(
            200, json={"result": [[{"document": {"id": 1, "contents": '"T"\nx'}, "score": 2.0}]]}
        )

    remote = RemoteRetriever(
        "http://x/retrieve", retries=3, backoff_s=0.0, transport=httpx.MockTransport(flaky)
    )
    (row,) = remote.search(["q"], 3)
    assert len(calls) == 3 and row[0].passage.id == "1" and row[0].score == 2.0


def test_create_app_wants_a_factory(bm25: BM25Retriever) -> None:
    factory: Callable[[], BM25Retriever] = lambda: bm25  # noqa: E731
    assert create_app(factory) is not None
    with pytest.raises(TypeError, match="factory"):
        create_app(bm25)  # type: ignore[arg-type]


def test_serve_retriever_command_answers_search_r1_clients(world_dir: Path, tmp_path: Path) -> None:
    import socket
    import subprocess
    import sys
    import time

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    command = [
        sys.executable,
        "-m",
        "envhub.cli",
        "serve-retriever",
        "--corpus",
        str(world_dir / "corpus.jsonl"),
    ]
    command += ["--index", str(tmp_path / "index"), "--port", str(port)]
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    base_url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while True:
            assert process.poll() is None, process.stderr.read().decode() if process.stderr else ""
            try:
                if httpx.get(f"{base_url}/health", timeout=2).status_code == 200:
                    break
            except httpx.TransportError:
                pass
            assert time.monotonic() < deadline, "serve-retriever did not come up"
            time.sleep(0.2)
        body = httpx.post(
            f"{base_url}/retrieve", json={"queries": QUERIES, "topk": 3, "return_scores": True}
        ).json()
        assert [len(row) for row in body["result"]] == [3, 3, 3]
        assert (tmp_path / "index" / "envhub-meta.json").is_file()
    finally:
        process.terminate()
        process.wait(timeout=30)


def test_a_token_guards_retrieve_and_metrics_but_not_health(
    bm25: BM25Retriever, retriever_server: Any
) -> None:
    with retriever_server(lambda: bm25, token="s3cret") as base_url:
        body = {"queries": QUERIES[:1], "topk": 1}
        assert httpx.get(f"{base_url}/health").status_code == 200
        for request in (
            lambda h: httpx.post(f"{base_url}/retrieve", json=body, headers=h),
            lambda h: httpx.get(f"{base_url}/metrics", headers=h),
        ):
            for headers in ({}, {"Authorization": "Bearer wrong"}):
                reply = request(headers)
                assert reply.status_code == 401 and reply.json()["code"] == "UNAUTHORIZED"
            assert request({"Authorization": "Bearer s3cret"}).status_code == 200
        remote = RemoteRetriever(f"{base_url}/retrieve", token="s3cret")
        assert [h.passage.id for h in remote.search(QUERIES[:1], 2)[0]] == [
            h.passage.id for h in bm25.search_one(QUERIES[0], 2)
        ]
        with pytest.raises(RetrieverUnavailableError):
            RemoteRetriever(f"{base_url}/retrieve", retries=0).search(QUERIES[:1], 2)
        # The env's remote retriever sends the token too, and finds what the local index finds.
        remote_env = SearchQAEnv(
            retriever="remote", retriever_url=f"{base_url}/retrieve", retriever_token="s3cret"
        )
        local_env = SearchQAEnv(retriever=bm25)
        observations = []
        for env in (remote_env, local_env):
            env.reset(seed=0)
            observations.append(env.step("<search>Who is the mayor?</search>")[0])
            env.close()
        assert observations[0] == observations[1] and observations[0].strip()
