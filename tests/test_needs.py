"""The no-quiet-skips rule of tests/conftest.py, run on a throwaway test file in a subprocess."""

from __future__ import annotations

import os
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from tests.needs import MISSING, extra_installed

ROOT = Path(__file__).resolve().parents[1]

SAMPLE = f'''
import pytest
from tests.needs import missing, require_module, requires_modules

def test_missing_from_an_extra_pyproject_lacks():
    missing("frobnicator", extra="no-such-extra")

def test_missing_from_the_timeseries_extra():
    missing("aeon", extra="timeseries")

def test_missing_system_program():
    pytest.skip("{MISSING}chromium is not on PATH; apt-get install chromium")

def test_importorskip_of_an_absent_module():
    pytest.importorskip("envhub_no_such_module")

def test_require_module_of_an_absent_module():
    require_module("envhub_no_such_module", extra="dev")

@requires_modules("envhub_no_such_module", extra="dev")
def test_mark_naming_an_installed_extra():
    pass

def test_unrelated_skip():
    pytest.skip("no GPU on this machine")

def test_passes():
    pass
'''


def _outcomes(tmp_path: Path, *, ci: bool) -> dict[str, str]:
    (tmp_path / "pytest.ini").write_text("[pytest]\n", encoding="utf-8")
    (tmp_path / "test_sample.py").write_text(SAMPLE, encoding="utf-8")
    report = tmp_path / "report.xml"
    env = {k: v for k, v in os.environ.items() if k != "CI"} | {"PYTHONPATH": str(ROOT)}
    if ci:
        env["CI"] = "true"
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-q",
            "-p",
            "tests.conftest",
            f"--junitxml={report}",
            "test_sample.py",
        ],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        timeout=120,
    )
    outcomes = {}
    for case in ET.parse(report).getroot().iter("testcase"):
        kinds = [child.tag for child in case if child.tag in ("failure", "error", "skipped")]
        outcomes[case.attrib["name"]] = kinds[0] if kinds else "passed"
    return outcomes


@pytest.fixture(autouse=True)
def _dev_extra_is_installed() -> None:
    assert extra_installed("dev"), "the suite runs with envhub-rl[dev] installed (make test)"


def test_under_ci_every_missing_dependency_fails_and_other_skips_stay(tmp_path: Path) -> None:
    assert _outcomes(tmp_path, ci=True) == {
        "test_missing_from_an_extra_pyproject_lacks": "failure",
        "test_missing_from_the_timeseries_extra": "failure",
        "test_missing_system_program": "failure",
        "test_importorskip_of_an_absent_module": "failure",
        "test_require_module_of_an_absent_module": "failure",
        "test_mark_naming_an_installed_extra": "error",  # a skipif mark is decided at setup
        "test_unrelated_skip": "skipped",
        "test_passes": "passed",
    }


def test_outside_ci_only_skips_naming_an_installed_extra_fail(tmp_path: Path) -> None:
    # aeon's extra is not part of make test; when someone installs it, its skip must fail too.
    timeseries = "failure" if extra_installed("timeseries") else "skipped"
    assert _outcomes(tmp_path, ci=False) == {
        "test_missing_from_an_extra_pyproject_lacks": "failure",  # a typo, CI or not
        "test_missing_from_the_timeseries_extra": timeseries,
        "test_missing_system_program": "skipped",
        "test_importorskip_of_an_absent_module": "skipped",
        "test_require_module_of_an_absent_module": "failure",
        "test_mark_naming_an_installed_extra": "error",
        "test_unrelated_skip": "skipped",
        "test_passes": "passed",
    }
