"""verl 0.9.1: envhub episodes through verl's own agent-loop worker.

verl pins transformers<5.11, so it lives in its own virtualenv (``make verl-venv``, i.e.
``scripts/install-verl.sh``); ``verl_driver.py`` runs there and these tests check what it
wrote. verl's trainer config, ``AgentLoopWorker`` (registry lookup by ``agent_name``, Hydra
instantiation from the agent-loop config file, padding, ``DataProto``), Continuous Token
builder and ``AgentLoopOutput`` all run; the server manager is envhub's
:class:`~envhub.integrations.verl.PolicyServerClient` over the tiny model, since verl's own
starts vLLM replicas on GPUs. The episodes are played on an ``envhub serve`` server on loopback.
"""

from __future__ import annotations

import itertools
import json
import os
import re
import subprocess
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import envhub
from envhub.integrations._episode import TextEpisode
from envhub.policy.tokenizer import ChatTokenizer
from envhub.server import ServerSettings
from envhub.server.testing import RunningServer, serve_in_thread

REPO_ROOT = Path(__file__).resolve().parents[2]
DRIVER = Path(__file__).with_name("verl_driver.py")
EASY = {"dim_room": [3, 5], "num_boxes": 1}
INITIAL = "envhub.envs.sokoban.projection:project_initial"


def verl_python() -> Path:
    """The verl virtualenv's interpreter (``$ENVHUB_VERL_VENV`` or ``<repo>/.venv-verl``)."""
    venv = Path(os.environ.get("ENVHUB_VERL_VENV") or REPO_ROOT / ".venv-verl")
    return venv / "bin" / "python"


@pytest.fixture(scope="module")
def python() -> Path:
    path = verl_python()
    if not path.is_file():
        message = f"no verl virtualenv at {path.parent.parent}; run `make verl-venv` (envhub-rl[verl])"
        if os.environ.get("CI", "").lower() == "true":
            pytest.fail(f"CI must run the verl tests: {message}")
        pytest.skip(message)
    return path


@pytest.fixture(scope="module")
def server() -> Iterator[RunningServer]:
    with serve_in_thread(ServerSettings(env_id="envhub/Sokoban-v0", workers=1)) as running:
        yield running


