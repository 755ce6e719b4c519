"""Schemathesis fuzzes every HTTP operation of ``/openapi.json`` against the real server.

Bounded: up to 50 generated requests per operation (valid and invalid inputs), over 500 in
all. Each must answer within the client timeout (no hang), with a documented status: no 5xx
other than the documented ``EXECUTION_ERROR``, ``CAPACITY_REACHED`` and ``STEP_TIMEOUT``, and
every error in the ``{code, message, detail}`` shape.
"""

from __future__ import annotations

import sys
from collections import Counter
from pathlib import Path

import pytest
import schemathesis
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis.errors import Unsatisfiable

from envhub.core.errors import ErrorCode
from envhub.server import ServerSettings
from envhub.server.testing import serve_in_thread

pytestmark = pytest.mark.integration


@pytest.fixture(scope="module", autouse=True)
def _repo_root_importable() -> None:
    """Workers import the test envs (tests/server/envs.py) by name, from the repo root."""
    root = str(Path(__file__).resolve().parents[2])
    if root not in sys.path:
        sys.path.insert(0, root)


#: 5xx answers the API documents (anything else, e.g. INTERNAL_ERROR, is a bug).
DOCUMENTED_5XX = {(500, "EXECUTION_ERROR"), (503, "CAPACITY_REACHED"), (504, "STEP_TIMEOUT")}
EXAMPLES = {schemathesis.GenerationMode.POSITIVE: 30, schemathesis.GenerationMode.NEGATIVE: 20}


def test_fuzzed_requests_get_documented_answers() -> None:
    with serve_in_thread(ServerSettings(env_id="tests.server.envs:CounterEnv", workers=1)) as server:
        schema = schemathesis.openapi.from_url(server.base_url + "/openapi.json")
        operations = [result.ok() for result in schema.get_all_operations()]
        seen: Counter[tuple[str, str, int, str]] = Counter()
        problems: list[str] = []

        for operation in operations:
            for mode, count in EXAMPLES.items():

                @settings(
                    max_examples=count,
                    deadline=None,
                    database=None,
                    derandomize=True,
                    phases=[Phase.generate],
                    suppress_health_check=list(HealthCheck),
                )
                @given(case=operation.as_strategy(generation_mode=mode))
                def exercise(case: schemathesis.Case) -> None:
                    response = case.call(base_url=server.base_url, timeout=20)
                    code = ""
                    if response.status_code >= 400:
                        body = response.json()
                        if set(body) != {"code", "message", "detail"} or body["code"] not in set(ErrorCode):
                            problems.append(f"{case.method} {case.path}: bad error body {body}")
                        code = body.get("code", "")
                    if response.status_code >= 500 and (response.status_code, code) not in DOCUMENTED_5XX:
                        problems.append(
                            f"{case.method} {case.path}: {response.status_code} {response.text[:300]}"
                        )
                    seen[(case.method, case.path, response.status_code, code)] += 1

                try:
                    exercise()
                except Unsatisfiable:
                    # An operation without parameters has no invalid input to generate.
                    assert mode is schemathesis.GenerationMode.NEGATIVE

        assert not problems, "\n".join(problems[:10])
        assert sum(seen.values()) >= 500, seen
        assert len({(method, path) for method, path, _status, _code in seen}) == len(operations)
        # The server is still healthy after the storm.
        assert all(status < 500 for (_m, path, status, _c) in seen if path == "/health")
