"""Dr. MAS on Search-QA, two tiny models from a warm start: does the team beat the blind ceiling?

``trainers/drmas_search.yaml`` end to end on the CPU, as its header runs it:

1. the recipe's world: ``envhub data search generate`` with the sizes the recipe names (its
   ``rollout.env_kwargs.data_dir``), unless it is there already;
2. two tiny models (``envhub model tiny``, seeds 0 and 1: the shared one for the search and
   answer agents, the verifier's own);
3. the warm start (``envhub.train.warm``): each model imitates envhub's scripted team on the
   train split;
4. two RL runs from the warmed models, each the recipe's iterations: agent-wise advantages (the
   recipe, the authors' ``group_by_agent_id``) and the global baseline
   (``trainers/drmas_search_global.yaml``: one group per task over every agent's calls, the
   trajectory's mean score);

and reports greedy success on the held-out tasks (iteration 0 is the warm start's own), the
observation-blind ceiling over those tasks (``envhub.train.blind``), and each agent's gradient
norm per iteration (median, max, and max over median: the spikes the paper is about).

    python bench/drmas_search.py           # the recipe's sizes (about 90 minutes on 2 cores)
    python bench/drmas_search.py --quick   # a small world, 8 tasks, 1 epoch, 1 iteration
    python bench/drmas_search.py --work W --warm W/warm   # step 3 from an earlier run's models

``--warm DIR`` reuses the models an earlier warm start of this recipe wrote (``envhub-train
warm-start --out DIR``, or this bench's ``--work`` folder): each model's ``envhub_warm_start.json``
must hold the recipe's ``warm_start`` settings, and its rows, losses and seconds are reported.

Writes ``docs/results/drmas_search.json`` (``--quick``: ``bench/results/``) and prints a table.
"""

from __future__ import annotations

import argparse
import asyncio
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench._common import machine, write_result

RECIPE = ROOT / "trainers" / "drmas_search.yaml"
#: The two RL runs: the recipe (agent-wise) and the authors' global baseline
#: (``group_by_agent_id=False``), which differs from it only in its advantage keys.
VARIANTS: dict[str, Path] = {
    "agent-wise": RECIPE,
    "global": ROOT / "trainers" / "drmas_search_global.yaml",
}
#: The recipe's world (its header's ``envhub data search generate`` line) and the quick run's.
WORLD = {"passages": 6000, "train": 12000, "test": 150}
QUICK_WORLD = {"passages": 200, "train": 40, "test": 8}
QUICK = {
    "warm_start.tasks": 8,
    "warm_start.epochs": 1,
    "iterations": 1,
    "rollout.batch_tasks": 4,
    "validation.tasks": 4,
    "validation.every": 1,
}


def _norms(series: list[float]) -> dict[str, Any]:
    if not series:
        return {"iterations": 0}
    median = statistics.median(series)
    return {
        "iterations": len(series),
        "median": median,
        "max": max(series),
        "max_over_median": max(series) / median if median > 0 else None,
        "series": series,
    }


def _world(config: Any, *, quick: bool) -> None:
    """Generate the recipe's world (``rollout.env_kwargs.data_dir``) unless it is there."""
    from envhub.envs.search.fixtures import write_world

    folder = Path(config.rollout.env_kwargs["data_dir"])
    if (folder / "corpus.jsonl").is_file():
        return
    sizes = QUICK_WORLD if quick else WORLD
    write_world(folder, n_passages=sizes["passages"], n_train=sizes["train"], n_test=sizes["test"], seed=9)


def _shown(path: str | Path, work: Path) -> str:
    """``path`` as the results show it: ``WORK/...`` under ``--work``, no machine's folder."""
    try:
        return str(Path("WORK") / Path(path).resolve().relative_to(work.resolve()))
    except ValueError:
        return Path(path).name