def _run_verl(python: Path, args: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    """Run ``python args`` in the verl virtualenv, importing envhub from this checkout.

    The virtualenv is cached outside the clone and shared by every clone with the same pins; its
    editable envhub belongs to whichever clone installed it last, so this clone goes first on
    PYTHONPATH (a path entry wins over the editable install's finder)."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO_ROOT), env.get("PYTHONPATH")]))
    return subprocess.run([str(python), *args], capture_output=True, text=True, timeout=600, cwd=cwd, env=env)


def test_verl_venv_imports_this_checkout(python: Path, tmp_path: Path) -> None:
    """The verl virtualenv is shared by every clone (scripts/venv-cache.sh) and its editable envhub
    points at whichever clone last ran ``make verl-venv``: the tests must import this one."""
    done = _run_verl(python, ["-c", "import envhub; print(envhub.__file__)"], tmp_path)
    assert done.returncode == 0, done.stderr[-2000:]
    assert Path(done.stdout.strip()).resolve().is_relative_to(REPO_ROOT), done.stdout


def _drive(python: Path, model_dir: Path, tmp_path: Path, **options: Any) -> dict[str, Any]:
    out = tmp_path / "verl.json"
    done = _run_verl(python, [str(DRIVER), str(model_dir), str(out), json.dumps(options)], tmp_path)
    assert done.returncode == 0, done.stderr[-4000:]
    result: dict[str, Any] = json.loads(out.read_text())
    assert result["verl_version"] == "0.9.1"
    return result


def _options(server: RunningServer, **extra: Any) -> dict[str, Any]:
    loop = {
        "env_id": "envhub/Sokoban-v0",
        "base_url": server.base_url,
        "max_turns": 3,
        "env_kwargs": EASY,
        "projection": INITIAL,
    }
    return {"loop": loop, "count": 6, "seed": 3, "max_tokens": 4, **extra}


def _sessions_created(server: RunningServer) -> float:
    with urllib.request.urlopen(server.base_url + "/metrics") as reply:
        text = reply.read().decode()
    return sum(
        float(line.split()[-1])
        for line in text.splitlines()
        if line.startswith("envhub_sessions_created_total")
    )


def _native(seed: int, actions: list[str]) -> dict[str, Any]:
    """The same episode in process: rewards, anchors and won after ``actions``."""
    env = envhub.make("envhub/Sokoban-v0", **EASY)
    try:
        _, info = env.reset(seed=seed)
        anchors, rewards, observations, won = [info["anchor"]], [], [], False
        for action in actions:
            observation, reward, terminated, truncated, info = env.step(action)
            observations.append(observation)
            rewards.append(float(reward))
            anchors.append(info["anchor"])
            won = bool(info["won"])
            if terminated or truncated:
                break
        return {
            "anchors": anchors,
            "rewards": rewards,
            "observations": observations,
            "won": won,
            "task_id": info["task_id"],
        }
    finally:
        env.close()


def _unpad(sample: dict[str, Any]) -> tuple[list[int], list[int], list[int], list[float]]:
    """Prompt and response without verl's padding (prompt left-padded, response right-padded)."""
    attention = sample["attention_mask"]
    width = len(sample["prompts"])
    prompt = [t for t, a in zip(sample["prompts"], attention[:width], strict=True) if a]
    size = sum(attention[width:])
    return (
        prompt,
        sample["responses"][:size],
        sample["response_mask"][:size],
        sample["rollout_log_probs"][:size],
    )


def test_scripted_moves_through_verl_match_the_native_env(
    python: Path, small_model_dir: Path, server: RunningServer, tmp_path: Path
) -> None:
    before = _sessions_created(server)
    result = _drive(python, small_model_dir, tmp_path, **_options(server, script=["right", "left", "left"]))
    assert _sessions_created(server) - before == 6  # every episode was played on the server
    assert {"prompts", "responses", "response_mask", "rm_scores", "rollout_log_probs"} <= set(
        result["batch_keys"]
    )
    won = 0
    for i, sample in enumerate(result["samples"]):
        extra = sample["extra"]
        native = _native(3 + i, extra["actions"])
        assert extra["actions"] == ["right", "left", "left"][: len(extra["actions"])]
        assert extra["step_rewards"] == pytest.approx(native["rewards"])
        assert extra["anchors"] == native["anchors"]
        assert extra["env_won"] == native["won"] and extra["task_id"] == native["task_id"]
        assert extra["env_return"] == pytest.approx(sum(native["rewards"]))
        won += native["won"]
        # the return sits on the last response token, as verl's rm_scores
        _, response, _, _ = _unpad(sample)
        scores = sample["rm_scores"]
        assert scores[len(response) - 1] == pytest.approx(extra["env_return"], abs=1e-6)
        assert sum(abs(s) for s in scores) == pytest.approx(abs(extra["env_return"]), abs=1e-6)
        # the first prompt, one model turn per step and one env reply between steps
        assert extra["__num_turns__"] == 2 * len(extra["actions"])
    assert won == 6  # "right", else "left": every easy room is solved within two moves


def test_sampled_tokens_have_mask_1_and_env_tokens_mask_0(
    python: Path, small_model_dir: Path, server: RunningServer, tmp_path: Path
) -> None:
    result = _drive(python, small_model_dir, tmp_path, **_options(server))
    chat = ChatTokenizer(small_model_dir)
    # An episode's calls are found by its whole sequence: the last call's prompt and sample.
    by_sequence = {tuple(c[-1]["prompt_ids"] + c[-1]["token_ids"]): c for c in result["calls"]}
    for i, sample in enumerate(result["samples"]):
        prompt, response, mask, logprobs = _unpad(sample)
        calls = by_sequence[tuple(prompt + response)]
        assert calls[0]["prompt_ids"] == prompt
        # The prompt is the env's first prompt under the model's chat template.
        episode = TextEpisode("envhub/Sokoban-v0", env_kwargs=EASY, projection=INITIAL)
        try:
            first, _ = episode.start(seed=3 + i)
        finally:
            episode.close()
        assert prompt == chat.render(first)
        # Mask 1 exactly on the sampled ids, in order, with their sampling logprobs.
        sampled = [t for t, m in zip(response, mask, strict=True) if m]
        assert sampled == [t for call in calls for t in call["token_ids"]]
        sampled_logprobs = [lp for lp, m in zip(logprobs, mask, strict=True) if m]
        assert sampled_logprobs == pytest.approx([lp for call in calls for lp in call["log_probs"]], abs=1e-6)
        assert all(lp == 0.0 for lp, m in zip(logprobs, mask, strict=True) if not m)
        # Each later call was sent the whole sequence so far: its previous prompt, the sampled
        # ids verbatim, then the env's reply.
        for before, call in itertools.pairwise(calls):
            so_far = before["prompt_ids"] + before["token_ids"]
            assert call["prompt_ids"][: len(so_far)] == so_far and len(call["prompt_ids"]) > len(so_far)
        # Between turns sit the env's replies, mask 0, holding the observations in order.
        env_text = chat.hf.decode([t for t, m in zip(response, mask, strict=True) if not m])
        steps = sample["extra"]["env_steps"]
        assert steps == len(calls) and sample["extra"]["__num_turns__"] == 2 * steps
        native = _native(3 + i, sample["extra"]["actions"])
        assert sample["extra"]["step_rewards"] == pytest.approx(native["rewards"])
        position = 0
        for observation in native["observations"][: steps - 1]:
            position = env_text.index(observation, position) + len(observation)


def test_docs_example_runs_through_verls_dataset_and_worker(
    python: Path, small_model_dir: Path, server: RunningServer, tmp_path: Path
) -> None:
    text = (REPO_ROOT / "docs" / "integrations" / "verl.md").read_text()
    (block,) = re.findall(r"```python\n(.*?)```", text, re.DOTALL)
    assert '"http://127.0.0.1:8000"' in block and '"runs/models/tiny64"' in block
    code = block.replace('"http://127.0.0.1:8000"', repr(server.base_url)).replace(
        '"runs/models/tiny64"', repr(str(small_model_dir))
    )
    code += (
        "\nimport json\nextra = output.non_tensor_batch\n"
        "print('RESULT', json.dumps({'returns': returns, 'steps': extra['step_rewards'].tolist(),\n"
        "    'prompts': [tokenizer.decode(p) for p in output.batch['prompts']]}))\n"
    )
    script = tmp_path / "example.py"
    script.write_text(code)
    done = _run_verl(python, [str(script)], tmp_path)
    assert done.returncode == 0, done.stderr[-4000:]
    line = next(x for x in done.stdout.splitlines() if x.startswith("RESULT "))
    result = json.loads(line.removeprefix("RESULT "))
    assert len(result["returns"]) == 4
    for returned, steps, prompt in zip(result["returns"], result["steps"], result["prompts"], strict=True):
        assert returned == pytest.approx(sum(steps)) and 1 <= len(steps) <= 3
        # the row's system message reached the model; its placeholder user message did not
        assert "You push boxes onto targets." in prompt and "envhub episode" not in prompt
