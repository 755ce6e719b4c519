"""Shared Search-QA fixtures: a generated dataset on disk and a retrieval server on loopback."""

from __future__ import annotations

import asyncio
import socket
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx
import pytest
import uvicorn

from envhub.envs.search.fixtures import write_world
from envhub.envs.search.retrieval import Retriever
from envhub.envs.search.service import create_app


@pytest.fixture(scope="session")
def world_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A generated dataset (800 passages, 60 train / 40 test questions, with parquet)."""
    root = tmp_path_factory.mktemp("world")
    write_world(root, n_passages=800, n_train=60, n_test=40, seed=7, parquet=True)
    return root


@contextmanager
def serve_retriever(
    load: Callable[[], Retriever], *, default_topk: int = 3, token: str | None = None
) -> Iterator[str]:
    """Run the real retrieval server with uvicorn on a free loopback port; yields its base URL."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    app = create_app(load, default_topk=default_topk, token=token)
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning", lifespan="on"))
    thread = threading.Thread(target=lambda: asyncio.run(server.serve(sockets=[sock])), daemon=True)
    thread.start()
    deadline = time.monotonic() + 60
    while not server.started:
        if time.monotonic() > deadline or not thread.is_alive():
            raise RuntimeError("the retrieval server did not start")
        time.sleep(0.02)
    base_url = f"http://127.0.0.1:{port}"
    assert httpx.get(f"{base_url}/health", timeout=10).status_code == 200
    try:
        yield base_url
    finally:
        server.should_exit = True
        thread.join(timeout=30)
        sock.close()


@pytest.fixture(scope="session")
def retriever_server() -> Callable[..., object]:
    """The :func:`serve_retriever` context manager, for tests that start their own server."""
    return serve_retriever
