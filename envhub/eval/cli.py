"""``envhub eval``: evaluate a policy on an env (``--env``), or ``envhub eval compare A B``."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.markup import escape
from rich.table import Table

eval_app = typer.Typer(
    help="Evaluate a policy on an env: success, pass@k, pass^k, per-family breakdowns, a report.",
    invoke_without_command=True,
)


@eval_app.callback()
def eval_command(
    ctx: typer.Context,
    env: Annotated[str | None, typer.Option(help="Env id (in-process unless --env-url is given).")] = None,
    env_url: Annotated[list[str] | None, typer.Option(help="Env server replica URL (repeatable).")] = None,
    policy: Annotated[
        str | None,
        typer.Option(
            help="builtin | random | scripted:<module>:<callable> | transformers:<model dir> "
            "(else --policy-url and --model)."
        ),
    ] = None,
    policy_url: Annotated[str | None, typer.Option(help="OpenAI-compatible base URL (…/v1).")] = None,
    model: Annotated[str | None, typer.Option(help="Served model name.")] = None,
    tokenizer: Annotated[str | None, typer.Option(help="Local tokenizer directory.")] = None,
    split: Annotated[str | None, typer.Option(help="Task split (the env's default if unset).")] = None,
    task: Annotated[list[str] | None, typer.Option(help="Explicit task id (repeatable).")] = None,
    limit: Annotated[int | None, typer.Option(help="Only the first LIMIT tasks.")] = None,
    n: Annotated[int, typer.Option(help="Samples per task.")] = 1,
    k: Annotated[
        list[int] | None, typer.Option(help="k of pass@k / avg@k / pass^k (repeatable, <= n).")
    ] = None,
    temperature: Annotated[
        float | None, typer.Option(help="Sampling temperature (sampling.temperature; default 1).")
    ] = None,
    max_tokens: Annotated[
        int | None, typer.Option(help="Most tokens per response (sampling.max_tokens; default 256).")
    ] = None,
    max_steps: Annotated[
        int | None, typer.Option(help="Steps per episode (the env's limit if unset).")
    ] = None,
    concurrency: Annotated[int, typer.Option(help="Tasks played at once.")] = 8,
    seed: Annotated[int, typer.Option(help="Task t is reset with seed + t.")] = 0,
    agentocr: Annotated[
        bool, typer.Option(help="Show the history as an image (AgentOCR; context.agentocr).")
    ] = False,
    set_: Annotated[
        list[str] | None,
        typer.Option(
            "--set",
            help="KEY=VALUE over the config, after the flags (dotted key, YAML value), e.g. "
            "sampling.top_p=0.9, sampling.stop=[END], context.history_length=4.",
        ),
    ] = None,
    out: Annotated[Path, typer.Option("-o", "--out", help="Run folder (resumed if it exists).")] = Path(
        "eval-out"
    ),
) -> None:
    """Evaluate a policy on an env; a run folder that exists is resumed (finished tasks are kept)."""
    if ctx.invoked_subcommand is not None:
        return
    if env is None:
        typer.echo(ctx.get_help())
        raise typer.Exit(0)
    from pydantic import ValidationError
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    from envhub.core.errors import ConfigurationError
    from envhub.eval.run import EvalConfig, evaluate
    from envhub.rollout.engine import EngineEvent
    from envhub.rollout.jobs import parse_override, set_path

    data: dict[str, Any] = {
        "env": env,
        "env_urls": env_url or [],
        "policy": policy,
        "policy_url": policy_url,
        "model": model,
        "tokenizer": tokenizer,
        "split": split,
        "tasks": task or None,
        "limit": limit,
        "n": n,
        "ks": k or [1],
        "max_steps": max_steps,
        "concurrency": concurrency,
        "seed": seed,
    }
    # The flags are shorthands of the nested specs; --set reaches any field of them.
    flags = {"sampling.temperature": temperature, "sampling.max_tokens": max_tokens}
    flags["context.agentocr"] = True if agentocr else None
    for key, value in flags.items():
        if value is not None:
            set_path(data, key, value)
    for text in set_ or []:
        set_path(data, *parse_override(text))
    try:
        config = EvalConfig.model_validate(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        message = str(first["msg"]).removeprefix("Value error, ")
        where = _flag(tuple(str(p) for p in first["loc"][:2]))
        raise ConfigurationError(f"{where}: {message}" if where else message) from None
    with Progress(
        TextColumn("[bold]eval {task.fields[env]}"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("steps {task.fields[steps]}"),
        TimeElapsedColumn(),
    ) as bar:
        progress = bar.add_task("tasks", total=None, env=config.env, steps=0)
        counts = {"steps": 0}

        def on_tasks(total: int, done: int) -> None:
            bar.update(progress, total=total, completed=done)

        def on_event(event: EngineEvent) -> None:
            if event.kind == "step":
                counts["steps"] += 1
            advance = 1 if event.kind in ("group_published", "group_dropped") else 0
            bar.update(progress, advance=advance, steps=counts["steps"])

        report = evaluate(config, out, on_event=on_event, on_tasks=on_tasks)
    Console().print(_headline_table(report))
    Console().print(
        f"report: {out / 'report.json'}, {out / 'summary.md'}, episodes: {out / 'episodes.jsonl'}"
    )


#: The flag of each config key that has one (others: ``--<key>``, or ``--set`` for nested keys).
_FLAGS = {
    "ks": "--k",
    "env_urls": "--env-url",
    "tasks": "--task",
    "sampling.temperature": "--temperature",
    "sampling.max_tokens": "--max-tokens",
    "context.agentocr": "--agentocr",
}


#: Config keys whose flag is ``--<key>`` (the rest, and unknown keys, are reached by ``--set`` only).
_SAME_NAME = frozenset(
    {
        "env",
        "policy",
        "policy_url",
        "model",
        "tokenizer",
        "split",
        "limit",
        "n",
        "max_steps",
        "concurrency",
        "seed",
    }
)


def _flag(loc: tuple[str, ...]) -> str:
    """Where a config error is, as the user names it: ``--temperature``, ``--set sampling.top_k``."""
    if not loc:
        return ""
    key = ".".join(loc[:2]) if loc[0] in ("sampling", "context") and len(loc) > 1 else loc[0]
    if key in _SAME_NAME:
        return "--" + key.replace("_", "-")
    return _FLAGS.get(key, f"--set {key}")


def _headline_table(report: dict[str, Any]) -> Table:
    from envhub.eval.report import format_interval as _fmt

    table = Table(
        title=f"{report['env_id']} · {report['policy']} · {report['tasks']} tasks x n={report['n']}"
    )
    table.add_column("metric")
    table.add_column("value (95% CI)", justify="right")
    table.add_row("success", _fmt(report["success"]))
    table.add_row("mean reward", _fmt(report["mean_reward"], pct=False))
    for key, name in (("pass_at_k", "pass@{}"), ("pass_hat_k", "pass^{}")):
        for k, interval in report[key].items():
            table.add_row(name.format(k), _fmt(interval))
    for dim, labels in report["breakdown"].items():
        for label, cell in labels.items():
            table.add_row(escape(f"success [{dim}={label}]"), _fmt(cell["success"]))
    return table


@eval_app.command("compare")
def compare_command(
    a: Annotated[Path, typer.Argument(help="Report A: a report.json or its eval folder.")],
    b: Annotated[Path, typer.Argument(help="Report B: a report.json or its eval folder.")],
) -> None:
    """Show two eval reports side by side (B - A in the last column)."""
    from envhub.core.errors import ConfigurationError
    from envhub.eval.report import compare_reports, read_report, report_mismatch

    reports = []
    for path in (a, b):
        target = path / "report.json" if path.is_dir() else path
        if not target.is_file():
            raise ConfigurationError(f"{target} does not exist; give an eval folder or its report.json.")
        reports.append(read_report(target))
    ra, rb = reports
    mismatch = report_mismatch(ra, rb)
    if mismatch is not None:
        Console(stderr=True).print(
            f"[yellow]warning[/]: A and B are not over the same tasks ({escape(mismatch)}); "
            "B - A compares different evals.",
            soft_wrap=True,
        )
    table = Table(title="envhub eval compare")
    table.add_column("metric")
    table.add_column(f"A: {ra['env_id']} · {ra['policy']}", justify="right")
    table.add_column(f"B: {rb['env_id']} · {rb['policy']}", justify="right")
    table.add_column("B - A", justify="right")
    for row in compare_reports(ra, rb):
        table.add_row(*(escape(cell) for cell in row))
    Console(width=160).print(table)