def _reused_warm_start(recipe: Any, folder: Path, work: Path) -> tuple[dict[str, str], dict[str, Any]]:
    """The overrides and the report row of the warmed models an earlier warm start left in ``folder``.

    Raises:
        ValueError: a model's folder, weights or provenance is missing or unreadable, or it was
            warmed with other ``warm_start`` settings or another seed than the recipe gives it.
    """
    import json

    from envhub.train.config import SHARED_POLICY
    from envhub.train.warm import PROVENANCE, model_sources

    names = list(model_sources(recipe))  # in the warm start's order: model i has seed recipe.seed + i
    overrides: dict[str, str] = {}
    models: list[dict[str, Any]] = []
    for index, name in enumerate(names):
        record_path = folder / name / PROVENANCE
        where = f"--warm {folder}: {name}/{PROVENANCE}"
        if not record_path.is_file() or not (folder / name / "config.json").is_file():
            raise ValueError(
                f"{where} or the model beside it is missing; run envhub-train warm-start --out {folder}"
            )
        try:
            record = json.loads(record_path.read_text(encoding="utf-8"))
            settings, seed = record["settings"], record["seed"]
            row = {key: record[key] for key in ("rows", "epochs", "losses")}
        except (ValueError, KeyError, TypeError) as exc:  # not JSON, not an object, a key missing
            raise ValueError(
                f"{where} is not a warm start's provenance ({type(exc).__name__}: {exc})"
            ) from exc
        if settings != recipe.warm_start.model_dump() or seed != recipe.seed + index:
            raise ValueError(f"{where}: warmed with other warm_start settings or seed than {RECIPE.name}'s")
        key = "model.path" if name == SHARED_POLICY else f"agents.{name}.model.path"
        overrides[key] = str(folder / name)
        extra = {k: record.get(k) for k in ("seed", "seconds", "demonstrations")}
        extra["source"] = _shown(record["source"], work) if isinstance(record.get("source"), str) else None
        models.append({"name": name, **row, **extra})
    return overrides, {"run": "warm start", "reused": _shown(folder, work), "models": models}


def _validation(result: Any) -> list[dict[str, Any]]:
    """Greedy held-out success at each validation, and each role's calls per episode (where the
    verifier routed the team: a search then an answer is 2 verifier calls, 1 search, 1 answer)."""
    return [
        {
            "iteration": v.iteration,
            "success": v.metrics["val/success"],
            "calls": {
                k.split("/")[-1]: v.metrics[k] for k in sorted(v.metrics) if k.startswith("val/calls/")
            },
        }
        for v in result.validation
    ]


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--quick", action="store_true", help="a small world, 8 tasks, 1 epoch, 1 iteration")
    parser.add_argument(
        "--work",
        default=None,
        help="where the world, models and runs go (default: a temp dir); its runs/agent-wise and "
        "runs/global are replaced, and its warm/ too unless --warm is given",
    )
    parser.add_argument("--variants", default=",".join(VARIANTS))
    parser.add_argument(
        "--warm", default=None, help="reuse the warmed models an earlier warm start of the recipe wrote here"
    )
    args = parser.parse_args()
    unknown = set(args.variants.split(",")) - set(VARIANTS)
    if unknown:
        parser.error(f"unknown --variants {sorted(unknown)}; choose from {sorted(VARIANTS)}")

    from envhub.train.blind import recipe_blind_ceiling
    from envhub.train.config import load_config
    from envhub.train.trainer import Trainer

    started = machine()
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(args.work) if args.work else Path(tmp)
        work.mkdir(parents=True, exist_ok=True)
        base: dict[str, Any] = {
            "model.path": str(work / "tiny"),
            "agents.verifier.model.path": str(work / "tiny-verifier"),
            "rollout.env_kwargs.data_dir": str(work / "search-world"),
            "output.tensorboard": False,
            "output.progress": False,
            **(QUICK if args.quick else {}),
        }
        recipe = load_config(RECIPE, base)
        reused: tuple[dict[str, str], dict[str, Any]] | None = None
        if args.warm:  # refused before the world and the ceiling are made
            try:
                reused = _reused_warm_start(recipe, Path(args.warm), work)
            except ValueError as exc:
                parser.error(str(exc))
        _world(recipe, quick=args.quick)
        folder = Path(recipe.rollout.env_kwargs["data_dir"])
        # What was played: a world already under --work is reused whatever its sizes.
        world = {
            name: sum(1 for _ in (folder / f"{file}.jsonl").open(encoding="utf-8"))
            for name, file in (("passages", "corpus"), ("train", "train"), ("test", "test"))
        }
        ceiling = recipe_blind_ceiling(recipe)
        print(f"blind ceiling: {ceiling.describe()}", flush=True)
        warmed, warm_row = reused if reused is not None else _warm_start(recipe, work)
        rows: list[dict[str, Any]] = [warm_row]
        for name in args.variants.split(","):
            run_dir = work / "runs" / name
            if run_dir.is_symlink():
                run_dir.unlink()
            shutil.rmtree(run_dir, ignore_errors=True)  # a fresh run, never a resumed one
            config = load_config(
                VARIANTS[name], {**base, **warmed, "output.run_dir": str(run_dir), "output.resume": False}
            )
            t0 = time.perf_counter()
            result = asyncio.run(Trainer(config).run())
            roles = sorted(
                {
                    k.split("/")[1]
                    for it in result.iterations
                    for k in it.metrics
                    if k.startswith("agent/") and k.endswith("/grad_norm")
                }
            )
            rows.append(
                {
                    "run": name,
                    "recipe": str(VARIANTS[name].relative_to(ROOT)),
                    "models": {
                        "shared": _shown(config.model.path, work),
                        **{role: _shown(spec.model.path, work) for role, spec in config.agents.items()},
                    },
                    "advantage": config.advantage,
                    "validation": _validation(result),
                    "blind_ceiling": ceiling.success,
                    "beats_ceiling": result.validation[-1].metrics["val/success"] > ceiling.success,
                    "training_success": result.series("rollout/success"),
                    "grad_norm": {role: _norms(result.series(f"agent/{role}/grad_norm")) for role in roles},
                    "seconds": time.perf_counter() - t0,
                }
            )
            print(f"{name}: greedy held-out success {_validation(result)}", flush=True)
    params = {
        "recipe": str(RECIPE.relative_to(ROOT)),
        "quick": args.quick,
        "world": world,
    }
    params["blind_ceiling"] = ceiling.describe()
    path = write_result("drmas_search", params, rows, started=started)
    _table(rows)
    print(f"wrote {path}")


