"""The ``envhub`` command.

Sub-commands register here; each one is a thin shell over a function in its layer.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.markup import escape
from rich.table import Table

app = typer.Typer(
    name="envhub",
    help="Gymnasium environments for LLM agents.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
)
data_app = typer.Typer(help="Generate or inspect environment data.", no_args_is_help=True)
app.add_typer(data_app, name="data")
alfworld_data_app = typer.Typer(help="ALFWorld games: envhub's own generator.", no_args_is_help=True)
data_app.add_typer(alfworld_data_app, name="alfworld")


@alfworld_data_app.command("generate")
def alfworld_generate_command(
    out: Annotated[str, typer.Option(help="Data root to write (then set ALFWORLD_DATA to it).")],
    per_type: Annotated[int, typer.Option(help="Games per task type (6 types).")] = 2,
    seed: Annotated[int, typer.Option(help="Generator seed; the same arguments give identical games.")] = 0,
    split: Annotated[
        str, typer.Option(help="train | eval_in_distribution | eval_out_of_distribution.")
    ] = "train",
) -> None:
    """Generate solvable ALFWorld games (real json_2.1.1 format) from the alfworld wheel's scenes."""
    from envhub.envs.alfworld.fixtures import generate_games

    games = generate_games(out, per_type=per_type, seed=seed, split=split)
    table = Table(title=f"ALFWorld games written under {out}")
    for column in ("task id", "walkthrough steps"):
        table.add_column(column)
    for game in games:
        table.add_row(game.task_id, str(len(game.walkthrough)))
    Console(width=160).print(table)


search_data_app = typer.Typer(
    help="Search-QA: envhub's fictional-world corpus and questions.", no_args_is_help=True
)
data_app.add_typer(search_data_app, name="search")


@search_data_app.command("generate")
def search_generate_command(
    out: Annotated[str, typer.Option(help="Directory to write (then set ENVHUB_SEARCH_DATA_DIR to it).")],
    passages: Annotated[int, typer.Option(help="Corpus size in passages.")] = 10_000,
    train: Annotated[int, typer.Option(help="Train questions.")] = 2_000,
    test: Annotated[int, typer.Option(help="Test questions.")] = 500,
    seed: Annotated[int, typer.Option(help="Generator seed; the same arguments give identical files.")] = 0,
    parquet: Annotated[bool, typer.Option(help="Also write Search-R1 processed parquet rows.")] = True,
) -> None:
    """Generate a Search-QA dataset: corpus.jsonl (Search-R1 format) plus train/test questions."""
    from pathlib import Path

    from envhub.envs.search.fixtures import write_world

    counts = write_world(
        Path(out), n_passages=passages, n_train=train, n_test=test, seed=seed, parquet=parquet
    )
    Console().print(
        f"wrote {counts['passages']} passages, {counts['train']} train and {counts['test']} test "
        f"questions to {out}"
    )


from envhub.eval.cli import eval_app  # noqa: E402  (the eval commands live in their layer)

app.add_typer(eval_app, name="eval")

env_app = typer.Typer(help="Env packages: third-party env families.", no_args_is_help=True)
app.add_typer(env_app, name="env")


@env_app.command("new")
def env_new_command(
    name: Annotated[str, typer.Argument(help="Family name, e.g. 'guess' (the package is envhub-guess).")],
    out: Annotated[Path, typer.Option("-o", "--out", help="Folder to create the package in.")] = Path("."),
) -> None:
    """Scaffold an env package: pyproject with the envhub.envs entry point, env, EnvSpec, tests."""
    from envhub.envs.scaffold import new_env_package

    root = new_env_package(name, out)
    # A path pip reads as a folder: `pip install envhub-NAME` would ask PyPI for that name.
    where = str(root) if root.is_absolute() or str(root).startswith(".") else f"./{root}"
    Console().print(f"wrote {root}; `pip install {where}` and it appears in `envhub list`", soft_wrap=True)


