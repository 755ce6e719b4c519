"""The gold-following scripted agent."""

from __future__ import annotations

import json

from envhub.envs.tau.data import GoldAction, TauTask, load_domain
from envhub.envs.tau.policy import CLOSING_MESSAGE, GoldPolicy, gold_script


def test_script_confirms_before_each_write_and_closes() -> None:
    task = load_domain("retail").task("test-0")
    assert task is not None
    script = gold_script(task)
    calls = [
        json.loads(a[len("<tool_call>") : -len("</tool_call>")])["name"] for a in script if a.startswith("<")
    ]
    assert calls == [a.name for a in task.actions]
    write_at = script.index(
        next(a for a in script if "exchange_delivered_order_items" in a and a.startswith("<"))
    )
    assert script[write_at - 1].endswith("(yes/no)?")
    assert script[-1].endswith(CLOSING_MESSAGE)


def test_script_says_required_outputs_and_transfers_last() -> None:
    task = TauTask(
        task_id="test-0",
        user_id="u",
        instruction="",
        actions=(
            GoldAction("transfer_to_human_agents", {"summary": "s"}),
            GoldAction("get_user_details", {"user_id": "u"}),
        ),
        outputs=("42", "blue"),
    )
    script = gold_script(task)
    assert "get_user_details" in script[0]
    assert "transfer_to_human_agents" in script[-1]
    assert all(o in script[-2] for o in task.outputs)


def test_policy_without_a_known_task_just_closes() -> None:
    policy = GoldPolicy(seed=0)
    policy.reset("hi", {"domain": "airline", "task_id": "test-999"})
    assert policy.act("hi", {}) == CLOSING_MESSAGE
