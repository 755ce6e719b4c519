"""tau-bench's reward over every task: gold replay scores 1, a skipped write or a missing
output scores 0, and pass^k.

The gold database of each task is the one tau-trait 0.1.1's own tools produce: its digest is
read from ``tests/reference/tau.jsonl.gz`` (see tests/reference/README.md), never taken from
envhub's own replay, so a tool that writes the wrong value cannot score 1.
"""

from __future__ import annotations

import dataclasses
import gzip
import json
from pathlib import Path

import pytest

from envhub.envs.tau.airline_tools import AIRLINE_TOOLS
from envhub.envs.tau.data import Domain, TauTask, load_domain
from envhub.envs.tau.db import TauDB, canonical_hash
from envhub.envs.tau.retail_tools import RETAIL_TOOLS
from envhub.envs.tau.reward import (
    changed_records,
    compute_reward,
    gold_state,
    pass_hat_k,
    replay,
    state_digest,
)
from envhub.envs.tau.toolkit import ToolSpec

SPLITS = [("retail", "test"), ("retail", "train"), ("airline", "test")]
TOOLS = {"retail": RETAIL_TOOLS, "airline": AIRLINE_TOOLS}

#: Tasks whose last database-changing gold action changes nothing, so skipping it still
#: scores 1: that action fails with an ``Error:`` in the gold replay itself (unknown order or
#: reservation, insufficient gift-card balance, wrong payment method, a misnamed argument,
#: an unavailable item or flight date). The test checks that this is why.
SKIP_LAST_WRITE_EXCEPTIONS = {
    ("retail", "test"): {"test-12", "test-106", "test-115", "test-116", "test-118", "test-119"},
    ("retail", "train"): {
        "train-81", "train-161", "train-214", "train-229", "train-288",
        "train-314", "train-349", "train-351", "train-376",
    },
    ("airline", "test"): {"test-50", "test-52", "test-53", "test-54", "test-55", "test-57"},
}  # fmt: skip


#: tau-trait's reference data (tests/reference/README.md).
REFERENCE = Path(__file__).parents[2] / "reference" / "tau.jsonl.gz"
#: (domain, task id) -> digest of the database tau-trait's tools leave after the gold actions.
REFERENCE_DIGEST = {
    (line["domain"], line["task_id"]): line["digest"]
    for line in map(json.loads, gzip.decompress(REFERENCE.read_bytes()).decode().splitlines())
    if line["kind"] == "gold"
}


def _digest(domain: Domain, db: TauDB) -> str:
    return state_digest(changed_records(domain, db))


def _final_db(domain: Domain, tools: tuple[ToolSpec, ...], task: TauTask) -> TauDB:
    db = TauDB(domain.tables)
    replay(db, {t.name: t for t in tools}, task)
    return db


@pytest.mark.parametrize(("domain_name", "split"), SPLITS)
def test_replaying_gold_actions_then_stopping_scores_one_on_every_task(domain_name: str, split: str) -> None:
    domain, tools = load_domain(domain_name), TOOLS[domain_name]
    failed = []
    for task in domain.tasks[split]:
        reference = REFERENCE_DIGEST[(domain_name, task.task_id)]
        db = _final_db(domain, tools, task)
        result = compute_reward(domain, tools, task, db, list(task.outputs))
        # The final database and the gold state the reward compares against are tau-trait's.
        if result.reward != 1.0 or _digest(domain, db) != reference or result.gold_digest != reference:
            failed.append(task.task_id)
    assert len(domain.tasks[split]) > 0
    assert failed == []


