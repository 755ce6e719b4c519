"""One training iteration, measured: the time split, tokens/s, async k=1 against k=0.

Part 1 (``split``) runs ``--iterations`` iterations of ``envhub-train`` in process on the CPU
with the tiny model and reports the median time of each phase (waiting for rollouts, old
logprobs, reference logprobs, the update, the weight sync) and trained tokens/s.

Part 2 (``async``) runs the same work (same iterations, batch, env) with ``--max-staleness 0``
and ``1`` side by side and reports the wall time of each and the speedup.

Part 3 (``sync``) pushes the tiny model's weights into a real vLLM CPU server (``.venv-vllm``)
``--pushes`` times through disk and reports the median of each phase.

Part 4 (``trl``) times one update step (forward, backward, grad clip and AdamW over one
mini-batch of ``--trl-rows`` sequences, in micro-batches of ``--trl-micro``) of envhub's
``Learner`` and of TRL 1.16's ``GRPOTrainer`` on identical data: the same tiny model, the same
prompt and completion ids and advantages, fp32 on the CPU, KL off, entropy off, token-level
clipped loss normalised by the mini-batch's token count (TRL's ``loss_type="dapo"``, which is
verl's ``token-mean``). TRL's side runs its own ``compute_loss`` and ``accelerator.backward``
per micro-batch (``Trainer.training_step`` without ``_prepare_inputs``, which generates in
``GRPOTrainer``) and then its optimizer's step, as its training loop does; generation is not
timed on either side. The two run interleaved, step by step, in one process (needs
``envhub-rl[trl]``).

Part 5 (``algos``) trains GiGPO, GRPO and HGPO with the learning recipe
(``trainers/gigpo_sokoban_onepush.yaml``: one-push rooms, a random-init tiny model, width 128)
over ``--seeds`` seeds each and reports, per run, the first validation (greedy, T = 0, on the
held-out rooms, every ``--algo-val-every`` iterations) at which the success clears the bar of
the learning test (the best observation-blind policy's success, computed exactly, plus 0.3),
and the median per algorithm. A run ends at its bar (``validation.stop_at``) or after
``--algo-iterations``. The recipe's room is one that a room-blind policy cannot win more than
the ceiling of (``envhub.train.blind``), so "iterations to the bar" counts iterations spent
learning to read the room (the GiGPO paper's claim that step-level groups learn faster,
checked at small scale; with one step per episode GiGPO's step groups are its episode groups).

    python bench/train_step.py                      # every part
    python bench/train_step.py --parts split,async --iterations 6
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import prompt_completion_rows, write_result

from envhub.policy.tiny import build_tiny_model
from envhub.train.blind import recipe_blind_ceiling
from envhub.train.config import load_config
from envhub.train.trainer import train

PHASES = (
    "time/rollout_wait_s",
    "time/old_logprobs_s",
    "time/ref_s",
    "time/update_s",
    "time/sync_s",
    "time/iteration_s",
)
#: How far above the blind ceiling the learning test's bar lies (tests/train/test_learning.py).
LEARNING_MARGIN = 0.3


def _config(model: Path, run: Path, args: argparse.Namespace, **over: Any) -> Any:
    base = {
        "env": args.env,
        "algo": "gigpo",
        "model.path": str(model),
        "iterations": args.iterations,
        "output.run_dir": str(run),
        "output.tensorboard": False,
        "rollout.group_size": args.group_size,
        "rollout.batch_tasks": args.batch_tasks,
        "rollout.max_steps": args.max_steps,
        "rollout.max_tokens": args.max_tokens,
        "optim.micro_batch_rows": 32,
        "loss.kl_coef": 0.01,
    }
    base.update(over)
    return load_config(None, base)


def split_rows(model: Path, tmp: Path, args: argparse.Namespace) -> list[dict[str, Any]]:
    result = train(_config(model, tmp / "split", args))
    rows = []
    for key in (*PHASES, "perf/tokens_per_s", "actor/tokens", "rows/count"):
        values = result.series(key)[1:] or result.series(key)  # the first iteration warms up
        rows.append({"part": "split", "metric": key, "median": statistics.median(values), "n": len(values)})
    return rows


def async_rows(model: Path, tmp: Path, args: argparse.Namespace) -> list[dict[str, Any]]:
    rows = []
    for k in (0, 1):
        start = time.perf_counter()
        result = train(_config(model, tmp / f"async{k}", args, max_staleness=k))
        wall = time.perf_counter() - start
        lag = max(result.series("staleness/max") or [0.0])
        rows.append({"part": "async", "max_staleness": k, "wall_s": wall, "max_lag": lag})
    base = rows[0]["wall_s"]
    for row in rows:
        row["speedup"] = base / row["wall_s"]
    return rows


def sync_rows(model: Path, tmp: Path, args: argparse.Namespace) -> list[dict[str, Any]]:
    """Median seconds of a disk push into a real vLLM CPU server (``.venv-vllm``), per phase."""
    import asyncio

    from transformers import AutoModelForCausalLM

    from envhub.policy.vllm_server import VllmServer
    from envhub.train.weight_sync import DiskVllmSync

    python = Path(__file__).resolve().parents[1] / ".venv-vllm" / "bin" / "python"
    weights = AutoModelForCausalLM.from_pretrained(str(model), local_files_only=True)

    async def pushes(base_url: str) -> list[dict[str, float]]:
        sync = DiskVllmSync(base_url, tmp / "weights")
        try:
            return [await sync.push(weights, v) for v in range(1, args.pushes + 1)]
        finally:
            await sync.aclose()

    with VllmServer(python, model, env={"VLLM_SERVER_DEV_MODE": "1"}) as server:
        timings = asyncio.run(pushes(server.base_url))
    return [
        {
            "part": "sync",
            "metric": key,
            "median": statistics.median(t[key] for t in timings),
            "n": len(timings),
        }
        for key in ("save_s", "pause_s", "reload_s", "resume_s", "total_s")
    ]


def trl_rows(tmp: Path, args: argparse.Namespace) -> list[dict[str, Any]]:
    import warnings

    import torch
    from datasets import Dataset
    from transformers import AutoModelForCausalLM
    from trl import GRPOConfig, GRPOTrainer

    from envhub.train.config import LossConfig, ModelConfig, OptimConfig
    from envhub.train.learner import Learner

    model_dir = build_tiny_model(tmp / "tiny-trl", hidden_size=args.hidden_size)
    n, micro, p, c = args.trl_rows, args.trl_micro, args.trl_prompt, args.trl_completion
    g = torch.Generator().manual_seed(0)
    vocab = AutoModelForCausalLM.from_pretrained(str(model_dir)).config.vocab_size
    prompt = torch.randint(3, vocab, (n, p), generator=g)
    completion = torch.randint(3, vocab, (n, c), generator=g)
    advantages = torch.randn(n, generator=g)
    torch.set_num_threads(max(1, torch.get_num_threads()))

    # envhub: one mini-batch of n rows, micro-batches of `micro`, verl's token-mean.
    env_model = AutoModelForCausalLM.from_pretrained(str(model_dir), dtype=torch.float32)
    learner = Learner(
        env_model,
        model_config=ModelConfig(path=str(model_dir), device="cpu"),
        loss=LossConfig(kl_coef=0.0, entropy_coef=0.0, clip_c=None),
        optim=OptimConfig(lr=1e-6, micro_batch_rows=micro, mini_batch_rows=n, shuffle=False),
        temperature=1.0,
    )
    rows = prompt_completion_rows(prompt, completion, advantages)
    old = learner.logprobs(rows)

    # TRL: per-device batch = micro, accumulation over the mini-batch; dapo = global token mean.
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        config = GRPOConfig(
            output_dir=str(tmp / "trl"),
            per_device_train_batch_size=micro,
            gradient_accumulation_steps=n // micro,
            num_generations=2,
            max_completion_length=c,
            beta=0.0,
            loss_type="dapo",
            learning_rate=1e-6,
            max_grad_norm=1.0,
            use_cpu=True,
            bf16=False,
            report_to=[],
            logging_steps=1,
        )
        trainer = GRPOTrainer(
            model=str(model_dir),
            reward_funcs=lambda completions, **_: [0.0] * len(completions),
            args=config,
            train_dataset=Dataset.from_dict({"prompt": ["x"] * n}),
        )
    trainer.create_optimizer()
    trainer.current_gradient_accumulation_steps = n // micro  # set by Trainer's loop otherwise
    trl_model = trainer.model
    trl_model.train()
    slices = [slice(i, i + micro) for i in range(0, n, micro)]
    tokens = torch.tensor(float(n * c))

    def trl_step() -> None:
        for part in slices:
            inputs = {
                "prompt_ids": prompt[part],
                "prompt_mask": torch.ones_like(prompt[part]),
                "completion_ids": completion[part],
                "completion_mask": torch.ones_like(completion[part]),
                "advantages": advantages[part],
                "old_per_token_logps": old[part],
                "num_items_in_batch": tokens,
            }
            # HF Trainer.training_step minus _prepare_inputs (which, in GRPOTrainer, generates).
            with trainer.compute_loss_context_manager():
                loss = trainer.compute_loss(trl_model, inputs, num_items_in_batch=tokens)
            trainer.accelerator.backward(loss)
        torch.nn.utils.clip_grad_norm_(trl_model.parameters(), 1.0)
        trainer.optimizer.step()
        trainer.optimizer.zero_grad(set_to_none=True)

    def envhub_step() -> None:
        learner.update(rows, old)

    times: dict[str, list[float]] = {"envhub": [], "trl": []}
    for step in range(args.trl_steps + 1):
        for name, fn in (("envhub", envhub_step), ("trl", trl_step)):
            start = time.perf_counter()
            fn()
            if step:  # the first step of each warms up
                times[name].append(time.perf_counter() - start)
    medians = {k: statistics.median(v) for k, v in times.items()}
    return [
        {
            "part": "trl",
            "trainer": name,
            "median_step_s": medians[name],
            "tokens_per_s": n * (p + c) / medians[name],
            "n": len(times[name]),
            "ratio_to_trl": medians[name] / medians["trl"],
        }
        for name in ("envhub", "trl")
    ]


def iterations_to(success: list[float], target: float = 0.8, window: int = 3) -> int | None:
    """The first iteration (1-based) at which the mean success of the last ``window`` reaches ``target``."""
    for i in range(window, len(success) + 1):
        if statistics.fmean(success[i - window : i]) >= target:
            return i
    return None


def algo_rows(tmp: Path, args: argparse.Namespace) -> list[dict[str, Any]]:
    recipe = Path(__file__).resolve().parents[1] / "trainers" / "gigpo_sokoban_onepush.yaml"
    model = build_tiny_model(tmp / "tiny-onepush", seed=0, hidden_size=128, vocab_size=512)

    def config(algo: str, seed: int, **over: Any) -> Any:
        return load_config(
            recipe,
            {
                "algo": algo,
                "seed": seed,
                "model.path": str(model),
                "iterations": args.algo_iterations,
                "output.run_dir": str(tmp / f"{algo}-{seed}"),
                "output.tensorboard": False,
                "output.progress": False,
                "validation.every": args.algo_val_every,
                **over,
            },
        )

    ceiling = recipe_blind_ceiling(config("gigpo", 0))
    bar = ceiling.success + LEARNING_MARGIN
    rows = []
    for algo in args.algos.split(","):
        for seed in range(args.seeds):
            start = time.perf_counter()
            result = train(config(algo, seed, **{"validation.stop_at": bar}))
            validation = [(v.iteration, v.metrics["val/success"]) for v in result.validation]
            reached = next((i for i, s in validation if i > 0 and s >= bar), None)
            rows.append(
                {
                    "part": "algos",
                    "algo": algo,
                    "seed": seed,
                    "blind_ceiling": ceiling.success,
                    "bar": bar,
                    "val_iterations_to_bar": reached,
                    "greedy_before": validation[0][1],
                    "greedy_last": validation[-1][1],
                    "iterations": len(result.iterations),
                    "wall_s": time.perf_counter() - start,
                }
            )
    return rows


def algo_medians(rows: list[dict[str, Any]], budget: int) -> list[dict[str, Any]]:
    """Per algorithm: the median iterations to the bar, a run that never cleared it counted as
    past the budget (so a median of "never" says more than half of the runs missed)."""
    out = []
    for algo in dict.fromkeys(r["algo"] for r in rows):
        runs = [r for r in rows if r["algo"] == algo]
        reached = [r["val_iterations_to_bar"] for r in runs]
        median = statistics.median(budget + 1 if i is None else i for i in reached)
        out.append(
            {
                "part": "algos_median",
                "algo": algo,
                "runs": len(runs),
                "cleared": sum(i is not None for i in reached),
                "median_val_iterations_to_bar": None if median > budget else median,
            }
        )
    return out


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--parts",
        default="split,async,sync,trl,algos",
        help="comma-separated: split, async, sync, trl, algos",
    )
    parser.add_argument("--trl-rows", type=int, default=32, help="sequences per update step (part trl)")
    parser.add_argument("--trl-micro", type=int, default=8, help="sequences per micro-batch (part trl)")
    parser.add_argument("--trl-prompt", type=int, default=256, help="prompt tokens per sequence (part trl)")
    parser.add_argument("--trl-completion", type=int, default=128, help="completion tokens (part trl)")
    parser.add_argument("--trl-steps", type=int, default=5, help="timed update steps per trainer (part trl)")
    parser.add_argument("--seeds", type=int, default=5, help="seeds per algorithm (part algos)")
    parser.add_argument("--algos", default="gigpo,grpo,hgpo", help="algorithms of part algos")
    parser.add_argument(
        "--algo-iterations", type=int, default=150, help="most iterations per run (part algos)"
    )
    parser.add_argument(
        "--algo-val-every", type=int, default=10, help="greedy validation every N iterations (part algos)"
    )
    parser.add_argument("--env", default="envhub/SearchQA-v0")
    parser.add_argument("--iterations", type=int, default=6)
    parser.add_argument("--group-size", type=int, default=4)
    parser.add_argument("--batch-tasks", type=int, default=4)
    parser.add_argument("--max-steps", type=int, default=3)
    parser.add_argument("--max-tokens", type=int, default=32)
    parser.add_argument("--hidden-size", type=int, default=128)
    parser.add_argument("--pushes", type=int, default=5, help="weight pushes into vLLM (part sync)")
    parser.add_argument(
        "--quick",
        action="store_true",
        help="smoke run: every part at its smallest (one push, one seed, 2 iterations, short sequences)",
    )
    args = parser.parse_args()
    if args.quick:
        args.iterations, args.batch_tasks, args.group_size, args.max_steps = 2, 2, 2, 2
        args.trl_rows, args.trl_micro, args.trl_prompt, args.trl_completion, args.trl_steps = 4, 2, 32, 16, 1
        args.seeds, args.algo_iterations, args.pushes, args.max_tokens = 1, 2, 1, 8
        args.algo_val_every = 1
    parts = set(args.parts.split(","))
    console = Console(width=120)
    rows: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        model = build_tiny_model(tmp / "tiny", hidden_size=args.hidden_size)
        if "split" in parts:
            split = split_rows(model, tmp, args)
            table = Table(title=f"one iteration, {args.env}, tiny model (hidden {args.hidden_size}), CPU")
            table.add_column("metric")
            table.add_column("median", justify="right")
            for r in split:
                table.add_row(r["metric"], f"{r['median']:.3f}")
            console.print(table)
            rows += split
        if "async" in parts:
            timing = async_rows(model, tmp, args)
            table = Table(title=f"the same {args.iterations} iterations: synchronous vs async")
            for column in ("max_staleness", "wall s", "max lag", "speedup"):
                table.add_column(column, justify="right")
            for r in timing:
                table.add_row(
                    str(r["max_staleness"]),
                    f"{r['wall_s']:.1f}",
                    f"{r['max_lag']:.0f}",
                    f"{r['speedup']:.2f}x",
                )
            console.print(table)
            rows += timing
        if "sync" in parts:
            pushes = sync_rows(model, tmp, args)
            table = Table(title=f"weight push into vLLM (CPU) through disk, median of {args.pushes}")
            table.add_column("phase")
            table.add_column("median s", justify="right")
            for r in pushes:
                table.add_row(r["metric"], f"{r['median']:.3f}")
            console.print(table)
            rows += pushes
        if "trl" in parts:
            trl = trl_rows(tmp, args)
            table = Table(
                title=f"one update step, {args.trl_rows} x ({args.trl_prompt} + {args.trl_completion}) "
                f"tokens, micro-batch {args.trl_micro}, tiny model (hidden {args.hidden_size}), CPU"
            )
            for column in ("trainer", "median step s", "tokens/s", "vs TRL"):
                table.add_column(column, justify="right")
            for r in trl:
                table.add_row(
                    r["trainer"],
                    f"{r['median_step_s']:.3f}",
                    f"{r['tokens_per_s']:,.0f}",
                    f"{r['ratio_to_trl']:.2f}x",
                )
            console.print(table)
            rows += trl
        if "algos" in parts:
            runs = algo_rows(tmp, args)
            ceiling, bar = runs[0]["blind_ceiling"], runs[0]["bar"]
            table = Table(
                title=f"one-push Sokoban from a random-init tiny model: greedy held-out success to "
                f"{bar:.3f} (blind ceiling {ceiling:.3f} + {LEARNING_MARGIN})"
            )
            for column in (
                "algo",
                "seed",
                "to the bar (val)",
                "greedy before",
                "greedy last",
                "iterations",
                "wall s",
            ):
                table.add_column(column, justify="right")
            for r in runs:
                reached = r["val_iterations_to_bar"]
                table.add_row(
                    r["algo"],
                    str(r["seed"]),
                    "never" if reached is None else str(reached),
                    f"{r['greedy_before']:.3f}",
                    f"{r['greedy_last']:.3f}",
                    str(r["iterations"]),
                    f"{r['wall_s']:.0f}",
                )
            console.print(table)
            medians = algo_medians(runs, args.algo_iterations)
            table = Table(title=f"median iterations to the bar over {args.seeds} seeds")
            for column in ("algo", "cleared", "median to the bar"):
                table.add_column(column, justify="right")
            for m in medians:
                median = m["median_val_iterations_to_bar"]
                table.add_row(
                    m["algo"], f"{m['cleared']}/{m['runs']}", "never" if median is None else f"{median:g}"
                )
            console.print(table)
            rows += runs + medians
    # One JSON per set of parts, so a run of one part does not overwrite another's results.
    name = "train_step-" + "-".join(sorted(parts))
    print(f"wrote {write_result(name, vars(args), rows)}")


if __name__ == "__main__":
    main()