model_app = typer.Typer(help="Build models locally (no download).", no_args_is_help=True)
app.add_typer(model_app, name="model")


@model_app.command("tiny")
def model_tiny_command(
    out: Annotated[str, typer.Option(help="Directory to write (a Hugging Face model dir).")],
    seed: Annotated[int, typer.Option(help="Weight seed; the same arguments give identical files.")] = 0,
    vocab_size: Annotated[int, typer.Option(help="Target BPE vocabulary size.")] = 1024,
    hidden_size: Annotated[int, typer.Option(help="Model width, a multiple of 64.")] = 128,
    layers: Annotated[int, typer.Option(help="Decoder layers.")] = 2,
) -> None:
    """Build the tiny Qwen2 model + byte-level BPE tokenizer that tests and the CPU default use."""
    from envhub.policy.tiny import build_tiny_model

    path = build_tiny_model(out, seed=seed, vocab_size=vocab_size, hidden_size=hidden_size, layers=layers)
    Console().print(f"wrote a tiny Qwen2 model to {path} (serve it with vLLM or load it with transformers)")


@app.command("serve-retriever")
def serve_retriever_command(
    corpus: Annotated[
        str | None, typer.Option(help="Search-R1 corpus jsonl; default: the embedded corpus.")
    ] = None,
    index: Annotated[str | None, typer.Option(help="Index directory (built there on first use).")] = None,
    retriever: Annotated[str, typer.Option(help="bm25 | dense.")] = "bm25",
    host: Annotated[str, typer.Option(help="Interface to bind.")] = "127.0.0.1",
    port: Annotated[int, typer.Option(help="Port (Search-R1 clients default to 8000).")] = 8000,
    topk: Annotated[int, typer.Option(help="Passages per query when a request gives no topk.")] = 3,
    token: Annotated[
        str | None,
        typer.Option(envvar="ENVHUB_TOKEN", help="Require 'Authorization: Bearer <token>' [ENVHUB_TOKEN]."),
    ] = None,
) -> None:
    """Serve Search-R1's POST /retrieve (batch), /health and /metrics over a local corpus."""
    from pathlib import Path

    from envhub.envs.search.data import EMBEDDED_DATA_DIR
    from envhub.envs.search.retrievers import make_retriever
    from envhub.envs.search.service import serve

    corpus_path = Path(corpus) if corpus else EMBEDDED_DATA_DIR / "corpus.jsonl"
    index_dir = Path(index) if index else None
    serve(
        lambda: make_retriever(retriever, corpus_path=corpus_path, index_dir=index_dir),
        host=host,
        port=port,
        default_topk=topk,
        token=token,
    )


@app.command("serve-shop")
def serve_shop_command(
    data_dir: Annotated[
        str | None, typer.Option(help="WebShop data directory; default: WEBSHOP_DATA or the embedded shop.")
    ] = None,
    human_goals: Annotated[bool, typer.Option(help="Human instructions instead of synthetic ones.")] = False,
    seed: Annotated[
        int, typer.Option(help="Prices, price limits and goal shuffle seed (WebShop: 233).")
    ] = 233,
    show_attrs: Annotated[bool, typer.Option(help="Offer the item's Attributes sub-page.")] = False,
    host: Annotated[str, typer.Option(help="Interface to bind.")] = "127.0.0.1",
    port: Annotated[int, typer.Option(help="Port (WebShop used 3000).")] = 3000,
) -> None:
    """Serve the WebShop site alone, to shop in a browser: open http://HOST:PORT/fixed_N for goal N."""
    import uvicorn

    from envhub.envs.webshop.data import load_shop_data
    from envhub.envs.webshop.site import create_shop_app

    shop = load_shop_data(data_dir, human_goals=human_goals, seed=seed)
    Console().print(f"WebShop: {len(shop.goals)} goals; open http://{host}:{port}/fixed_0")
    uvicorn.run(create_shop_app(shop, show_attrs=show_attrs), host=host, port=port, log_level="info")


