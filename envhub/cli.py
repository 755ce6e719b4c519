"""The ``envhub`` command.

Sub-commands register here; each one is a thin shell over a function in its layer.
"""

from __future__ import annotations

from typing import Annotated

import typer
from rich.console import Console
from rich.table import Table

app = typer.Typer(name="envhub", help="Gymnasium environments for LLM agents.", no_args_is_help=True)
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


@app.command("list")
def list_command() -> None:
    """List every registered env with its splits and whether its data is available."""
    from envhub.envs.registry import list_envs

    table = Table(title="envhub environments")
    for column in ("id", "family", "splits", "data", "description / how to get data"):
        table.add_column(column)
    for row in list_envs():
        data = f"[green]yes[/] ({row.data_source})" if row.data_available else "[red]no[/]"
        text = row.description if row.data_available else f"{row.description}\n[yellow]{row.how_to_get}[/]"
        table.add_row(row.id, row.family, ", ".join(row.splits), data, text)
    Console(width=160).print(table)


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


if __name__ == "__main__":
    app()
