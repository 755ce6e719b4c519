"""The viewer over HTTP on loopback: token auth, typed errors, the CLI, credit = the trainer's."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Callable
from contextlib import AbstractContextManager
from pathlib import Path

import httpx
import numpy as np
import pytest
from fastapi import FastAPI
from pydantic import SecretStr

from envhub.algos import compute_advantages, default_config
from envhub.core.records import StepBatch
from envhub.envs import resolve
from envhub.view import ViewSettings, create_app, group_credit, is_loopback, open_source
from tests.view.recorded import ENV, SOKOBAN, record_run

Served = Callable[[FastAPI], AbstractContextManager[str]]


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("view") / "run"
    record_run(path, algo="gigpo", iterations=1)
    return path


def test_without_its_token_every_page_but_health_is_401(served: Served, run_dir: Path) -> None:
    app = create_app(open_source(str(run_dir)), ViewSettings(token=SecretStr("s3cret")))
    with served(app) as base:
        denied = httpx.get(base + "/")
        assert denied.status_code == 401
        assert denied.json()["code"] == "UNAUTHORIZED"
        assert "?token=" in denied.json()["message"]
        assert httpx.get(base + "/health").status_code == 200
        assert httpx.get(base + "/", headers={"Authorization": "Bearer wrong"}).status_code == 401
        assert httpx.get(base + "/", headers={"Authorization": "Bearer s3cret"}).status_code == 200
        with httpx.Client(base_url=base) as browser_like:
            assert browser_like.get("/", params={"token": "s3cret"}).status_code == 200
            assert browser_like.get("/").status_code == 200  # the cookie the token URL set


def test_a_token_is_made_up_when_bound_beyond_loopback() -> None:
    assert ViewSettings().secured().token is None
    assert is_loopback("127.0.0.1") and is_loopback("::1") and is_loopback("localhost")
    made = ViewSettings(host="0.0.0.0").secured().token
    assert made is not None and len(made.get_secret_value()) >= 24
    given = ViewSettings(host="0.0.0.0", token=SecretStr("mine")).secured().token
    assert given is not None and given.get_secret_value() == "mine"


@pytest.mark.parametrize("empty", ["", "   "])
def test_an_empty_token_does_not_open_the_viewer_beyond_loopback(
    served: Served, run_dir: Path, monkeypatch: pytest.MonkeyPatch, empty: str
) -> None:
    # `ENVHUB_VIEW_TOKEN=` (an unset compose variable) or `--token ""`: a token is still required.
    monkeypatch.setenv("ENVHUB_VIEW_TOKEN", empty)
    for settings in (ViewSettings(host="0.0.0.0"), ViewSettings(host="0.0.0.0", token=SecretStr(empty))):
        secured = settings.secured()
        assert secured.token is not None and len(secured.token.get_secret_value()) >= 24
        with served(create_app(open_source(str(run_dir)), secured)) as base:
            assert httpx.get(base + "/").status_code == 401
            assert httpx.get(base + "/", params={"token": empty}).status_code == 401


def test_without_a_token_only_loopback_host_names_are_answered(served: Served, run_dir: Path) -> None:
    # DNS rebinding: a web page whose name now resolves to 127.0.0.1 must not read the run.
    with served(create_app(open_source(str(run_dir)))) as base:
        port = base.rsplit(":", 1)[1]
        for host in (
            f"127.0.0.1:{port}",
            f"localhost:{port}",
            f"[::1]:{port}",
            f"127.0.0.2:{port}",
            "localhost",
        ):
            assert httpx.get(base + "/", headers={"Host": host}).status_code == 200, host
        rebound = httpx.get(base + "/", headers={"Host": f"attacker.example:{port}"})
        assert (rebound.status_code, rebound.json()["code"]) == (403, "HOST_NOT_ALLOWED")
        assert "--token" in rebound.json()["message"]
    # With a token the token is the guard (a viewer bound beyond loopback is reached by any name).
    app = create_app(open_source(str(run_dir)), ViewSettings(token=SecretStr("s3cret")))
    with served(app) as base:
        named = httpx.get(base + "/", headers={"Host": "viewer.lab:80", "Authorization": "Bearer s3cret"})
        assert named.status_code == 200


def test_bad_requests_get_typed_errors(served: Served, run_dir: Path) -> None:
    with served(create_app(open_source(str(run_dir)))) as base:
        missing = httpx.get(base + "/group", params={"batch": "iter_000009", "uid": "x"})
        assert (missing.status_code, missing.json()["code"]) == (404, "NOT_FOUND")
        bad = httpx.get(
            base + "/step", params={"batch": "iter_000001", "uid": "x", "traj": "t", "step": "two"}
        )
        assert (bad.status_code, bad.json()["code"]) == (400, "INVALID_CONFIG")
        assert httpx.get(base + "/", params={"success": "maybe"}).status_code == 400
        assert httpx.get(base + "/static/../_app.py").status_code == 404


@pytest.mark.parametrize(
    "args",
    [["/no/such/run"], ["redis://127.0.0.1:1/0"]],
    ids=["missing-run", "redis-down"],
)
def test_the_cli_refuses_a_bad_path_in_one_line(args: list[str]) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "envhub.cli", "view", *args],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 2
    assert "Traceback" not in done.stderr
    assert done.stderr.startswith("error (") and len(done.stderr.strip().splitlines()) == 1


@pytest.mark.parametrize(
    ("algo", "env_id"), [("grpo", ENV), ("gigpo", ENV), ("hgpo", SOKOBAN), ("graphgpo", SOKOBAN)]
)
def test_credit_per_group_is_the_trainers_credit_on_the_whole_batch(
    algo: str, env_id: str, tmp_path: Path
) -> None:
    """The viewer computes one group at a time; the trainer, one iteration's batch at once."""
    groups = record_run(tmp_path / "run", algo=algo, env_id=env_id, iterations=1)[1]
    config = default_config(algo, resolve(env_id))
    whole = compute_advantages(StepBatch.from_groups(groups), algo, config=config)
    shown = [group_credit(g, algo, config) for g in groups]
    per_group = [
        c.steps[(t.traj_id, s.step_idx)].advantage
        for g, c in zip(groups, shown, strict=True)
        for t in g.trajectories
        for s in t.steps
    ]
    assert np.array_equal(np.asarray(per_group), whole)  # bit for bit
    assert np.any(whole != 0.0)


