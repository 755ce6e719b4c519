"""tau-bench retail through the real env server: a group of 4 sessions on one task."""

from __future__ import annotations

import httpx
import pytest

from envhub.core.wire import BatchStepResponse, GroupCreated
from envhub.envs.tau.data import load_domain
from envhub.envs.tau.policy import gold_script
from envhub.server import ServerSettings
from envhub.server.testing import serve_in_thread

pytestmark = pytest.mark.integration

TASK_ID = "test-5"


def test_group_of_four_on_one_retail_task_over_http() -> None:
    script = gold_script(load_domain("retail").task(TASK_ID))  # type: ignore[arg-type]
    settings = ServerSettings(env_id="envhub/TauRetail-v0", workers=2)
    with serve_in_thread(settings) as server, httpx.Client(base_url=server.base_url, timeout=60) as client:
        response = client.post("/v1/groups", json={"group_size": 4, "task_id": TASK_ID, "seed": 7})
        assert response.status_code == 201
        group = GroupCreated.model_validate(response.json())
        ids = [m.session_id for m in group.sessions]
        assert len(set(ids)) == 4
        assert len({m.observation for m in group.sessions}) == 1
        assert group.sessions[0].info["task_id"] == TASK_ID
        assert len(group.sessions[0].info["tools"]) == 16

        # Members 0 and 1 follow the gold script; 2 stops at once; 3 sends a malformed call first.
        plans = [
            list(script),
            list(script),
            ["Goodbye. Is there anything else?"],
            ["<tool_call>{oops", *script],
        ]
        final: dict[str, tuple[float, bool]] = {}
        for turn in range(max(len(p) for p in plans)):
            items = [
                {"session_id": sid, "action": plan[turn]}
                for sid, plan in zip(ids, plans, strict=True)
                if turn < len(plan) and sid not in final
            ]
            if not items:
                break
            body = BatchStepResponse.model_validate(client.post("/v1/batch/step", json=items).json())
            for item, slot in zip(items, body.results, strict=True):
                assert slot.ok and slot.result is not None, slot.error
                if turn == 0 and item["session_id"] == ids[3]:
                    assert slot.result.info["is_action_valid"] is False
                if slot.result.terminated:
                    final[item["session_id"]] = (slot.result.reward, slot.result.info["won"])
        assert final[ids[0]] == (1.0, True)
        assert final[ids[1]] == (1.0, True)
        assert final[ids[2]] == (0.0, False)
        assert final[ids[3]] == (1.0, True)
