"""scripts/install-docker.sh never starts a second daemon: a user the running engine does not
answer is told why and what to do, and no dockerd is started (real engine, real unprivileged user)."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _dockerds() -> list[str]:
    return subprocess.run(["pgrep", "-x", "dockerd"], capture_output=True, text=True).stdout.split()


@pytest.mark.integration
def test_a_user_the_engine_does_not_answer_gets_a_reason_not_a_second_daemon(tmp_path: Path) -> None:
    if os.geteuid() != 0 or not shutil.which("runuser"):
        pytest.skip("needs root and runuser to run the script as an unprivileged user")
    if not _dockerds() or subprocess.run(["docker", "info"], capture_output=True).returncode != 0:
        pytest.skip("needs a running Docker engine (make docker-engine)")
    before = _dockerds()
    done = subprocess.run(
        ["runuser", "-u", "nobody", "--", "env", "CI=true", f"HOME={tmp_path}",
         "PATH=/usr/sbin:/usr/bin:/sbin:/bin", "bash", str(ROOT / "scripts/install-docker.sh")],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert done.returncode == 1, done.stderr  # CI=true: the fleet test must run, so this fails
    assert "does not answer user nobody" in done.stderr and "Not starting another one" in done.stderr
    assert "permission denied" in done.stderr  # docker's own reason, passed on
    assert _dockerds() == before


def _plan(socket_path: Path, tmp_path: Path) -> str:
    """The script's decision for a default socket at `socket_path`, in a PID namespace where no
    dockerd runs (as on a machine whose processes were killed, the daemon's files left behind)."""
    if os.geteuid() != 0 or not shutil.which("unshare"):
        pytest.skip("needs root and unshare for a PID namespace without the machine's dockerd")
    done = subprocess.run(
        ["unshare", "--pid", "--fork", "--mount-proc", "env", "-u", "DOCKER_HOST",
         f"ENVHUB_DOCKER_SOCKET={socket_path}", "ENVHUB_DOCKER_INFO_TIMEOUT=3", f"HOME={tmp_path}",
         "bash", str(ROOT / "scripts/install-docker.sh"), "--plan"],
        capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


def test_a_stale_socket_left_by_a_killed_daemon_is_replaced_not_obeyed(tmp_path: Path) -> None:
    # CI on a machine whose dockerd was killed found /var/run/docker.sock, refused to start an
    # engine, and failed every test group: a socket file that nothing listens on is not a daemon.
    path = tmp_path / "docker.sock"
    stale = socket.socket(socket.AF_UNIX)
    stale.bind(str(path))
    stale.close()  # the file stays; nothing listens
    assert _plan(path, tmp_path).startswith("start: stale socket")


def test_a_socket_something_listens_on_is_never_replaced(tmp_path: Path) -> None:
    path = tmp_path / "docker.sock"
    with socket.socket(socket.AF_UNIX) as live:
        live.bind(str(path))
        live.listen()
        assert _plan(path, tmp_path).startswith("refuse:")


def test_no_socket_and_no_daemon_means_start_an_engine(tmp_path: Path) -> None:
    assert "start: no engine here" in _plan(tmp_path / "docker.sock", tmp_path)


@pytest.mark.integration
def test_a_stale_default_socket_is_left_alone_when_the_engine_answers_through_a_context(
    tmp_path: Path,
) -> None:
    # A Docker context (Docker Desktop, a remote or rootless engine) answers `docker info`; the
    # default socket is a leftover nothing listens on and no dockerd runs here. The engine that
    # answers is the one to use: no socket removed, no second engine started.
    if os.geteuid() != 0 or not shutil.which("unshare") or not Path("/run/docker.sock").is_socket():
        pytest.skip("needs root, unshare and a running engine at /run/docker.sock")
    if subprocess.run(["docker", "info"], capture_output=True).returncode != 0:
        pytest.skip("needs a running Docker engine (make docker-engine)")
    stale = tmp_path / "stale.sock"
    with socket.socket(socket.AF_UNIX) as s:
        s.bind(str(stale))  # the file stays; nothing listens
    live = tmp_path / "live.sock"
    live.touch()
    config = tmp_path / "docker-config"
    env = {**os.environ, "DOCKER_CONFIG": str(config), "HOME": str(tmp_path)}
    env.pop("DOCKER_HOST", None)
    for args in (["create", "other", "--docker", f"host=unix://{live}"], ["use", "other"]):
        subprocess.run(["docker", "context", *args], env=env, check=True, capture_output=True)
    # In a mount and PID namespace of its own: the engine's socket reached only through the
    # context, a stale file at the default path, no dockerd in sight.
    inner = (
        f"mount --bind /run/docker.sock {live} && mount --bind {stale} /run/docker.sock && "
        f"docker info >/dev/null && bash {ROOT / 'scripts/install-docker.sh'} --plan"
    )
    done = subprocess.run(
        ["unshare", "--mount", "--propagation", "private", "--pid", "--fork", "--mount-proc",
         "bash", "-c", inner],
        capture_output=True, text=True, timeout=60, env=env,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip().startswith("use:"), done.stdout


def test_a_docker_host_nothing_answers_on_is_named_not_blamed_on_the_docker_group(tmp_path: Path) -> None:
    if os.geteuid() != 0 or not shutil.which("unshare"):
        pytest.skip("needs root and unshare for a PID namespace without the machine's dockerd")
    path = tmp_path / "elsewhere.sock"
    stale = socket.socket(socket.AF_UNIX)
    stale.bind(str(path))
    stale.close()
    done = subprocess.run(
        ["unshare", "--pid", "--fork", "--mount-proc", "env", "-u", "CI", f"DOCKER_HOST=unix://{path}",
         "ENVHUB_DOCKER_INFO_TIMEOUT=3", f"HOME={tmp_path}", "bash", str(ROOT / "scripts/install-docker.sh")],
        capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr  # outside CI: said, then the fleet tests skip
    assert f"DOCKER_HOST=unix://{path} names an engine that does not answer" in done.stderr
    assert "docker group" not in done.stderr
    assert path.exists()  # an operator's socket is never removed
