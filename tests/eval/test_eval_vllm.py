"""``envhub eval`` against the tiny model served by a real vLLM (CPU) server."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from envhub.eval.run import read_episodes
from envhub.policy.vllm_server import VllmServer

pytestmark = [pytest.mark.vllm, pytest.mark.integration, pytest.mark.slow, pytest.mark.timeout(900)]

REPO = Path(__file__).resolve().parents[2]


def test_eval_against_vllm_records_tokens_and_reports(
    vllm_server: VllmServer, tiny_model_dir: Path, tmp_path: Path
) -> None:
    out = tmp_path / "vllm-eval"
    args = [
        "eval", "--env", "TimeSeries-v0", "--split", "test", "--limit", "2",
        "--n", "2", "--k", "1", "--k", "2",
        "--policy-url", vllm_server.base_url, "--model", vllm_server.model,
        "--tokenizer", str(tiny_model_dir),
        "--temperature", "0.7", "--max-tokens", "12", "--max-steps", "2", "-o", str(out),
    ]  # fmt: skip
    result = subprocess.run(
        [sys.executable, "-c", "from envhub.cli import main; main()", *args],
        capture_output=True,
        text=True,
        timeout=600,
        env={"PYTHONPATH": str(REPO), "PATH": "/usr/bin:/bin"},
    )
    assert result.returncode == 0, result.stderr[-2000:]
    report = json.loads((out / "report.json").read_text())
    assert report["episodes"] == 4 and set(report["pass_at_k"]) == {"1", "2"}
    assert report["policy"] == f"{vllm_server.model}@{vllm_server.base_url}"
    assert report["per_episode"]["response_tokens"]["mean"] > 0
    assert report["per_episode"]["prompt_tokens"]["mean"] > 0
    rows = read_episodes(out)
    step = rows[0]["trajectory"]["steps"][0]
    assert step["token_exact"] and len(step["response_token_ids"]) == len(step["response_logprobs"]) <= 12
    assert rows[0]["response_tokens"] == sum(
        len(s["response_token_ids"]) for s in rows[0]["trajectory"]["steps"]
    )
