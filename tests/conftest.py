"""Suite-wide rules: a test skipped for a missing dependency does not pass quietly.

See :mod:`tests.needs` for the helpers tests skip through. This hook reads every skip:

* under ``CI=true``, a skip whose reason says a dependency is missing fails the test
  (``make test`` installs every extra, Chromium and the test data);
* anywhere, a skip that names an ``envhub[<extra>]`` which is installed fails the test.

Skips for other reasons (a spec without a built-in policy, say) stay skips; the README lists them.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from typing import Any

import pytest

from tests.needs import MISSING, defined_extras, extra_installed, extras_named_in

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
        return f"the skip names envhub[{','.join(unknown)}], which pyproject.toml does not define: {reason}"
    installed = [extra for extra in named if extra_installed(extra)]
    if installed:
        names = ",".join(installed)
        return f"skipped although envhub[{names}] is installed, so the skip hides an error: {reason}"
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