def _warm_start(recipe: Any, work: Path) -> tuple[dict[str, str], dict[str, Any]]:
    """Step 2 and 3: two tiny models, each warmed on the scripted team's calls."""
    from envhub.policy.tiny import build_tiny_model
    from envhub.train.warm import warm_start

    build_tiny_model(work / "tiny", seed=0)
    build_tiny_model(work / "tiny-verifier", seed=1)
    t0 = time.perf_counter()
    warm = warm_start(
        recipe,
        work / "warm",
        on_epoch=lambda name, epoch, loss: print(
            f"warm {name}: epoch {epoch + 1}, loss {loss:.4f}", flush=True
        ),
    )
    row = {
        "run": "warm start",
        "episodes": warm.episodes,
        "won": warm.won,
        "demonstrations": warm.demonstrations,
        "models": [
            {
                "name": p.name,
                "rows": p.rows,
                "epochs": len(p.losses),
                "losses": p.losses,
                "seconds": p.seconds,
            }
            for p in warm.policies
        ],
        "seconds": time.perf_counter() - t0,
    }
    return warm.overrides, row


def _table(rows: list[dict[str, Any]]) -> None:
    print(
        f"{'run':<12} {'held-out success (iteration: greedy)':<44} {'ceiling':>8} "
        "agent grad norm median / max (max/median)"
    )
    for row in rows[1:]:
        looks = ", ".join(f"{v['iteration']}: {v['success']:.3f}" for v in row["validation"])
        norms = "; ".join(
            f"{role} {n['median']:.3g} / {n['max']:.3g} ({(n['max_over_median'] or 0):.1f}x)"
            for role, n in row["grad_norm"].items()
            if n["iterations"]
        )
        print(f"{row['run']:<12} {looks:<44} {row['blind_ceiling']:>8.3f} {norms}")


if __name__ == "__main__":
    main()