@app.command("list")
def list_command() -> None:
    """List every registered env (built in or from an installed package) and whether its data is available."""
    from envhub.envs.registry import list_envs

    table = Table(title="envhub environments")
    for column in ("id", "family", "package", "splits", "data", "description / how to get data"):
        table.add_column(column)
    for row in list_envs():
        data = f"[green]yes[/] ({row.data_source})" if row.data_available else "[red]no[/]"
        text = row.description if row.data_available else f"{row.description}\n[yellow]{row.how_to_get}[/]"
        package = f"{row.package} {row.version}"
        table.add_row(row.id, row.family, package, ", ".join(row.splits), data, text)
    Console(width=180).print(table)


@app.command("demo")
def demo_command(
    episodes: Annotated[int, typer.Option(help="Episodes per env and policy.")] = 40,
    group_size: Annotated[int, typer.Option(help="Episodes per task (a GRPO group).")] = 2,
    env: Annotated[list[str] | None, typer.Option(help="Only these env ids or families.")] = None,
) -> None:
    """Run a few episodes of every available env with its built-in policy and print a table."""
    from envhub.rollout.demo import run_demo

    table = Table(title="envhub demo (in-process envs, built-in policies)")
    for column in ("env", "policy", "episodes", "mean reward", "success", "steps", "env+policy steps/s"):
        table.add_column(column, justify="right" if column not in ("env", "policy") else "left")
    for row in run_demo(episodes=episodes, group_size=group_size, env_ids=env):
        if row.note:
            table.add_row(row.env_id, row.note, "0", "-", "-", "-", "-")
            continue
        table.add_row(
            row.env_id,
            row.policy,
            str(row.episodes),
            f"{row.mean_reward:.3f}",
            f"{row.success:.1%}",
            str(row.steps),
            f"{row.steps_per_s:,.0f}",
        )
    Console(width=140).print(table)


@app.command("serve")
def serve_command(
    env_id: Annotated[
        str | None, typer.Argument(help="Registered id, family name, or module:Class [ENVHUB_ENV_ID].")
    ] = None,
    host: Annotated[str | None, typer.Option(help="Interface to bind [ENVHUB_HOST, 127.0.0.1].")] = None,
    port: Annotated[int | None, typer.Option(help="TCP port [ENVHUB_PORT, 8000].")] = None,
    workers: Annotated[
        int | None, typer.Option(help="Worker processes hosting envs [ENVHUB_WORKERS, 2].")
    ] = None,
    max_sessions: Annotated[
        int | None, typer.Option(help="Session capacity [ENVHUB_MAX_SESSIONS, 4096].")
    ] = None,
    session_ttl: Annotated[
        float | None, typer.Option(help="Idle seconds before a session is reaped.")
    ] = None,
    step_timeout: Annotated[float | None, typer.Option(help="Seconds a step may take before 504.")] = None,
    token: Annotated[
        str | None, typer.Option(help="Require 'Authorization: Bearer <token>' [ENVHUB_TOKEN].")
    ] = None,
) -> None:
    """Serve an env over HTTP: sessions, groups, batch steps and the OpenEnv-compatible API."""
    import uvicorn

    from envhub.server import ServerSettings, create_app
    from envhub.server.app import uvicorn_ws_options

    flags: dict[str, Any] = {
        "env_id": env_id,
        "host": host,
        "port": port,
        "workers": workers,
        "max_sessions": max_sessions,
        "session_ttl": session_ttl,
        "step_timeout": step_timeout,
        "token": token,
    }
    # Flags override ENVHUB_* variables; unset flags leave the environment's value in place.
    settings = ServerSettings(**{k: v for k, v in flags.items() if v is not None})
    # No access log: one line per step costs more than the step itself; /metrics counts requests.
    uvicorn.run(
        create_app(settings),
        host=settings.host,
        port=settings.port,
        log_level="info",
        access_log=False,
        **uvicorn_ws_options(settings),
    )


