"""Every Python example in docs/integrations/*.md runs, against a real server where it needs one.

An example that talks to a server says ``BASE_URL = "http://127.0.0.1:8000"``; the test starts
``envhub serve``'s app on a free loopback port and points ``BASE_URL`` there.
"""

from __future__ import annotations

import contextlib
import io
import re
from pathlib import Path
from typing import Any

import pytest

from envhub.server import ServerSettings
from envhub.server.testing import serve_in_thread
from tests.needs import require_module

pytestmark = pytest.mark.integration

DOCS = Path(__file__).resolve().parents[2] / "docs" / "integrations"
DEFAULT_URL = '"http://127.0.0.1:8000"'


def _blocks(name: str) -> list[str]:
    blocks = re.findall(r"```python\n(.*?)```", (DOCS / name).read_text(), re.DOTALL)
    assert blocks, f"{name} lost its Python example"
    return blocks


def _run(code: str, name: str, base_url: str | None = None) -> dict[str, Any]:
    if base_url is not None:
        assert DEFAULT_URL in code
        code = code.replace(DEFAULT_URL, repr(base_url))
    scope: dict[str, Any] = {}
    with contextlib.redirect_stdout(io.StringIO()):
        exec(compile(code, str(DOCS / name), "exec"), scope)
    return scope


def test_vector_examples_run() -> None:
    local, remote = _blocks("vector.md")
    scope = _run(local, "vector.md")
    assert len(scope["obs"]) == 4
    with serve_in_thread(ServerSettings(env_id="envhub/TimeSeries-v0", workers=1)) as server:
        scope = _run(remote, "vector.md", server.base_url)
    assert scope["rewards"].shape == (8,)


def test_skyrl_example_runs() -> None:
    pytest.importorskip("skyrl_gym")  # the `skyrl` extra; CI installs it, so this runs
    (block,) = _blocks("skyrl.md")
    scope = _run(block, "skyrl.md")
    assert scope["out"]["done"] is True


def test_trl_example_trains_one_step() -> None:
    require_module("trl", extra="trl")
    (block,) = _blocks("trl.md")
    with serve_in_thread(ServerSettings(env_id="envhub/Sokoban-v0", workers=1)) as server:
        scope = _run(block, "trl.md", server.base_url)
    returns = scope["returns"]
    assert len(returns) == 4
    assert scope["trainer"].state.log_history[0]["reward"] == pytest.approx(sum(returns) / 4, abs=1e-6)


def test_verl_agent_example_runs_and_wins() -> None:
    (block,) = _blocks("verl-agent.md")
    with serve_in_thread(ServerSettings(env_id="envhub/ALFWorld-v0", workers=1)) as server:
        scope = _run(block, "verl-agent.md", server.base_url)
    assert scope["success"]["success_rate"].tolist() == [1.0, 1.0, 1.0]


def _fleet_services() -> set[str]:
    """The names a fleet client can reach: compose's services and the Kubernetes Services."""
    import yaml

    root = DOCS.parents[1]
    compose = yaml.safe_load((root / "docker-compose.yml").read_text())
    names = set(compose["services"])
    for path in (root / "deploy" / "k8s").glob("*.yaml"):
        names |= {
            doc["metadata"]["name"]
            for doc in yaml.safe_load_all(path.read_text())
            if doc and doc.get("kind") == "Service"
        }
    return names


def test_every_url_in_the_integration_docs_names_a_real_service_or_loopback() -> None:
    sources = [*DOCS.glob("*.md"), *(DOCS.parents[1] / "envhub" / "integrations").glob("*.py")]
    services = _fleet_services()
    assert {"sokoban", "alfworld", "timeseries"} <= services
    wrong = []
    for path in sources:
        for host in re.findall(r"https?://([A-Za-z0-9.\-]+)", path.read_text()):
            if host not in services and host not in ("127.0.0.1", "localhost"):
                wrong.append(f"{path.name}: {host}")
    assert not wrong, f"hosts that are neither loopback nor a fleet service: {wrong}"
