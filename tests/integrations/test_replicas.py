"""Every adapter keeps an episode's session on one replica of a scaled env service.

Two real env servers listen on the same port of 127.0.0.1 and 127.0.0.2, and one name resolves
to both, in an order that turns with each lookup (as Docker's DNS does for a scaled compose
service, and a headless Kubernetes Service). The servers close idle keep-alive connections
after 1 s, and the "model" thinks for longer than that between steps: each step then opens a
new connection, which resolves the name again. A client that did not pin the session to one
address would reach the other replica and get SESSION_NOT_FOUND.
"""

from __future__ import annotations

import asyncio
import itertools
import socket
import threading
import time
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
import uvicorn

from envhub.integrations._episode import open_env
from envhub.rollout.replicas import pin_replica
from envhub.server import ServerSettings
from envhub.server.app import create_app

pytestmark = pytest.mark.integration

NAME = "timeseries-replicas"
ADDRESSES = ("127.0.0.1", "127.0.0.2")
THINK_S = 1.5  # longer than the servers' keep-alive


def _serve(host: str, port: int) -> tuple[uvicorn.Server, threading.Thread, int]:
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((host, port))
    app = create_app(ServerSettings(env_id="envhub/TimeSeries-v0", workers=1))
    config = uvicorn.Config(app, log_level="warning", lifespan="on", timeout_keep_alive=1)
    server = uvicorn.Server(config)
    thread = threading.Thread(target=lambda: asyncio.run(server.serve(sockets=[sock])), daemon=True)
    thread.start()
    deadline = time.monotonic() + 60
    while not server.started:
        assert time.monotonic() < deadline and thread.is_alive(), f"server on {host} did not start"
        time.sleep(0.05)
    return server, thread, sock.getsockname()[1]


@pytest.fixture(scope="module")
def replicas() -> Iterator[int]:
    """Two TimeSeries servers on one port of two loopback addresses; yields the port."""
    first, first_thread, port = _serve(ADDRESSES[0], 0)
    second, second_thread, _ = _serve(ADDRESSES[1], port)
    try:
        yield port
    finally:
        for server, thread in ((first, first_thread), (second, second_thread)):
            server.should_exit = True
            thread.join(timeout=10)


@pytest.fixture
def round_robin_dns(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Resolve NAME to both addresses, the first one turning with each lookup; returns the lookups."""
    real = socket.getaddrinfo
    turns = itertools.cycle([ADDRESSES, ADDRESSES[::-1]])
    lookups: list[str] = []

    def getaddrinfo(host: Any, port: Any, *args: Any, **kwargs: Any) -> Any:
        if host != NAME:
            return real(host, port, *args, **kwargs)
        answer = next(turns)
        lookups.append(answer[0])
        return [(socket.AF_INET, socket.SOCK_STREAM, 6, "", (a, int(port or 80))) for a in answer]

    monkeypatch.setattr(socket, "getaddrinfo", getaddrinfo)
    return lookups


def _sessions(port: int) -> dict[str, int]:
    """Open sessions per replica, from each server's /metrics."""
    counts = {}
    for address in ADDRESSES:
        text = httpx.get(f"http://{address}:{port}/metrics", timeout=10).text
        line = next(x for x in text.splitlines() if x.startswith("envhub_sessions_active"))
        counts[address] = int(float(line.split()[-1]))
    return counts


def test_a_name_with_two_addresses_is_pinned_to_one_of_them(
    replicas: int, round_robin_dns: list[str]
) -> None:
    pinned = {pin_replica(f"http://{NAME}:{replicas}") for _ in range(40)}
    assert pinned == {f"http://{a}:{replicas}" for a in ADDRESSES}  # both are used, each pinned
    assert pin_replica("http://127.0.0.1:1") == "http://127.0.0.1:1"
    assert pin_replica("https://envs.example.invalid") == "https://envs.example.invalid"
    assert pin_replica("http://no-such-replica.invalid:8000") == "http://no-such-replica.invalid:8000"


def test_open_env_plays_a_whole_episode_on_one_replica(replicas: int, round_robin_dns: list[str]) -> None:
    # open_env is what SkyRL's EnvhubTextEnv, verl's AgentLoop env, and TRL's tool envs build.
    env = open_env("envhub/TimeSeries-v0", base_url=f"http://{NAME}:{replicas}")
    try:
        env.reset(seed=0)
        for action in ["stats[0:50]", "zscore[0:200]", "fft[0:128]"]:
            time.sleep(THINK_S)  # the model thinks; the idle connection is closed
            env.step(action)
        assert sorted(_sessions(replicas).values()) == [0, 1]
    finally:
        env.close()


def test_skyrl_env_plays_on_one_replica(replicas: int, round_robin_dns: list[str]) -> None:
    pytest.importorskip("skyrl_gym")
    import skyrl_gym

    from envhub.integrations.skyrl import register_envhub_envs

    register_envhub_envs(["envhub/TimeSeries-v0"], env_config={"base_url": f"http://{NAME}:{replicas}"})
    try:
        env = skyrl_gym.make("envhub-TimeSeries-v0", env_config={}, extras={"seed": 1})
        env.init([])
        for action in ["stats[0:50]", "zscore[0:200]", "answer[normal]"]:
            time.sleep(THINK_S)
            out = env.step(f"<think>Next.</think><action>{action}</action>")
            assert out["metadata"]["is_action_valid"] is True
        assert out["done"] is True
        env.close()
    finally:
        register_envhub_envs(["envhub/TimeSeries-v0"])


def test_verl_agent_manager_keeps_its_batch_on_one_replica(replicas: int, round_robin_dns: list[str]) -> None:
    from envhub.integrations.verl_agent import EnvhubEnvironmentManager

    manager = EnvhubEnvironmentManager(
        f"http://{NAME}:{replicas}", env_id="envhub/TimeSeries-v0", env_num=2, group_n=2
    )
    try:
        manager.reset(kwargs=None)
        for action in ["stats[0:50]", "zscore[0:200]"]:
            time.sleep(THINK_S)
            _, _, dones, infos = manager.step([f"<think>Next.</think><action>{action}</action>"] * 4)
            assert all(info["is_action_valid"] for info in infos)
        assert sorted(_sessions(replicas).values()) == [0, 4]
    finally:
        manager.close()