@app.command("serve-rollouts")
def serve_rollouts_command(
    host: Annotated[str | None, typer.Option(help="Interface to bind [ENVHUB_HOST, 127.0.0.1].")] = None,
    port: Annotated[int | None, typer.Option(help="TCP port [ENVHUB_PORT, 8100].")] = None,
    redis_url: Annotated[
        str | None, typer.Option(help="Redis queue + journal [REDIS_URL]; unset: in-process queue.")
    ] = None,
) -> None:
    """Serve rollout jobs over HTTP: POST /v1/rollouts, progress, cancel, retry, /metrics.

    SIGTERM stops new jobs, lets running ones finish for ENVHUB_SHUTDOWN_GRACE_S and pauses the
    rest; the next start resumes them (docs/rollout.md).
    """
    from envhub.rollout.service import RolloutServiceSettings, serve

    flags: dict[str, Any] = {"host": host, "port": port, "redis_url": redis_url}
    serve(RolloutServiceSettings(**{k: v for k, v in flags.items() if v is not None}))


@app.command("rollout")
def rollout_command(
    config: Annotated[
        Path | None,
        typer.Option(
            "--config", help="A job YAML: the RolloutRequest fields (what POST /v1/rollouts takes)."
        ),
    ] = None,
    set_: Annotated[
        list[str] | None,
        typer.Option(
            "--set", help="KEY=VALUE over the job (dotted key, YAML value), e.g. sampling.top_p=0.9."
        ),
    ] = None,
    env: Annotated[
        str | None, typer.Option(help="Env id (in-process envs unless --env-url is given).")
    ] = None,
    env_url: Annotated[list[str] | None, typer.Option(help="Env server replica URL (repeatable).")] = None,
    resolve_replicas: Annotated[
        bool | None,
        typer.Option(help="Every address an --env-url host resolves to is a replica (compose --scale)."),
    ] = None,
    split: Annotated[str | None, typer.Option(help="Task split (the env's default if unset).")] = None,
    count: Annotated[int | None, typer.Option(help="Groups: the first COUNT tasks of the split.")] = None,
    task: Annotated[
        list[str] | None, typer.Option(help="Explicit task id (repeatable), one group each.")
    ] = None,
    group_size: Annotated[int | None, typer.Option(help="Members per group (GRPO's n; default 8).")] = None,
    max_steps: Annotated[int | None, typer.Option(help="Steps before an episode is truncated (50).")] = None,
    policy: Annotated[
        str | None, typer.Option(help="scripted:<module>:<callable> (else --policy-url and --model).")
    ] = None,
    policy_url: Annotated[str | None, typer.Option(help="OpenAI-compatible base URL (…/v1).")] = None,
    model: Annotated[str | None, typer.Option(help="Served model name.")] = None,
    tokenizer: Annotated[str | None, typer.Option(help="Local tokenizer directory.")] = None,
    policy_version: Annotated[int | None, typer.Option(help="Stamped on every step.")] = None,
    temperature: Annotated[float | None, typer.Option(help="Sampling temperature (1.0).")] = None,
    max_tokens: Annotated[int | None, typer.Option(help="Most tokens per response (256).")] = None,
    concurrency: Annotated[int | None, typer.Option(help="Groups played at once (8).")] = None,
    step_timeout: Annotated[float | None, typer.Option(help="Seconds one step of a group may take.")] = None,
    on_failure: Annotated[str | None, typer.Option(help="retry | drop a group with a failed member.")] = None,
    agentocr: Annotated[bool | None, typer.Option(help="Show the history as an image (AgentOCR).")] = None,
    trajectory_mode: Annotated[
        bool | None,
        typer.Option(
            help="Also build one token sequence per episode (needs --policy-url, --model and --tokenizer)."
        ),
    ] = None,
    env_kwarg: Annotated[list[str] | None, typer.Option(help="KEY=JSON env constructor argument.")] = None,
    out: Annotated[Path, typer.Option("-o", "--out", help="JSONL file the groups are appended to.")] = Path(
        "groups.jsonl"
    ),
    redis_url: Annotated[
        str | None, typer.Option(help="Publish to this Redis stream instead of --out [REDIS_URL].")
    ] = None,
    stream: Annotated[
        str | None,
        typer.Option(help="The Redis stream of finished groups (the job's stream; envhub:groups)."),
    ] = None,
    service_url: Annotated[
        str | None,
        typer.Option(help="Submit the job to this rollout service (envhub serve-rollouts) instead."),
    ] = None,
    token: Annotated[
        str | None, typer.Option(envvar="ENVHUB_TOKEN", help="The rollout service's bearer token.")
    ] = None,
) -> None:
    """Run one rollout job here (no service) with a progress bar; groups go to a JSONL file or Redis.

    The job is a RolloutRequest, the body POST /v1/rollouts takes: read from --config (YAML), then
    the flags (shorthands of its fields: --env sets env_id, --temperature sampling.temperature,
    --concurrency max_concurrent_groups, ...), then each --set KEY=VALUE (dotted key, YAML value).
    With --service-url the job runs on a rollout service instead (its groups go to the service's
    stream) and this command waits for it.

    Bad input (a field out of range, a policy endpoint that does not answer or does not serve
    the model, a count beyond the split) is one line on stderr and exit 2, and leaves no output file.
    """
    import asyncio
    import json
    import uuid

    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    from envhub.core.errors import ConfigurationError, error_from_wire
    from envhub.rollout.driver import play
    from envhub.rollout.engine import EngineEvent, GroupTask, JobAborted
    from envhub.rollout.jobs import CountBeyondSplitError, check_envs, check_job, check_policy, load_request
    from envhub.rollout.queue.base import GroupWriter

    if on_failure is not None and on_failure not in ("retry", "drop"):
        raise ConfigurationError(f"--on-failure must be retry or drop, got {on_failure!r}.")
    if trajectory_mode and policy is not None:
        raise ConfigurationError(
            "--trajectory-mode needs a policy endpoint with a local tokenizer: give --policy-url, "
            "--model and --tokenizer (a scripted policy samples no tokens)."
        )
    fields: dict[str, Any] = {
        "env_id": env,
        "env_urls": env_url,
        "resolve_replicas": resolve_replicas,
        "split": split,
        "count": count,
        "task_ids": task,
        "group_size": group_size,
        "max_steps": max_steps,
        "policy": policy,
        "policy.base_url": policy_url,
        "policy.model": model,
        "policy.tokenizer": tokenizer,
        "policy_version": policy_version,
        "sampling.temperature": temperature,
        "sampling.max_tokens": max_tokens,
        "max_concurrent_groups": concurrency,
        "step_timeout_s": step_timeout,
        "on_failure": on_failure,
        "context.agentocr": agentocr,
        "trajectory_mode": trajectory_mode,
        "stream": stream,
    }
    for item in env_kwarg or []:
        key, _, value = item.partition("=")
        try:
            fields[f"env_kwargs.{key}"] = json.loads(value)
        except json.JSONDecodeError as exc:
            raise ConfigurationError(
                f"--env-kwarg {item!r}: the value is not JSON ({exc.msg}); write KEY=JSON, e.g. images=false."
            ) from None
    given = {k: v for k, v in fields.items() if v is not None}
    if policy is not None:  # a scripted policy replaces an endpoint the YAML names
        given = {k: v for k, v in given.items() if not k.startswith("policy.")}
    request = check_job(load_request(config, set_ or [], fields=given))
    if service_url is not None:
        _rollout_on_service(service_url, token=token, request=request)
        return
    asyncio.run(check_policy(request.policy))  # a down endpoint or an unserved model: one line, first
    if request.env_urls:  # the env the servers serve, and an --env they do not serve refused
        request = request.model_copy(update={"env_id": asyncio.run(check_envs(request))})
    sink: GroupWriter
    out_existed = out.exists()
    where = str(out)
    if redis_url is not None:
        from envhub.rollout.queue.redis import RedisQueue
        from envhub.rollout.queue.settings import QueueSettings

        bounds = QueueSettings()  # ENVHUB_QUEUE_MAX_LAG bounds this producer too
        where = request.stream or "envhub:groups"
        sink = RedisQueue(redis_url, stream=where, max_lag=bounds.max_lag, claim_idle_ms=bounds.lease_ms)
    else:
        from envhub.rollout.export import JsonlGroupWriter

        sink = JsonlGroupWriter(out)
    job_id = uuid.uuid4().hex[:12]
    try:
        with Progress(
            TextColumn("[bold]rollout {task.fields[job]}"),
            BarColumn(),
            MofNCompleteColumn(),
            TextColumn("steps {task.fields[steps]}  dropped {task.fields[dropped]}"),
            TimeElapsedColumn(),
        ) as bar:
            progress = bar.add_task("groups", total=None, job=job_id, steps=0, dropped=0)
            counts = {"steps": 0, "dropped": 0}

            def on_event(event: EngineEvent) -> None:
                if event.kind == "step":
                    counts["steps"] += 1
                if event.kind == "group_dropped":
                    counts["dropped"] += 1
                advance = 1 if event.kind in ("group_published", "group_dropped") else 0
                bar.update(progress, advance=advance, steps=counts["steps"], dropped=counts["dropped"])

            def on_tasks(tasks: list[GroupTask]) -> None:
                if request.count is not None and len(tasks) < request.count:
                    raise CountBeyondSplitError(
                        f"count {request.count} but split {request.split or '(default)'} of "
                        f"{request.env_id or request.env_urls[0]} has {len(tasks)} tasks; ask for at "
                        f"most {len(tasks)}.",
                        count=request.count,
                        total=len(tasks),
                    )
                bar.update(progress, total=len(tasks))

            async def run() -> Any:
                try:
                    return await play(request, sink, job_id=job_id, on_event=on_event, on_tasks=on_tasks)
                finally:
                    await sink.aclose()

            played = asyncio.run(run())
    except JobAborted as exc:
        _drop_empty(out, out_existed)
        raise error_from_wire(exc.failure.code, exc.failure.message) from None
    except BaseException:
        _drop_empty(out, out_existed)
        raise
    report = played.report
    if report.dropped and report.published == 0:  # as the service ends such a job: failed
        _drop_empty(out, out_existed)
        first = f"; the first: {report.error.message}" if report.error is not None else ""
        raise error_from_wire(
            "ALL_GROUPS_DROPPED",
            f"job {job_id}: every group was dropped (causes: {report.drops_by_cause}){first}",
            {"drops_by_cause": dict(report.drops_by_cause)},
        )
    Console().print(
        f"job {job_id}: {report.published} groups written to {where}, {report.dropped} dropped "
        f"{report.drops_by_cause or ''}, {report.retried} re-run, {report.steps} steps "
        f"in {report.elapsed_s:.1f} s"
    )


