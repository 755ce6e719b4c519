"""``envhub-train``: train a policy with GiGPO, HGPO or GRPO.

Every option is also a key of the YAML recipe (``--config trainers/NAME.yaml``); options given
on the command line override the recipe, and ``--set section.key=value`` reaches any key::

    envhub-train --algo gigpo --env envhub/Sokoban-v0 --model runs/tiny --config trainers/gigpo_sokoban.yaml
    envhub-train --config trainers/gigpo_alfworld.yaml --set loss.kl_coef=0 --iterations 10

Under ``torchrun --nproc_per_node N envhub-train ...`` the run is data parallel over groups,
with DDP or, for models that do not fit one device, FSDP2 (``--strategy fsdp2``).

``envhub-train export --checkpoint DIR --out DIR`` writes a checkpoint (a LoRA run's adapter
merged into its base) as a plain Hugging Face model directory that vLLM and transformers serve.

``envhub-train blind-ceiling --config trainers/NAME.yaml [--split S] [--tasks N]`` prints the
best observation-blind policy's success over the recipe's validation tasks (or the first ``N``
of split ``S``), computed exactly (:mod:`envhub.train.blind`), without training.

``envhub-train warm-start --config trainers/NAME.yaml --out DIR`` trains each model of the recipe
on scripted demonstrations (its ``warm_start`` section, :mod:`envhub.train.warm`) and writes
``DIR/<name>/`` for each; it prints the options that start a run from them.
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from envhub.core.errors import EnvhubError

if TYPE_CHECKING:
    from envhub.train.config import TrainConfig

__all__ = [
    "app",
    "blind_app",
    "blind_command",
    "export_app",
    "export_command",
    "main",
    "train_command",
    "warm_app",
    "warm_command",
]

app = typer.Typer(
    name="envhub-train",
    help="Train an LLM agent on an envhub env with GiGPO, HGPO or GRPO.",
    add_completion=False,
    pretty_exceptions_enable=False,
)

_CURVE_KEYS = ("rollout/success", "rollout/reward", "actor/kl", "actor/entropy", "time/iteration_s")


def _recipe(path: str | None, options: dict[str, Any], sets: list[str] | None) -> TrainConfig:
    """The recipe with the options given (None: not given), then each ``--set`` in order (a
    ``null`` there puts a null in the key)."""
    from envhub.core.errors import ConfigurationError
    from envhub.rollout.jobs import parse_override
    from envhub.train.config import load_config

    for text in sets or []:
        key, sep, raw = text.partition("=")
        if sep and not raw.strip():
            # An empty value (an unset shell variable) must not quietly null the key.
            raise ConfigurationError(
                f"--set {text!r} has no value; write --set {key.strip()}=null to unset the key.",
                override=text,
            )
    return load_config(path, options, sets=[parse_override(text) for text in sets or []])


def _print_curve(console: Console, rows: list[dict[str, Any]], title: str) -> None:
    table = Table(title=title)
    table.add_column("iteration", justify="right")
    keys = [k for k in _CURVE_KEYS if any(k in r for r in rows)]
    for key in keys:
        table.add_column(key, justify="right")
    for row in rows:
        cells = [str(row["iteration"])]
        for key in keys:
            value = row.get(key)
            cells.append("-" if value is None else f"{value:.3f}")
        table.add_row(*cells)
    console.print(table)


def _print_learning_check(console: Console, cfg: Any, result: Any) -> None:
    """The held-out success beside the best observation-blind policy's (``validation.blind_ceiling``)."""
    from envhub.train.blind import recipe_blind_ceiling

    ceiling = recipe_blind_ceiling(cfg)
    v = cfg.validation
    table = Table(title=f"learning check: {v.tasks} held-out {v.split} tasks, T = {v.temperature:g}")
    table.add_column("policy")
    table.add_column("success", justify="right")
    table.add_row(
        f"best observation-blind ({escape(' '.join(ceiling.sequence))}; exact)", f"{ceiling.success:.3f}"
    )
    for it in result.validation:
        table.add_row(f"learned, iteration {it.iteration}", f"{it.metrics.get('val/success', 0.0):.3f}")
    console.print(table)
    if result.validation:
        margin = result.validation[-1].metrics.get("val/success", 0.0) - ceiling.success
        console.print(f"learned minus blind ceiling: {margin:+.3f} (the learning test asks for >= +0.300)")


