"""envhub's tau-bench tools against tau-trait 0.1.1's own tools (``tau.jsonl.gz``, see README.md).

Every gold task of retail test, retail train and airline test is replayed with envhub's tools;
each tool output and the final database digest must equal what tau-trait's tools produced.
The probe calls (error cases included) are checked the same way, one call on a fresh database.
"""

from __future__ import annotations

import copy
import hashlib
from collections import defaultdict
from typing import Any

import pytest

from envhub.envs.tau.airline_tools import AIRLINE_TOOLS
from envhub.envs.tau.data import load_domain
from envhub.envs.tau.db import TauDB
from envhub.envs.tau.retail_tools import RETAIL_TOOLS
from envhub.envs.tau.reward import changed_records, state_digest
from envhub.envs.tau.toolkit import invoke_tool

from .fixtures import load_jsonl

TOOLS = {"retail": {t.name: t for t in RETAIL_TOOLS}, "airline": {t.name: t for t in AIRLINE_TOOLS}}
LINES = load_jsonl("tau.jsonl.gz")
BY_KIND: dict[str, list[dict[str, Any]]] = defaultdict(list)
for _line in LINES:
    BY_KIND[_line["kind"]].append(_line)


def _sha(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _digest(domain_name: str, db: TauDB) -> str:
    return state_digest(changed_records(load_domain(domain_name), db))


def test_fixture_covers_every_gold_task_and_probes() -> None:
    for name in ("retail", "airline"):
        domain = load_domain(name)
        gold = {g["task_id"] for g in BY_KIND["gold"] if g["domain"] == name}
        assert gold == {t.task_id for tasks in domain.tasks.values() for t in tasks}
    assert len(BY_KIND["probe"]) >= 1000


@pytest.mark.parametrize("domain_name", ["retail", "airline"])
def test_base_database_equals_tau_traits(domain_name: str) -> None:
    (base,) = [b for b in BY_KIND["base"] if b["domain"] == domain_name]
    assert TauDB(load_domain(domain_name).tables).full_hash() == base["tau_hash"]


@pytest.mark.parametrize("domain_name", ["retail", "airline"])
def test_gold_replay_outputs_and_database_equal_tau_traits(domain_name: str) -> None:
    domain, tools = load_domain(domain_name), TOOLS[domain_name]
    wrong = []
    for ref in (g for g in BY_KIND["gold"] if g["domain"] == domain_name):
        task = domain.task(ref["task_id"])
        assert task is not None, ref["task_id"]
        db = TauDB(domain.tables)
        calls = [a for a in task.actions if a.name != "respond"]
        assert [a.name for a in calls] == [o["name"] for o in ref["outputs"]], ref["task_id"]
        for i, (action, expected) in enumerate(zip(calls, ref["outputs"], strict=True)):
            out = invoke_tool(tools, db, action.name, copy.deepcopy(action.kwargs)).output
            if _sha(out) != expected["sha256"]:
                wrong.append((ref["task_id"], i, action.name, out[:80], expected["head"]))
        changed = {f"{t}/{k}": h for (t, k), h in changed_records(domain, db).items()}
        if changed != ref["changed"] or _digest(domain_name, db) != ref["digest"]:
            wrong.append(
                (ref["task_id"], "database", sorted(set(changed.items()) ^ set(ref["changed"].items())))
            )
    assert wrong == []


@pytest.mark.parametrize("domain_name", ["retail", "airline"])
def test_probe_calls_equal_tau_traits(domain_name: str) -> None:
    domain, tools = load_domain(domain_name), TOOLS[domain_name]
    wrong = []
    for ref in (p for p in BY_KIND["probe"] if p["domain"] == domain_name):
        db = TauDB(domain.tables)
        out = invoke_tool(tools, db, ref["name"], copy.deepcopy(ref["kwargs"])).output
        if _sha(out) != ref["sha256"] or _digest(domain_name, db) != ref["digest"]:
            wrong.append((ref["name"], ref["kwargs"], out[:80], ref["head"]))
    assert wrong == []
