"""The catalogue of envhub environments: one :class:`EnvSpec` per registered id.

Adding an env means adding one entry here (strings and plain data only; nothing is imported
until the env is made); a new family is its folder under ``envhub/envs/`` plus its entry
(``docs/adding-an-env.md``). Keep entries sorted by family.

``advantage_defaults`` are the per-env values of verl-agent's run scripts
(``examples/gigpo_trainer/run_*.sh`` and ``recipe/hgpo/run_*.sh``) that differ from the
estimator class defaults:

=========  ==============  ==============  ======================================
env        GiGPO mode      HGPO mode / K   other
=========  ==============  ==============  ======================================
alfworld   mean_std_norm   mean_std_norm/2 invalid penalty 0.1
webshop    mean_norm       mean_norm/2     invalid penalty 0.1
search     mean_std_norm   mean_std_norm/4 similarity grouping 0.9, penalty 0.01
sokoban    mean_norm       (class default) max steps 15, 32 tasks x 8
=========  ==============  ==============  ======================================

HGPO was not run on search QA in the reference; its row uses search's memory window (4)
and GiGPO's search settings. GRPO keeps std normalisation everywhere
(``norm_adv_by_std_in_grpo`` defaults to true). Families without a reference run (tau,
timeseries) use the class defaults. GraphGPO's scripts (``recipe/GraphGPO/run_*.sh``) use
gamma 0.1 (its class default) for ALFWorld, 0.2 for WebShop and 0.8 for Sokoban.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from envhub.core.registry import EnvSpec

__all__ = ["CATALOG"]

# Shared by the two entries of one family (text and HTML WebShop), so they cannot drift.
_WEBSHOP_ADVANTAGES: Mapping[str, Mapping[str, Any]] = {
    "gigpo": {"mode": "mean_norm"},
    "hgpo": {"mode": "mean_norm", "history_length": 2},
    "graphgpo": {"gamma": 0.2},  # recipe/GraphGPO/run_qwen2.5_*_webshop_train.sh
}

CATALOG: tuple[EnvSpec, ...] = (
    EnvSpec(
        id="envhub/ALFWorld-v0",
        entry_point="envhub.envs.alfworld.env:ALFWorldEnv",
        family="alfworld",
        description="ALFWorld's 6 household task types on the real ALFWorld/TextWorld engine; reward 10*won.",
        splits=("train", "eval_in_distribution", "eval_out_of_distribution"),
        max_episode_steps=50,
        data_status="envhub.envs.alfworld.data:data_status",
        demo_policy="envhub.envs.alfworld.policy:WalkthroughPolicy",
        demo_episodes=12,  # ~0.4 s per cold reset on the real engine
        projection="alfworld",
        prompt="envhub.envs.alfworld.prompt",
        breakdown="envhub.envs.alfworld.data:breakdown",
        render_preset="envhub.render:RenderConfig.alfworld",
        advantage_defaults={
            "gigpo": {"mode": "mean_std_norm"},
            "hgpo": {"mode": "mean_std_norm", "history_length": 2},
        },
    ),
    EnvSpec(
        id="envhub/Math-v0",
        entry_point="envhub.envs.math.env:MathEnv",
        family="math",
        description="Arithmetic word problems (generated; GSM8K jsonl from a path): one solution, its "
        "last \\boxed{} answer scored against the gold.",
        splits=("train", "test"),
        max_episode_steps=1,  # the authors' math env is done after one step
        data_status="envhub.envs.math.data:data_status",
        demo_policy="envhub.envs.math.policy:TemplateSolverPolicy",
        projection="envhub.envs.math.projection:project_boxed",
        prompt="envhub.envs.math.prompt",
        breakdown="envhub.envs.math.env:breakdown",
    ),
    EnvSpec(
        # Not an env of its own: any env an `envhub serve` runs, reached over HTTP. The server
        # applies the served env's step limit, so no TimeLimit here.
        id="envhub/Remote-v0",
        entry_point="envhub.client:RemoteEnv",
        # make_vec("envhub/Remote-v0", num_envs=N, base_url=...) holds N sessions of one server
        # and steps them with one batch request, instead of N separate RemoteEnvs.
        vector_entry_point="envhub.client:RemoteVectorEnv",
        family="remote",
        description="Any envhub env served by `envhub serve`, over HTTP (pass base_url=...).",
        splits=(),
        data_status="envhub.client._remote_env:data_status",
    ),
    EnvSpec(
        id="envhub/SearchQA-v0",
        entry_point="envhub.envs.search.env:SearchQAEnv",
        family="search",
        description="Search-R1 QA: <search> a corpus (BM25/dense/remote top-3), then <answer>; EM reward.",
        splits=("train", "test"),
        max_episode_steps=4,  # verl-agent's max_turns for search
        data_status="envhub.envs.search.data:data_status",
        demo_policy="envhub.envs.search.policy:ScriptedSearchPolicy",
        baseline_policy="envhub.envs.search.policy:FirstTitlePolicy",
        projection="search",
        prompt="envhub.envs.search.prompt",
        breakdown="envhub.envs.search.env:breakdown",
        render_preset="envhub.render:RenderConfig.search",
        advantage_defaults={
            "grpo": {"invalid_penalty": 0.01},
            "gigpo": {
                "mode": "mean_std_norm",
                "enable_similarity": True,
                "similarity_thresh": 0.9,
                "invalid_penalty": 0.01,
            },
            "hgpo": {"mode": "mean_std_norm", "history_length": 4, "invalid_penalty": 0.01},
        },
    ),
    EnvSpec(
        id="envhub/Sokoban-v0",
        entry_point="envhub.envs.sokoban.env:SokobanEnv",
        family="sokoban",
        description="verl-agent's Sokoban: push boxes onto targets; reverse-play rooms (dim_room, num_boxes)",
        splits=("train", "test"),
        max_episode_steps=100,  # gym-sokoban's default; verl-agent's run script plays 15
        demo_policy="envhub.envs.sokoban.policy:SolverPolicy",
        projection="envhub.envs.sokoban.projection:project_sokoban",
        prompt="envhub.envs.sokoban.prompt",
        render_preset="envhub.render:RenderConfig.alfworld",
        # GraphGPO's Sokoban script (recipe/GraphGPO/run_qwen2.5_vl_3b_sokoban_train.sh): gamma 0.8.
        advantage_defaults={"gigpo": {"mode": "mean_norm"}, "graphgpo": {"gamma": 0.8}},
    ),
    EnvSpec(
        id="envhub/SokobanOnePush-v0",
        entry_point="envhub.envs.sokoban.env:SokobanEnv",
        family="sokoban",
        description="Sokoban's one-push rooms: a corridor, the box beside you, the target beyond; "
        "one move, which only the room decides (the CPU learning task)",
        splits=("train", "test"),
        max_episode_steps=1,
        kwargs={"dim_room": (3, 6), "rooms": "one-push"},
        demo_policy="envhub.envs.sokoban.policy:SolverPolicy",
        projection="envhub.envs.sokoban.projection:project_initial",
        prompt="envhub.envs.sokoban.prompt_onepush",
        advantage_defaults={"gigpo": {"mode": "mean_norm"}, "graphgpo": {"gamma": 0.8}},
    ),
    EnvSpec(
        id="envhub/TauAirline-v0",
        entry_point="envhub.envs.tau.env:TauAirlineEnv",
        family="tau",
        description="tau-bench airline customer service: 14 tools, airline policy, database-state reward.",
        splits=("test",),
        max_episode_steps=30,
        data_status="envhub.envs.tau.data:data_status",
        demo_policy="envhub.envs.tau.policy:GoldPolicy",
        projection="tool_call",
        prompt="envhub.envs.tau.prompt_airline",  # SYSTEM: the policy, the tools, the call syntax
    ),
    EnvSpec(
        id="envhub/TauRetail-v0",
        entry_point="envhub.envs.tau.env:TauRetailEnv",
        family="tau",
        description="tau-bench retail customer service: 16 tools, store policy, database-state reward.",
        splits=("test", "train"),
        max_episode_steps=30,
        data_status="envhub.envs.tau.data:data_status",
        demo_policy="envhub.envs.tau.policy:GoldPolicy",
        projection="tool_call",
        prompt="envhub.envs.tau.prompt_retail",  # SYSTEM: the policy, the tools, the call syntax
    ),
    EnvSpec(
        id="envhub/TimeSeries-v0",
        entry_point="envhub.envs.timeseries.env:TimeSeriesEnv",
        family="timeseries",
        description="Find and classify the anomaly in a univariate series with stats/zscore/fft/zoom tools.",
        splits=("train", "test"),
        max_episode_steps=8,
        data_status="envhub.envs.timeseries.data:data_status",
        demo_policy="envhub.envs.timeseries.policy:HeuristicPolicy",
        baseline_policy="envhub.envs.timeseries.policy:RandomToolPolicy",
        projection="think_action",
        prompt="envhub.envs.timeseries.prompt",
        breakdown="envhub.envs.timeseries.env:breakdown",
        expert_cot="envhub.envs.timeseries.env:task_expert_cot",
    ),
    EnvSpec(
        id="envhub/TimeSeriesUCR-v0",
        entry_point="envhub.envs.timeseries.ucr_env:TimeSeriesUCREnv",
        family="timeseries-ucr",
        description="Classify a real UCR series (TimeMaster-style) with the same tools; data from a path.",
        splits=("train", "test"),
        max_episode_steps=8,
        data_status="envhub.envs.timeseries.data:ucr_data_status",
        projection="think_action",
    ),
    EnvSpec(
        id="envhub/WebShop-v0",
        entry_point="envhub.envs.webshop.env:WebShopEnv",
        family="webshop",
        description="WebShop (text mode): search, choose a product and its options, buy; WebShop reward.",
        splits=("train", "test"),
        max_episode_steps=15,
        data_status="envhub.envs.webshop.data:data_status",
        demo_policy="envhub.envs.webshop.policy:ScriptedShopper",
        projection="webshop",
        prompt="envhub.envs.webshop.prompt",
        breakdown="envhub.envs.webshop.env:breakdown",
        advantage_defaults=_WEBSHOP_ADVANTAGES,
    ),
    EnvSpec(
        id="envhub/WebShopHTML-v0",
        entry_point="envhub.envs.webshop.html_env:WebShopHTMLEnv",
        family="webshop",
        description="WebShop as HTML pages in headless Chromium via selenium; same actions and reward.",
        splits=("train", "test"),
        max_episode_steps=15,
        data_status="envhub.envs.webshop.data:browser_data_status",
        demo_policy="envhub.envs.webshop.policy:ScriptedShopper",
        demo_episodes=4,  # ~0.2 s a step in a real browser
        projection="webshop",
        prompt="envhub.envs.webshop.prompt",
        breakdown="envhub.envs.webshop.env:breakdown",
        advantage_defaults=_WEBSHOP_ADVANTAGES,
    ),
)