def _rollout_on_service(url: str, *, token: str | None, request: Any) -> None:
    """Submit one job to a rollout service with :class:`~envhub.client.RolloutClient` and wait for it."""
    import time

    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    from envhub.client import RolloutClient
    from envhub.core.errors import error_from_wire
    from envhub.rollout.jobs import check_job

    check_job(request, remote=True)  # the service checks env_id (any catalogue name) against its servers
    with RolloutClient(url, token=token) as client:
        job_id = client.submit(request).job_id
        with Progress(
            TextColumn(f"[bold]rollout {job_id}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn()
        ) as bar:
            shown = bar.add_task("groups", total=None)
            while (state := client.get(job_id)).status not in ("done", "failed", "cancelled"):
                bar.update(shown, total=state.total or None, completed=state.published + state.dropped)
                time.sleep(0.5)
    if state.status != "done":
        error = state.error or {"code": "JOB_CANCELLED", "message": "the job was cancelled"}
        raise error_from_wire(str(error.get("code")), f"job {job_id} {state.status}: {error.get('message')}")
    Console().print(
        f"job {job_id} on {url}: {state.published} groups published, {state.dropped} dropped "
        f"{state.drops_by_cause or ''}, {state.retried} re-run, {state.steps} steps "
        f"in {state.elapsed_s:.1f} s"
    )


def _drop_empty(path: Path, existed: bool) -> None:
    """Remove an output file this run created and left empty (a failed run leaves no stub)."""
    if not existed and path.exists() and path.stat().st_size == 0:
        path.unlink()


rollouts_app = typer.Typer(help="Finished rollout groups.", no_args_is_help=True)
app.add_typer(rollouts_app, name="rollouts")


@rollouts_app.command("export")
def rollouts_export_command(
    output: Annotated[Path, typer.Option("-o", "--output", help="The file to write.")],
    source: Annotated[
        Path | None, typer.Argument(help="A groups JSONL file (from `envhub rollout`); or use --redis-url.")
    ] = None,
    format: Annotated[str, typer.Option("--format", help="jsonl | parquet (one row per step).")] = "jsonl",
    redis_url: Annotated[str | None, typer.Option(help="Read the groups from this Redis stream.")] = None,
    stream: Annotated[str, typer.Option(help="The Redis stream of finished groups.")] = "envhub:groups",
    consume: Annotated[
        bool,
        typer.Option(
            "--consume",
            help="Consume the groups through --group (acked once the file is written); default: read "
            "them without consuming (XRANGE), so trainers and other readers keep every group.",
        ),
    ] = False,
    group: Annotated[
        str, typer.Option(help="With --consume: the consumer group the export reads with (its own).")
    ] = "envhub-export",
    env: Annotated[list[str] | None, typer.Option(help="Only groups of this env id (repeatable).")] = None,
    run: Annotated[list[str] | None, typer.Option(help="Only groups of this run (repeatable).")] = None,
) -> None:
    """Export finished groups: JSONL (one group per line) or parquet (one step row per line)."""
    import asyncio

    from envhub.core.errors import ConfigurationError
    from envhub.rollout.export import export_stream, read_jsonl, write_jsonl, write_parquet

    writers = {"jsonl": write_jsonl, "parquet": write_parquet}
    if format not in writers:
        raise ConfigurationError(f"--format must be one of {sorted(writers)}; got {format!r}.")
    if (source is None) == (redis_url is None):
        raise ConfigurationError("Give a JSONL file or --redis-url (not both).")
    if redis_url is not None:
        written = asyncio.run(
            export_stream(
                redis_url, stream, writers[format], output, consume=consume, group=group, envs=env, runs=run
            )
        )
    else:
        written = writers[format](list(read_jsonl(source)), output)  # type: ignore[arg-type]
    Console().print(f"wrote {written} {'groups' if format == 'jsonl' else 'step rows'} to {output}")


_HISTORY_PNG = Path("history.png")


@app.command("plot")
def plot_command(
    run_dir: Annotated[str, typer.Argument(help="An envhub-train run directory.")],
    out: Annotated[str | None, typer.Option(help="PNG to write (default RUN_DIR/curves.png).")] = None,
) -> None:
    """Draw a training run's curves (success, reward, KL, entropy, timings) into a PNG."""
    from envhub.train.plot import plot_run

    Console().print(f"wrote {plot_run(run_dir, out)}")


@app.command("view")
def view_command(
    path: Annotated[str, typer.Argument(help="A run folder (envhub-train's run_dir) or a redis:// URL.")],
    host: Annotated[str | None, typer.Option(help="Interface to bind [ENVHUB_VIEW_HOST, 127.0.0.1].")] = None,
    port: Annotated[int | None, typer.Option(help="TCP port [ENVHUB_VIEW_PORT, 8300].")] = None,
    token: Annotated[
        str | None, typer.Option(help="Token every page needs [ENVHUB_VIEW_TOKEN]; made up beyond loopback.")
    ] = None,
    stream: Annotated[
        str, typer.Option(help="The Redis stream of groups (with a redis:// PATH).")
    ] = "envhub:groups",
    algo: Annotated[str, typer.Option(help="Estimator whose credit a stream's groups show.")] = "gigpo",
    limit: Annotated[int, typer.Option(help="Stream entries read (XRANGE from the start).")] = 200,
) -> None:
    """Browse a training run or a stream of groups: curves, steps, and each step's credit."""
    import uvicorn

    from envhub.view import ViewSettings, create_app, open_source

    flags: dict[str, Any] = {"host": host, "port": port, "token": token}
    settings = ViewSettings(**{k: v for k, v in flags.items() if v is not None}).secured()
    source = open_source(path, stream=stream, algo=algo, limit=limit)
    query = f"?token={settings.token.get_secret_value()}" if settings.token is not None else ""
    url = f"http://{settings.host}:{settings.port}/{query}"
    Console().print(f"envhub view: {escape(source.title)} at {url}", soft_wrap=True)
    uvicorn.run(create_app(source, settings), host=settings.host, port=settings.port, log_level="warning")


@app.command("render-history")
def render_history_command(
    file: Annotated[
        Path, typer.Argument(help="JSONL of steps (observation, action), trajectories or lines.")
    ],
    output: Annotated[Path, typer.Option("-o", "--output", help="Where to write the PNG.")] = _HISTORY_PNG,
    style: Annotated[
        str,
        typer.Option(
            help="The env whose render preset to use: alfworld (font 10, 392 px) or search (12, 560 px)."
        ),
    ] = "alfworld",
    window: Annotated[int | None, typer.Option(help="Only the last N steps (default: all).")] = None,
    compression: Annotated[float, typer.Option(help="Self-compression factor c in [1, 5].")] = 1.0,
    highlight: Annotated[bool, typer.Option(help="Colour the [Observation]/[Action] markers.")] = True,
) -> None:
    """Render a recorded history as an AgentOCR image and print its token accounting."""
    from envhub.render import HistoryRenderer, estimate_text_tokens, render_preset
    from envhub.render.history_file import history_lines_from_jsonl

    preset = render_preset(style, highlight=highlight)
    lines = history_lines_from_jsonl(file, style=preset.style, window=window)
    rendered = HistoryRenderer(preset.config).render(lines, compression=compression)
    output.write_bytes(rendered.png())
    width, height = rendered.size
    text_tokens = estimate_text_tokens("\n".join(lines))
    Console().print(
        f"wrote {output}: {width}x{height} px, {rendered.segments} steps, {rendered.lines} lines"
        f"{' (cut at max height)' if rendered.truncated else ''}; "
        f"{rendered.vision_tokens()} vision tokens vs ~{text_tokens} text tokens (pre-token estimate)"
    )


def main() -> None:
    """Console entry point: envhub's own errors are one line and exit 2, not a traceback."""
    from envhub.core.errors import EnvhubError

    try:
        app()
    except EnvhubError as exc:
        # escape(): a message such as "pip install 'envhub-rl[client]'" is text, not Rich markup.
        Console(stderr=True).print(f"[red]error[/] ({exc.code}): {escape(exc.message)}", soft_wrap=True)
        raise SystemExit(2) from None


if __name__ == "__main__":
    main()
