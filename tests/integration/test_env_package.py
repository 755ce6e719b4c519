"""A package made by ``envhub env new``, built into a wheel and installed in a fresh virtualenv.

The virtualenv is new (no system site-packages) and gets two wheels with ``pip install
--no-deps``: envhub built from this checkout, and the scaffolded package. Their third-party
dependencies (numpy, gymnasium, torch, ...) are not downloaded again: a ``.pth`` file points
at the site-packages of the interpreter running the tests, whose envhub is *not* visible there
(it is installed in editable mode, through a finder that a ``.pth`` path does not run). In that
venv the env is listed with its package, passes ``envhub.check_env`` and its own tests, is
served by ``envhub serve`` (and evaluated over HTTP), and trains one iteration with
``envhub-train``.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import sysconfig
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from envhub.client import EnvClient
from envhub.policy.vllm_server import free_port

pytestmark = [pytest.mark.integration, pytest.mark.slow, pytest.mark.timeout(900)]

REPO = Path(__file__).resolve().parents[2]


def _run(
    args: list[str], *, cwd: Path | None = None, timeout: float = 300, checkout: bool = False
) -> subprocess.CompletedProcess[str]:
    """Run a command outside this checkout (``checkout``: with this checkout's envhub importable)."""
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    if checkout:
        env["PYTHONPATH"] = str(REPO)
    # Not the checkout's folder: `python -c` puts the working directory first on sys.path.
    out = subprocess.run(args, cwd=cwd or "/", env=env, capture_output=True, text=True, timeout=timeout)
    assert out.returncode == 0, f"{' '.join(args)}\n{out.stdout[-3000:]}\n{out.stderr[-3000:]}"
    return out


@pytest.fixture(scope="module")
def venv(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """A fresh venv holding the envhub wheel and the wheel of a package made by `envhub env new`."""
    work = tmp_path_factory.mktemp("envpkg")
    cli = [sys.executable, "-c", "from envhub.cli import main; main()"]
    _run([*cli, "env", "new", "guess", "-o", str(work)], checkout=True)
    dist = work / "dist"
    for source in (REPO, work / "envhub-guess"):
        _run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "--no-build-isolation",
              "-w", str(dist), str(source)])  # fmt: skip
    venv = work / "venv"
    _run([sys.executable, "-m", "venv", "--without-pip", str(venv)])
    python = venv / "bin" / "python"
    wheels = sorted(str(p) for p in dist.glob("*.whl"))
    assert len(wheels) == 2, wheels
    _run([sys.executable, "-m", "pip", "--python", str(python), "install", "-q", "--no-deps", *wheels])
    site = Path(
        _run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"]).stdout.strip()
    )
    (site / "_shared_deps.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    yield venv


def test_the_package_is_listed_and_checked_in_the_fresh_venv(venv: Path) -> None:
    python = str(venv / "bin" / "python")
    where = _run([python, "-c", "import envhub, envhub_guess; print(envhub.__file__, envhub_guess.__file__)"])
    assert all(str(venv) in path for path in where.stdout.split()), where.stdout  # both from the venv
    listing = _run([str(venv / "bin" / "envhub"), "list"]).stdout
    line = next(line for line in listing.splitlines() if "guess/Guess-v0" in line)
    assert "envhub-guess 0.1.0" in line
    _run([python, "-c", "import envhub; envhub.check_env(envhub.make('guess')); print('ok')"])
    # The scaffold's own tests (envhub.check_env among them) pass against the installed package.
    tests = Path(_run([python, "-c", "import envhub_guess; print(envhub_guess.__file__)"]).stdout.strip())
    scaffold_tests = venv.parent / "envhub-guess" / "tests"
    assert tests.is_file() and scaffold_tests.is_dir()
    _run([python, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(scaffold_tests)], cwd=venv.parent)


def test_envhub_serve_serves_the_package_and_eval_plays_it_over_http(venv: Path) -> None:
    port = free_port()
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    server = subprocess.Popen(
        [str(venv / "bin" / "envhub"), "serve", "guess", "--port", str(port), "--workers", "1"],
        env=env,
        cwd="/",
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        start_new_session=True,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 120
        while True:
            assert server.poll() is None, server.stderr.read().decode() if server.stderr else ""
            try:
                if httpx.get(f"{url}/health", timeout=2).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            assert time.monotonic() < deadline, "envhub serve did not come up"
            time.sleep(0.2)
        with EnvClient(url) as client:
            session = client.create_session().session_id
            first = client.reset(session, task_id="test-1")
            assert "Guess the hidden number" in first.observation
            step = client.step(session, "guess 7")
            assert step.info["task_id"] == "test-1" and step.info["is_action_valid"] is True
        out = venv.parent / "eval"
        _run([str(venv / "bin" / "envhub"), "eval", "--env", "guess", "--env-url", url, "--policy", "builtin",
              "--split", "test", "--limit", "4", "--n", "2", "-o", str(out)])  # fmt: skip
        report = json.loads((out / "report.json").read_text())
        assert report["env_id"] == "guess/Guess-v0" and report["success"]["value"] == 1.0
    finally:
        os.killpg(server.pid, signal.SIGTERM)
        server.wait(timeout=30)


def test_envhub_train_trains_one_iteration_on_the_package(venv: Path, small_model_dir: Path) -> None:
    run = venv.parent / "run"
    out = _run(
        [str(venv / "bin" / "envhub-train"), "--env", "guess", "--model", str(small_model_dir),
         "--iterations", "1", "--run-dir", str(run), "--group-size", "2", "--batch-tasks", "2",
         "--set", "rollout.max_steps=2", "--set", "rollout.max_tokens=4", "--no-progress"],
        timeout=600,
    )  # fmt: skip
    assert "learning curve" in out.stdout
    rows = [json.loads(line) for line in (run / "metrics.jsonl").read_text().splitlines()]
    assert [r["iteration"] for r in rows] == [1] and "rollout/success" in rows[0]
