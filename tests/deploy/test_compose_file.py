"""docker-compose.yml read as a user's Compose would with an empty .env (no engine needed)."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parents[2]
DEFAULT = re.compile(r"\$\{(?P<name>\w+):-(?P<default>[^}]*)\}")


def _with_defaults(value: Any) -> Any:
    """``${VAR:-default}`` replaced by its default, as Compose does when VAR is unset."""
    if isinstance(value, str):
        return DEFAULT.sub(lambda m: m["default"], value)
    if isinstance(value, list):
        return [_with_defaults(v) for v in value]
    if isinstance(value, dict):
        return {k: _with_defaults(v) for k, v in value.items()}
    return value


def test_the_gpu_profile_runs_on_one_gpu_without_settings() -> None:
    services = _with_defaults(yaml.safe_load((ROOT / "docker-compose.yml").read_text(encoding="utf-8")))[
        "services"
    ]
    for name in ("vllm", "trainer"):
        (device,) = services[name]["deploy"]["resources"]["reservations"]["devices"]
        assert device["device_ids"] == ["0"], (
            f"{name} asks for GPU {device['device_ids']}: a one-GPU host has 0"
        )
    command = services["vllm"]["command"]
    share = float(command[command.index("--gpu-memory-utilization") + 1])
    assert share <= 0.5, f"vLLM takes {share:.0%} of the GPU it shares with the trainer"
    assert services["vllm"]["environment"]["VLLM_SERVER_DEV_MODE"] == "1"