def test_a_trained_runs_step_shows_its_tokens_shaded_by_logprob(
    small_model_dir: Path, served: Served, tmp_path: Path
) -> None:
    """A real envhub-train run on the small model: its recorded rows open in the viewer."""
    import re
    from html import unescape

    from envhub.train.config import load_config
    from envhub.train.tracking import read_groups
    from envhub.train.trainer import train

    run = tmp_path / "run"
    config = load_config(
        None,
        {
            "env": "envhub/SearchQA-v0",
            "algo": "gigpo",
            "model.path": str(small_model_dir),
            "iterations": 1,
            "output.run_dir": str(run),
            "output.tensorboard": False,
            "rollout.group_size": 2,
            "rollout.batch_tasks": 2,
            "rollout.max_steps": 2,
            "rollout.max_tokens": 8,
        },
    )
    train(config)
    groups = read_groups(run / "rollouts" / "iter_000001.jsonl")
    step = groups[0].trajectories[0].steps[0]
    assert step.response_logprobs
    advantages = compute_advantages(
        StepBatch.from_groups(groups), "gigpo", config=default_config("gigpo", resolve("envhub/SearchQA-v0"))
    )
    with served(create_app(open_source(str(run)))) as base:
        page = httpx.get(
            base + "/step",
            params={
                "batch": "iter_000001",
                "uid": groups[0].uid,
                "traj": step.traj_id,
                "step": step.step_idx,
            },
        )
        assert page.status_code == 200
        logprobs = [float(v) for v in re.findall(r'class="tok"[^>]*data-logprob="([^"]+)"', page.text)]
        assert logprobs == step.response_logprobs
        pieces = re.findall(r'<span class="tok"[^>]*>(.*?)</span>', page.text, flags=re.S)
        # The run's tokenizer decoded each token, special ones included: a random model samples
        # <|im_start|> now and then, and the viewer shows what was trained (response_text drops it).
        from envhub.policy.tokenizer import ChatTokenizer

        assert step.response_token_ids is not None
        trained = ChatTokenizer(small_model_dir).decode(step.response_token_ids, skip_special_tokens=False)
        assert unescape("".join(pieces)) == trained
        shown = re.search(r'id="advantage"[^>]*data-value="([^"]+)"', page.text)
        assert shown is not None and float(shown.group(1)) == advantages[0]