@app.command()
def train_command(
    config: Annotated[
        str | None, typer.Option("--config", "-c", help="A YAML recipe (trainers/*.yaml).")
    ] = None,
    algo: Annotated[str | None, typer.Option(help="gigpo | hgpo | grpo | graphgpo.")] = None,
    env: Annotated[str | None, typer.Option(help="Env id or family (e.g. envhub/Sokoban-v0).")] = None,
    model: Annotated[str | None, typer.Option(help="Local HF model directory (model.path).")] = None,
    iterations: Annotated[int | None, typer.Option(help="Training iterations.")] = None,
    run_dir: Annotated[
        str | None, typer.Option(help="Where metrics and checkpoints go (output.run_dir).")
    ] = None,
    seed: Annotated[int | None, typer.Option(help="Run seed.")] = None,
    max_staleness: Annotated[
        int | None, typer.Option(help="Policy versions a group may lag (0: synchronous).")
    ] = None,
    group_size: Annotated[int | None, typer.Option(help="Rollouts per task (rollout.group_size).")] = None,
    batch_tasks: Annotated[
        int | None, typer.Option(help="Tasks per iteration (rollout.batch_tasks).")
    ] = None,
    lr: Annotated[float | None, typer.Option(help="Learning rate (optim.lr).")] = None,
    envs: Annotated[
        list[str] | None, typer.Option(help="Env server URL (repeat for replicas); default: in-process envs.")
    ] = None,
    queue: Annotated[str | None, typer.Option(help="'memory' or a redis:// URL (rollout.queue).")] = None,
    rollout_service: Annotated[
        str | None, typer.Option(help="Submit rollouts to this `envhub serve-rollouts` URL.")
    ] = None,
    policy_url: Annotated[
        str | None, typer.Option(help="Generate with this OpenAI-compatible server (vLLM).")
    ] = None,
    device: Annotated[str | None, typer.Option(help="auto | cpu | cuda[:i] (model.device).")] = None,
    strategy: Annotated[
        str | None, typer.Option(help="Under torchrun: ddp | fsdp2 (sharded weights; model.strategy).")
    ] = None,
    set_: Annotated[
        list[str] | None, typer.Option("--set", help="Any recipe key: --set loss.kl_coef=0 (repeatable).")
    ] = None,
    progress: Annotated[bool, typer.Option(help="Live progress on a terminal.")] = True,
) -> None:
    """Train; print the learning curve; write metrics.jsonl, TensorBoard files and checkpoints.

    `envhub-train export --checkpoint DIR --out DIR` writes a checkpoint as a servable model.
    """
    from envhub.train.progress import TrainProgress
    from envhub.train.trainer import train

    options: dict[str, Any] = {
        "algo": algo,
        "env": env,
        "model.path": model,
        "iterations": iterations,
        "output.run_dir": run_dir,
        "seed": seed,
        "max_staleness": max_staleness,
        "rollout.group_size": group_size,
        "rollout.batch_tasks": batch_tasks,
        "optim.lr": lr,
        "rollout.env_urls": envs or None,
        "rollout.queue": queue,
        "rollout.rollout_service": rollout_service,
        "rollout.policy_url": policy_url,
        "rollout.generation": "openai" if policy_url else None,
        "model.device": device,
        "model.strategy": strategy,
    }
    console = Console(stderr=False)
    try:
        cfg = _recipe(config, options, set_)
        with TrainProgress(cfg, console=console, live=progress and console.is_terminal) as display:
            result = train(cfg, on_iteration=display.update)
    except EnvhubError as exc:
        # escape(): a message such as "pip install 'envhub-rl[client]'" is text, not Rich markup.
        Console(stderr=True).print(f"[red]error[/] ({exc.code}): {escape(exc.message)}", soft_wrap=True)
        raise typer.Exit(2) from None
    from envhub.train.plot import plot_run
    from envhub.train.tracking import read_metrics

    rows = read_metrics(result.run_dir)
    _print_curve(console, rows, f"{cfg.algo} on {cfg.env}: learning curve")
    if cfg.validation.blind_ceiling:
        _print_learning_check(console, cfg, result)
    png = plot_run(result.run_dir)
    console.print(f"run directory: {result.run_dir}  (curves: {png})")


export_app = typer.Typer(
    name="envhub-train export",
    help="Write a checkpoint as a servable Hugging Face model directory (LoRA adapters merged).",
    add_completion=False,
    pretty_exceptions_enable=False,
)


@export_app.command()
def export_command(
    checkpoint: Annotated[
        str, typer.Option(help="RUN_DIR/checkpoints/iter_<k>, or a run directory (its latest checkpoint).")
    ],
    out: Annotated[str, typer.Option(help="The model directory to write (absent or empty).")],
    base: Annotated[
        str | None,
        typer.Option(help="A LoRA checkpoint's base model directory, if it moved since training."),
    ] = None,
) -> None:
    """Merge a LoRA checkpoint into its base (or copy a full one) as a plain HF model directory."""
    from envhub.train.export import export_checkpoint

    try:
        path = export_checkpoint(checkpoint, out, base=base)
    except EnvhubError as exc:
        Console(stderr=True).print(f"[red]error[/] ({exc.code}): {escape(exc.message)}", soft_wrap=True)
        raise typer.Exit(2) from None
    Console().print(f"exported {escape(checkpoint)} to {escape(str(path))}")


