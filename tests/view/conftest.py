"""Fixtures of the viewer tests: the viewer on a real loopback port, headless Chromium, Redis."""

from __future__ import annotations

import shutil
import socket
import tempfile
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from typing import Any

import pytest
import uvicorn
from fastapi import FastAPI

from tests.needs import require, require_binary, require_module

REDIS = "redis://127.0.0.1:6379/0"


@contextmanager
def serve(app: FastAPI) -> Iterator[str]:
    """``app`` under uvicorn on 127.0.0.1 (a port the OS picks); yields its base URL."""
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning"))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while not server.started:
        if time.monotonic() > deadline or not thread.is_alive():
            raise RuntimeError("the viewer did not start")
        time.sleep(0.02)
    try:
        yield f"http://127.0.0.1:{sock.getsockname()[1]}"
    finally:
        server.should_exit = True
        thread.join(timeout=10)
        sock.close()


@pytest.fixture
def served() -> Callable[[FastAPI], AbstractContextManager[str]]:
    return serve


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    """Debian's headless Chromium driven by selenium."""
    require_module("selenium", extra="browser")
    for binary, package in (("chromium", "chromium"), ("chromedriver", "chromium-driver")):
        require_binary(binary, how=f"run scripts/install-system-deps.sh (apt-get install {package})")
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    from envhub.envs.webshop.html_env import CHROMIUM_FLAGS

    profile = tempfile.mkdtemp(prefix="envhub-view-chromium-")
    options = webdriver.ChromeOptions()
    options.binary_location = str(shutil.which("chromium"))
    for flag in (*CHROMIUM_FLAGS, f"--user-data-dir={profile}", "--window-size=1500,1100"):
        options.add_argument(flag)
    driver = webdriver.Chrome(
        service=Service(executable_path=str(shutil.which("chromedriver"))), options=options
    )
    driver.implicitly_wait(5)
    yield driver
    driver.quit()
    shutil.rmtree(profile, ignore_errors=True)


def _redis_up() -> bool:
    try:
        with socket.create_connection(("127.0.0.1", 6379), timeout=1):
            return True
    except OSError:
        return False


@pytest.fixture
def stream() -> Iterator[str]:
    """A fresh stream name on the local Redis, deleted afterwards."""
    require(
        _redis_up(),
        "a Redis server on 127.0.0.1:6379",
        how="start one: redis-server --daemonize yes --bind 127.0.0.1 --port 6379",
    )
    import redis

    name = f"envhub:test-view:{uuid.uuid4().hex[:8]}"
    yield name
    client = redis.Redis.from_url(REDIS)
    keys = list(client.scan_iter(f"{name}*"))
    if keys:
        client.delete(*keys)
    client.close()
