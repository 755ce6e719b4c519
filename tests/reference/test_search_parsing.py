"""envhub's Search-QA parsing against Search-R1's and verl-agent's own code (``search_parsing.json.gz``).

20,000 adversarial strings (tags in any case, unclosed, nested, repeated; CJK, İ, newlines)
were parsed by Search-R1's ``_postprocess_responses`` + ``postprocess_predictions`` and by
verl-agent's ``search_projection`` (README.md). envhub's env parser (both rule sets) and its
agent projection must give the same action on every string. The one documented difference:
envhub calls an empty search query invalid, where Search-R1 would search for ``""``.
"""

from __future__ import annotations

from typing import Any

from envhub.agent.projection import project_search_answer
from envhub.envs.search.parsing import parse_action

from .fixtures import load_json

CASES: list[dict[str, Any]] = load_json("search_parsing.json.gz")["cases"]


def _expected_env(action: str | None, content: str) -> tuple[str, str]:
    if action is None or (action == "search" and content == ""):
        return ("invalid", "")
    return (action, content)


def test_fixture_reaches_every_outcome() -> None:
    assert len(CASES) >= 20_000
    assert {c["r1_action"] for c in CASES} == {"search", "answer", None}
    assert {c["verl_valid"] for c in CASES} == {0, 1}


def test_env_parser_equals_search_r1() -> None:
    wrong = []
    for c in CASES:
        got = parse_action(c["text"])
        if (got.kind, got.content) != _expected_env(c["r1_action"], c["r1_content"]):
            wrong.append((c["text"], got, c["r1_action"], c["r1_content"]))
    assert wrong == []


def test_strict_env_parser_equals_verl_agent_projection() -> None:
    wrong = []
    for c in CASES:
        got = parse_action(c["text"], strict=True)
        action = c["verl_action"]
        if not c["verl_valid"]:
            expected = ("invalid", "")
        else:
            kind = action[1:7]
            expected = _expected_env(kind, action[len(kind) + 2 : -len(kind) - 3])
        if (got.kind, got.content) != expected:
            wrong.append((c["text"], got, action, c["verl_valid"]))
    assert wrong == []


def test_agent_projection_equals_verl_agent_projection() -> None:
    wrong = []
    for c in CASES:
        got = project_search_answer(c["text"])
        if (got.action, int(got.is_valid)) != (c["verl_action"], c["verl_valid"]):
            wrong.append((c["text"], got.action, got.is_valid, c["verl_action"], c["verl_valid"]))
    assert wrong == []