blind_app = typer.Typer(
    name="envhub-train blind-ceiling",
    help="The best observation-blind policy's success over a recipe's tasks (exact; no training).",
    add_completion=False,
    pretty_exceptions_enable=False,
)


@blind_app.command()
def blind_command(
    config: Annotated[str, typer.Option("--config", "-c", help="A YAML recipe (trainers/*.yaml).")],
    split: Annotated[
        str | None, typer.Option(help="The split (default: the recipe's validation.split).")
    ] = None,
    tasks: Annotated[
        int | None, typer.Option(min=1, help="The split's first N tasks (default: validation.tasks).")
    ] = None,
    set_: Annotated[
        list[str] | None, typer.Option("--set", help="Any recipe key: --set rollout.max_steps=2.")
    ] = None,
) -> None:
    """Print the best blind policy over the recipe's validation tasks (envhub.train.blind)."""
    from envhub.train.blind import recipe_blind_ceiling

    try:
        # The ceiling reads the env and the tasks, never the model: any path satisfies the recipe.
        cfg = _recipe(config, {"model.path": "unused"}, set_)
        ceiling = recipe_blind_ceiling(cfg, split=split, tasks=tasks)
    except EnvhubError as exc:
        Console(stderr=True).print(f"[red]error[/] ({exc.code}): {escape(exc.message)}", soft_wrap=True)
        raise typer.Exit(2) from None
    Console().print(
        f"{escape(cfg.env)}, split {escape(split or cfg.validation.split)}: {escape(ceiling.describe())}"
    )


warm_app = typer.Typer(
    name="envhub-train warm-start",
    help="Train each model of a recipe on scripted demonstrations (its warm_start section).",
    add_completion=False,
    pretty_exceptions_enable=False,
)


@warm_app.command()
def warm_command(
    config: Annotated[str, typer.Option("--config", "-c", help="A YAML recipe with a warm_start section.")],
    out: Annotated[str, typer.Option(help="Where each warmed model's directory (OUT/<name>) goes.")],
    model: Annotated[str | None, typer.Option(help="The top-level model to start from (model.path).")] = None,
    set_: Annotated[
        list[str] | None, typer.Option("--set", help="Any recipe key: --set warm_start.epochs=2.")
    ] = None,
) -> None:
    """Play the scripted demonstrations, train every model on its roles' calls, write them to OUT."""
    from envhub.train.warm import warm_start

    console = Console()
    try:
        cfg = _recipe(config, {"model.path": model}, set_)
        result = warm_start(
            cfg,
            out,
            on_epoch=lambda name, epoch, loss: console.print(f"{name}: epoch {epoch + 1}, loss {loss:.4f}"),
        )
    except EnvhubError as exc:
        Console(stderr=True).print(f"[red]error[/] ({exc.code}): {escape(exc.message)}", soft_wrap=True)
        raise typer.Exit(2) from None
    console.print(
        f"demonstrations: {result.demonstrations} calls from {result.won} won of {result.episodes} episodes"
    )
    table = Table(title="warm start")
    for column in (
        "model",
        "from",
        "rows",
        "response tokens",
        "loss (first -> last epoch)",
        "seconds",
        "wrote",
    ):
        table.add_column(column)
    for p in result.policies:
        table.add_row(
            p.name,
            escape(p.source),
            str(p.rows),
            str(p.tokens),
            f"{p.losses[0]:.4f} -> {p.losses[-1]:.4f}",
            f"{p.seconds:.0f}",
            escape(str(p.path)),
        )
    console.print(table)
    flags = " ".join(
        f"--model {v}" if k == "model.path" else f"--set {k}={v}" for k, v in result.overrides.items()
    )
    console.print(f"start a run from them: envhub-train --config {escape(config)} {escape(flags)}")


def main() -> None:
    try:
        if sys.argv[1:2] == ["export"]:  # `envhub-train export ...`; anything else trains
            export_app(args=sys.argv[2:], prog_name="envhub-train export")
        elif sys.argv[1:2] == ["blind-ceiling"]:
            blind_app(args=sys.argv[2:], prog_name="envhub-train blind-ceiling")
        elif sys.argv[1:2] == ["warm-start"]:
            warm_app(args=sys.argv[2:], prog_name="envhub-train warm-start")
        else:
            app()
    except KeyboardInterrupt:  # pragma: no cover - interactive
        sys.exit(130)


if __name__ == "__main__":
    main()
