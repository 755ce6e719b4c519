"""Built-in policies for the tau-bench envs: a scripted agent that follows the gold actions.

:class:`GoldPolicy` is the demo policy: it looks up the task's gold actions (by the task id
and domain in the reset ``info``), asks the customer to confirm before each database write
(as the policy documents require), makes the calls, tells the customer the required
outputs, and closes the conversation. Against the rule-based user it earns reward 1 on the
tasks whose gold script fits in the step limit.
"""

from __future__ import annotations

import json
from collections import deque
from pathlib import Path
from typing import Any

from envhub.envs.tau.airline_tools import AIRLINE_TOOLS
from envhub.envs.tau.data import TauTask, load_domain
from envhub.envs.tau.retail_tools import RETAIL_TOOLS
from envhub.envs.tau.reward import TERMINATE_TOOLS

__all__ = ["CLOSING_MESSAGE", "GoldPolicy", "gold_script"]

#: What the scripted agent says when it has nothing left to do.
CLOSING_MESSAGE = "Is there anything else I can help you with?"

_WRITES = frozenset(t.name for t in (*RETAIL_TOOLS, *AIRLINE_TOOLS) if t.writes)


def _call(name: str, arguments: dict[str, Any]) -> str:
    return "<tool_call>" + json.dumps({"name": name, "arguments": arguments}) + "</tool_call>"


def gold_script(task: TauTask, *, confirm: bool = True) -> list[str]:
    """The actions of an agent that replays ``task``'s gold actions and then closes.

    Args:
        task: the task.
        confirm: ask the customer "(yes/no)" before every database write.

    Returns:
        Action strings in order; the last one ends the episode (a transfer, or a closing
        message the rule-based user answers with ``###STOP###``).
    """
    actions: list[str] = []
    transfer = None
    for gold in task.actions:
        if gold.name in TERMINATE_TOOLS:
            transfer = gold
            continue
        if gold.name == "respond":
            continue
        if confirm and gold.name in _WRITES:
            details = json.dumps(gold.kwargs)
            actions.append(f"I will now run {gold.name} with {details}. Do you want me to proceed (yes/no)?")
        actions.append(_call(gold.name, dict(gold.kwargs)))
    said = "; ".join(task.outputs)
    if transfer is not None:
        if said:
            actions.append(f"Here is what I found: {said}.")
        actions.append(_call(transfer.name, dict(transfer.kwargs)))
    else:
        actions.append(
            (f"Here is what I found: {said}. " if said else "Your request is complete. ") + CLOSING_MESSAGE
        )
    return actions


class GoldPolicy:
    """A scripted agent that follows the task's gold actions (the demo policy).

    Args:
        seed: unused (the script is deterministic); kept for the policy constructor contract.
        data_dir: tau-bench data root, if the env uses a non-default one.
    """

    def __init__(self, seed: int | None = None, *, data_dir: str | Path | None = None) -> None:
        self.seed = seed
        self.data_dir = data_dir
        self._queue: deque[str] = deque()

    def reset(self, observation: str, info: dict[str, Any]) -> None:
        domain = load_domain(str(info.get("domain", "retail")), self.data_dir)
        task = domain.task(str(info.get("task_id", "")))
        self._queue = deque(gold_script(task) if task is not None else [])

    def act(self, observation: str, info: dict[str, Any]) -> str:
        return self._queue.popleft() if self._queue else CLOSING_MESSAGE