def test_the_overview_shows_the_latest_batches_unless_asked_for_all(served: Served, tmp_path: Path) -> None:
    import re

    from envhub.view._pages import RECENT

    record_run(tmp_path / "run", algo="grpo", iterations=RECENT + 2, tasks=1)
    with served(create_app(open_source(str(tmp_path / "run")))) as base:

        def shown(**params: str) -> set[int]:
            page = httpx.get(base + "/", params=params)
            assert page.status_code == 200
            return {int(k) for k in re.findall(r'class="group-row"[^>]*><td>iteration (\d+)</td>', page.text)}

        assert shown() == set(range(3, RECENT + 3))
        assert shown(batch="all") == set(range(1, RECENT + 3))
        assert shown(batch="iter_000001") == {1}
        assert httpx.get(base + "/", params={"batch": "iter_000099"}).status_code == 404


def test_the_viewers_error_codes_are_envhubs() -> None:
    from envhub.core.errors import ErrorCode
    from envhub.view._app import ViewerHostError, ViewerTokenError

    assert {ViewerHostError("x").code, ViewerTokenError().code} <= set(ErrorCode)


def test_token_pieces_join_to_the_text_when_a_character_spans_byte_level_tokens(
    small_model_dir: Path,
) -> None:
    from envhub.policy.tokenizer import ChatTokenizer
    from envhub.view._app import token_pieces

    tokenizer = ChatTokenizer(small_model_dir)
    ids = tokenizer.encode("naïve € <b>ok</b> 東京")
    one_by_one = [tokenizer.decode([i], skip_special_tokens=False) for i in ids]
    assert "".join(one_by_one) != tokenizer.decode(ids)  # the case: characters split over tokens
    pieces = token_pieces(lambda part: tokenizer.decode(part, skip_special_tokens=False), ids)
    assert len(pieces) == len(ids)
    assert "".join(pieces) == tokenizer.decode(ids, skip_special_tokens=False) == "naïve € <b>ok</b> 東京"


def test_a_graphgpo_group_shows_its_transition_graph(served: Served, tmp_path: Path) -> None:
    from envhub.algos import transition_graphs

    groups = record_run(tmp_path / "run", algo="graphgpo", env_id=SOKOBAN, iterations=1)[1]
    group = groups[0]
    graph = transition_graphs(StepBatch.from_groups([group]))[group.uid]
    credit = group_credit(group, "graphgpo", default_config("graphgpo", resolve(SOKOBAN)))
    assert credit.graph == graph
    app = create_app(open_source(str(tmp_path / "run")), ViewSettings())
    with served(app) as base:
        page = httpx.get(base + "/group", params={"batch": "iter_000001", "uid": group.uid})
        assert page.status_code == 200
        html = page.text
        assert 'id="transition-graph"' in html and "<svg" in html
        # One circle per node, one path per distinct edge, each node's distance in its tooltip.
        svg = html[html.index('id="transition-graph"') :]
        assert svg.count('class="node ') == len(graph.nodes)
        assert svg.count('class="edge"') == len(graph.edges)
        for node in graph.nodes:
            assert f"d = {node.distance}" in svg
        assert "Anchor groups" in html  # GraphGPO normalises within the same anchor groups
        traj = group.trajectories[0]
        step = httpx.get(
            base + "/step",
            params={"batch": "iter_000001", "uid": group.uid, "traj": traj.traj_id, "step": 0},
        )
        d = credit.steps[(traj.traj_id, 0)].distances
        assert d is not None and f'id="graph-distance">{d[0]} &rarr; {d[1]}<' in step.text