@pytest.mark.parametrize(("domain_name", "split"), SPLITS)
def test_skipping_the_last_database_write_scores_zero(domain_name: str, split: str) -> None:
    domain, tools = load_domain(domain_name), TOOLS[domain_name]
    writes = {t.name for t in tools if t.writes}
    still_one = set()
    for task in domain.tasks[split]:
        positions = [i for i, a in enumerate(task.actions) if a.name in writes]
        if not positions:
            continue
        shorter = dataclasses.replace(
            task, actions=tuple(a for i, a in enumerate(task.actions) if i != positions[-1])
        )
        shorter_db = _final_db(domain, tools, shorter)
        result = compute_reward(domain, tools, task, shorter_db, list(task.outputs))
        assert result.gold_digest == REFERENCE_DIGEST[(domain_name, task.task_id)]
        # Scoring 0 must mean "differs from tau-trait's gold database", and 1 "equals it".
        assert result.db_match == (_digest(domain, shorter_db) == result.gold_digest), task.task_id
        if result.reward != 0.0:
            still_one.add(task.task_id)
            outputs = replay(TauDB(domain.tables), {t.name: t for t in tools}, task)
            kept = [a for a in task.actions if a.name != "transfer_to_human_agents"]
            last = max(i for i, a in enumerate(kept) if a.name in writes)
            assert outputs[last].startswith("Error:"), task.task_id
        else:
            assert not result.db_match and result.mismatched_records
    assert still_one == SKIP_LAST_WRITE_EXCEPTIONS[(domain_name, split)]


def test_a_missing_required_output_scores_zero() -> None:
    domain = load_domain("retail")
    task = next(t for t in domain.tasks["test"] if t.outputs)
    db = _final_db(domain, RETAIL_TOOLS, task)
    result = compute_reward(domain, RETAIL_TOOLS, task, db, ["I could not find anything."])
    assert result.reward == 0.0
    assert result.db_match
    assert result.missing_outputs == list(task.outputs)


def test_outputs_match_lowercased_with_commas_removed() -> None:
    domain = load_domain("retail")
    task = next(t for t in domain.tasks["test"] if t.outputs)
    message = "Here you go: " + " and ".join(o.upper() for o in task.outputs)
    message = message.replace("0", ",0")  # commas inside numbers are ignored, as in tau-bench
    result = compute_reward(domain, RETAIL_TOOLS, task, _final_db(domain, RETAIL_TOOLS, task), [message])
    assert result.reward == 1.0


def test_tasks_without_gold_actions_score_one_for_doing_nothing() -> None:
    for domain_name, split in SPLITS:
        domain, tools = load_domain(domain_name), TOOLS[domain_name]
        for task in domain.tasks[split]:
            if task.actions or task.outputs:
                continue
            assert compute_reward(domain, tools, task, TauDB(domain.tables), []).reward == 1.0


def test_doing_nothing_scores_zero_when_gold_changes_the_database() -> None:
    domain = load_domain("airline")
    task = domain.tasks["test"][0]
    result = compute_reward(domain, AIRLINE_TOOLS, task, TauDB(domain.tables), [])
    assert result.reward == 0.0
    assert "reservations/HATHAT" in result.mismatched_records


def test_digest_equality_matches_tau_bench_full_database_hash() -> None:
    domain = load_domain("retail")
    task = domain.tasks["test"][0]
    ours = _final_db(domain, RETAIL_TOOLS, task)
    gold = _final_db(domain, RETAIL_TOOLS, task)
    assert ours.full_hash() == gold.full_hash()
    assert ours.full_hash() != canonical_hash(dict(domain.tables))
    assert (
        gold_state(domain, RETAIL_TOOLS, task).digest
        == compute_reward(domain, RETAIL_TOOLS, task, ours, []).gold_digest
        == REFERENCE_DIGEST[("retail", task.task_id)]
    )


def test_every_tasks_gold_state_is_tau_traits() -> None:
    for domain_name, split in SPLITS:
        domain, tools = load_domain(domain_name), TOOLS[domain_name]
        for task in domain.tasks[split]:
            assert gold_state(domain, tools, task).digest == REFERENCE_DIGEST[(domain_name, task.task_id)]


def test_pass_hat_k_is_the_mean_of_binomial_ratios() -> None:
    results: dict[str, list[bool | float]] = {"a": [1, 1, 0, 1], "b": [0, 0, 0, 0], "c": [True] * 4}
    assert pass_hat_k(results, 1) == pytest.approx((3 / 4 + 0 + 1) / 3)
    assert pass_hat_k(results, 2) == pytest.approx((3 / 6 + 0 + 1) / 3)
    assert pass_hat_k(results, 4) == pytest.approx(1 / 3)


def test_pass_hat_k_rejects_k_above_the_number_of_trials() -> None:
    with pytest.raises(ValueError, match="1 <= k <= n"):
        pass_hat_k([[1, 0]], 3)
