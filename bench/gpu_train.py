"""A few training iterations of a Qwen2.5-0.5B-shaped model on a GPU in bf16: tokens/s and peak
GPU memory of envhub's learner against the same step in TRL's ``GRPOTrainer``.

The model has Qwen2.5-0.5B's shape (24 layers, hidden 896, MLP 4864, 14 heads, 2 KV heads, tied
151,936-token vocabulary) with random weights (``bench/train_memory.py``'s ``build_model``). The
rows are ``--rows`` sequences of ``--prompt`` + ``--completion`` random tokens, trained in
micro-batches of ``--micro`` rows, one optimizer step per iteration, KL and entropy off, the
token-mean clipped loss (TRL's ``loss_type="dapo"``), AdamW at lr 1e-6, grad clip 1.0.

Both trainers keep float32 master weights and compute under bf16 autocast (``--dtype``):

- envhub: ``load_config`` -> the trainer's own model loader (float32 weights on the device,
  ``model.gradient_checkpointing``) -> ``Learner`` with ``model.dtype``, as ``Trainer`` builds
  it. An iteration is ``Learner.logprobs`` (the old log-probs: one forward without gradient)
  then ``Learner.update``; both are timed, apart and together.
- TRL: ``GRPOTrainer`` built from the model directory (TRL loads it in float32) with
  ``bf16=True``; the model is prepared by its accelerator as ``Trainer.train`` does (that wraps
  its forward in bf16 autocast) and activation checkpointing is switched as ``Trainer.train``
  switches it. An iteration is ``compute_loss`` and ``accelerator.backward`` per micro-batch,
  grad clip and its optimizer's step (``bench/train_step.py``'s TRL step). It has no
  old-log-prob pass: on-policy with one iteration per batch, TRL takes the ratio against the
  detached new log-probs.

Each trainer runs in its own process. The first ``--warmup`` iterations are not measured (they
allocate AdamW's state and pick kernels); then the peak memory counter is reset and
``--iterations`` iterations are timed (``torch.cuda.synchronize`` around each). Peak GPU memory is
``torch.cuda.max_memory_allocated`` over the timed iterations (weights, gradients, AdamW state and
activations; the allocator's reserved peak is kept beside it). The output names the device, the
dtype each side actually computed in (the output dtype of the first decoder layer's MLP, seen by
a hook) and its master weights' dtype, and the torch/transformers/trl/accelerate versions.

    bench/gpu_train.sh                # on a CUDA GPU: 16 x (1024 + 1024) tokens, 24 layers
    bench/gpu_train.sh --quick        # on the CPU: 4 x (64 + 64), 1 layer, vocabulary 16,384

Without a CUDA device and without ``--quick`` it exits 2. Writes ``docs/results/gpu_train.json``
(``--quick``: ``bench/results/``) and prints a table.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench._common import machine, prompt_completion_rows, write_result
from bench.train_memory import VOCAB, build_model

VARIANTS = ("envhub", "trl")
NO_GPU = (
    "bench/gpu_train.sh needs a CUDA GPU (torch.cuda.is_available() is False here); "
    "--quick runs a tiny shape on the CPU instead."
)
#: Exit status without a GPU (and without --quick): not a failure of the code, a missing device.
EXIT_NO_GPU = 2


def _status(field: str) -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1]) * 1024
    raise RuntimeError(field)


def software(device: Any) -> dict[str, str]:
    """The device and library versions the numbers come from."""
    import platform

    import accelerate
    import torch
    import transformers
    import trl

    if device.type == "cuda":
        name = torch.cuda.get_device_name(device)
    else:
        cpuinfo = Path("/proc/cpuinfo")
        models = [
            line.split(":", 1)[1].strip()
            for line in (cpuinfo.read_text().splitlines() if cpuinfo.exists() else [])
            if line.startswith("model name")
        ]
        name = f"{models[0]} x {len(models)}" if models else platform.processor() or platform.machine()
    return {
        "device": str(device),
        "device_name": name,
        "torch": torch.__version__,
        "cuda": torch.version.cuda or "",
        "transformers": transformers.__version__,
        "trl": trl.__version__,
        "accelerate": accelerate.__version__,
    }


class _Memory:
    """Peak memory over a window: GPU allocations on CUDA, resident set size on the CPU."""

    def __init__(self, device: Any) -> None:
        self.cuda = device.type == "cuda"
        self.before = 0

    def reset(self) -> None:
        import torch

        if self.cuda:
            torch.cuda.synchronize()
            torch.cuda.reset_peak_memory_stats()
            self.before = torch.cuda.memory_allocated()
        else:
            Path("/proc/self/clear_refs").write_text("5")  # peak RSS (VmHWM) := current RSS
            self.before = _status("VmRSS")

    def read(self) -> dict[str, Any]:
        import torch

        if self.cuda:
            torch.cuda.synchronize()
            return {
                "memory": "cuda max_memory_allocated",
                "before_gib": self.before / 2**30,
                "peak_gib": torch.cuda.max_memory_allocated() / 2**30,
                "peak_reserved_gib": torch.cuda.max_memory_reserved() / 2**30,
            }
        return {
            "memory": "cpu peak RSS (VmHWM)",
            "before_gib": self.before / 2**30,
            "peak_gib": _status("VmHWM") / 2**30,
            "peak_reserved_gib": None,
        }


def _sync(device: Any) -> None:
    import torch

    if device.type == "cuda":
        torch.cuda.synchronize()


def _compute_dtype_probe(model: Any) -> dict[str, str]:
    """Record the output dtype of the model's first MLP (what autocast really computed in)."""
    seen: dict[str, str] = {}
    mlp = next(m for m in model.modules() if type(m).__name__.endswith("MLP"))

    def hook(_module: Any, _inputs: Any, output: Any) -> None:
        seen.setdefault("dtype", str(output.dtype).removeprefix("torch."))

    mlp.register_forward_hook(hook)
    return seen


def _masters(model: Any) -> str:
    return ",".join(
        sorted({str(p.dtype).removeprefix("torch.") for p in model.parameters() if p.requires_grad})
    )


def envhub_trainer(
    model_dir: Path, device: Any, data: dict[str, Any], args: argparse.Namespace
) -> tuple[Any, Any]:
    """envhub's learner, built as ``Trainer`` builds it; returns (model, one iteration)."""
    from envhub.train.config import load_config
    from envhub.train.learner import Learner
    from envhub.train.trainer import _load_model

    config = load_config(
        None,
        {
            "env": "envhub/SearchQA-v0",  # the schema needs one; no env runs here
            "model.path": str(model_dir),
            "model.device": str(device),
            "model.dtype": args.dtype,
            "model.gradient_checkpointing": args.gradient_checkpointing,
            "model.logprob_chunk_tokens": args.chunk,
            "loss.kl_coef": 0.0,
            "loss.entropy_coef": 0.0,
            "loss.clip_c": None,
            "optim.lr": 1e-6,
            "optim.micro_batch_rows": args.micro,
            "optim.mini_batch_rows": args.rows,
            "optim.shuffle": False,
        },
    )
    model = _load_model(config, device)
    learner = Learner(
        model,
        model_config=config.model,
        loss=config.loss,
        optim=config.optim,
        temperature=config.rollout.sampling.temperature,
    )
    rows = prompt_completion_rows(data["prompt"], data["completion"], data["advantages"])

    def iteration() -> dict[str, float]:
        start = time.perf_counter()
        old = learner.logprobs(rows)
        _sync(device)
        middle = time.perf_counter()
        stats = learner.update(rows, old)
        _sync(device)
        return {
            "old_logprobs_s": middle - start,
            "update_s": time.perf_counter() - middle,
            "loss": stats.loss,
        }

    return model, iteration


def _zero_reward(completions: list[Any], **_: Any) -> list[float | None]:
    return [0.0] * len(completions)


def trl_trainer(
    model_dir: Path, device: Any, data: dict[str, Any], args: argparse.Namespace
) -> tuple[Any, Any]:
    """TRL's ``GRPOTrainer`` set up as ``Trainer.train`` sets it up; returns (model, one iteration)."""
    import warnings

    import torch
    from datasets import Dataset
    from trl import GRPOConfig, GRPOTrainer

    n, micro = args.rows, args.micro
    accumulation = n // micro
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        config = GRPOConfig(
            output_dir=str(model_dir.parent / "trl"),
            per_device_train_batch_size=micro,
            gradient_accumulation_steps=accumulation,
            num_generations=2,
            max_completion_length=args.completion,
            beta=0.0,
            loss_type="dapo",
            learning_rate=1e-6,
            max_grad_norm=1.0,
            use_cpu=device.type == "cpu",
            bf16=args.dtype == "bfloat16",
            gradient_checkpointing=args.gradient_checkpointing,
            report_to=[],
        )
        trainer: Any = GRPOTrainer(
            model=str(model_dir),
            reward_funcs=_zero_reward,
            args=config,
            train_dataset=Dataset.from_dict({"prompt": ["x"] * n}),
        )
    trainer.create_optimizer()
    trainer.current_gradient_accumulation_steps = accumulation  # Trainer's loop sets it otherwise
    if config.activation_checkpointing:  # Trainer.train switches it on (not __init__), like this
        raw = config.activation_checkpointing_kwargs  # a dict once the config has parsed it
        kwargs: dict[str, Any] = dict(raw) if isinstance(raw, dict) else {}
        kwargs.pop("every_n_layers", None)
        kwargs.pop("offload", None)
        trainer.model.activation_checkpointing_enable(activation_checkpointing_kwargs=kwargs or None)
    # Trainer.train's accelerator.prepare: places the model and, under bf16, wraps its forward in
    # autocast (without it compute_loss would run in float32).
    model = trainer.accelerator.prepare_model(trainer.model)
    model.train()
    target = trainer.accelerator.device
    tokens = torch.tensor(float(n * args.completion), device=target)
    prompt, completion, advantages = data["prompt"], data["completion"], data["advantages"]
    batches = []
    for s in range(0, n, micro):
        part = slice(s, s + micro)
        batches.append(
            {
                "prompt_ids": prompt[part].to(target),
                "prompt_mask": torch.ones_like(prompt[part]).to(target),
                "completion_ids": completion[part].to(target),
                "completion_mask": torch.ones_like(completion[part]).to(target),
                "advantages": advantages[part].to(target),
                "old_per_token_logps": None,
                "num_items_in_batch": tokens,
            }
        )

    def iteration() -> dict[str, float]:
        start = time.perf_counter()
        total = 0.0
        for inputs in batches:
            # HF Trainer.training_step minus _prepare_inputs (which, in GRPOTrainer, generates).
            with trainer.compute_loss_context_manager():
                loss = trainer.compute_loss(model, inputs, num_items_in_batch=tokens)
            trainer.accelerator.backward(loss)
            total += float(loss.detach())
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        trainer.optimizer.step()
        trainer.optimizer.zero_grad(set_to_none=True)
        _sync(device)
        return {"old_logprobs_s": 0.0, "update_s": time.perf_counter() - start, "loss": total}

    return model, iteration


def run_variant(variant: str, model_dir: Path, args: argparse.Namespace) -> dict[str, Any]:
    """In a fresh process: build, warm up, reset the peak, time ``--iterations`` iterations."""
    import torch

    device = torch.device("cuda" if torch.cuda.is_available() and not args.quick else "cpu")
    torch.manual_seed(0)
    g = torch.Generator().manual_seed(0)
    n, p, c = args.rows, args.prompt, args.completion
    data = {
        "prompt": torch.randint(3, args.vocab, (n, p), generator=g),
        "completion": torch.randint(3, args.vocab, (n, c), generator=g),
        "advantages": torch.randn(n, generator=g),
    }
    build = envhub_trainer if variant == "envhub" else trl_trainer
    model, iteration = build(model_dir, device, data, args)
    probe = _compute_dtype_probe(model)
    memory = _Memory(device)
    for _ in range(args.warmup):
        iteration()
    memory.reset()
    timed = [iteration() for _ in range(args.iterations)]
    peak = memory.read()
    step = statistics.median(t["old_logprobs_s"] + t["update_s"] for t in timed)
    update = statistics.median(t["update_s"] for t in timed)
    tokens = n * (p + c)
    return {
        "trainer": variant,
        **software(device),
        "compute_dtype": probe.get("dtype", "?"),
        "master_dtype": _masters(model),
        "attn_implementation": str(getattr(model.config, "_attn_implementation", "?")),
        "gradient_checkpointing": bool(getattr(model, "is_gradient_checkpointing", False)),
        "iterations": len(timed),
        "step_s": step,
        "update_s": update,
        "old_logprobs_s": statistics.median(t["old_logprobs_s"] for t in timed),
        "tokens_per_s": tokens / step,
        "update_tokens_per_s": tokens / update,
        "losses": [t["loss"] for t in timed],
        **peak,
    }


def _ratios(rows: list[dict[str, Any]]) -> dict[str, Any] | None:
    """envhub over TRL: tokens/s (above 1: envhub faster) and peak memory (below 1: leaner)."""
    by = {r["trainer"]: r for r in rows if "error" not in r}
    if not {"envhub", "trl"} <= by.keys():
        return None
    e, t = by["envhub"], by["trl"]
    return {
        "trainer": "envhub/trl",
        "tokens_per_s": e["tokens_per_s"] / t["tokens_per_s"],
        "update_tokens_per_s": e["update_tokens_per_s"] / t["update_tokens_per_s"],
        "peak_gib": e["peak_gib"] / t["peak_gib"],
    }


def _print(rows: list[dict[str, Any]], ratio: dict[str, Any] | None, args: argparse.Namespace) -> None:
    ok = [r for r in rows if "error" not in r]
    if ok:
        r = ok[0]
        print(
            f"{r['device_name']} ({r['device']}); torch {r['torch']} (CUDA {r['cuda'] or '-'}), "
            f"transformers {r['transformers']}, trl {r['trl']}, accelerate {r['accelerate']}"
        )
    print(
        f"{args.iterations} timed iterations after {args.warmup} warm-up, {args.rows} x ({args.prompt} + "
        f"{args.completion}) tokens, micro-batch {args.micro}, {args.layers} layer(s), vocabulary "
        f"{args.vocab:,}, --dtype {args.dtype}, gradient checkpointing "
        f"{'on' if args.gradient_checkpointing else 'off'}"
    )
    header = (
        f"{'trainer':<8} {'compute':>9} {'masters':>8} {'step s':>8} {'tokens/s':>10} "
        f"{'update tok/s':>13} {'peak GiB':>9} {'before GiB':>11}"
    )
    print(header)
    for r in rows:
        if "error" in r:
            print(f"{r['trainer']:<8} failed: {r['error']}")
            continue
        print(
            f"{r['trainer']:<8} {r['compute_dtype']:>9} {r['master_dtype']:>8} {r['step_s']:>8.3f} "
            f"{r['tokens_per_s']:>10,.0f} {r['update_tokens_per_s']:>13,.0f} {r['peak_gib']:>9.2f} "
            f"{r['before_gib']:>11.2f}"
        )
    if ok:
        print(
            f"peak memory: {ok[0]['memory']}; envhub's step includes its old-log-prob forward, TRL's has none"
        )
    if ratio is not None:
        print(
            f"envhub / TRL: tokens/s {ratio['tokens_per_s']:.2f}x (update alone "
            f"{ratio['update_tokens_per_s']:.2f}x), peak memory {ratio['peak_gib']:.2f}x"
        )


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--rows", type=int, default=16, help="sequences per optimizer step (even)")
    parser.add_argument("--micro", type=int, default=4, help="rows per micro-batch (divides --rows)")
    parser.add_argument("--prompt", type=int, default=1024, help="prompt tokens per row")
    parser.add_argument("--completion", type=int, default=1024, help="completion tokens per row")
    parser.add_argument("--layers", type=int, default=24, help="decoder layers (Qwen2.5-0.5B has 24)")
    parser.add_argument("--vocab", type=int, default=VOCAB, help="vocabulary size (Qwen2.5's by default)")
    parser.add_argument("--iterations", type=int, default=3, help="timed iterations (optimizer steps)")
    parser.add_argument("--warmup", type=int, default=1, help="iterations before timing starts")
    parser.add_argument(
        "--dtype", choices=("bfloat16", "float32"), default="bfloat16", help="compute precision"
    )
    parser.add_argument(
        "--gradient-checkpointing", action="store_true", help="recompute activations, on both sides"
    )
    parser.add_argument("--chunk", type=int, default=512, help="envhub's model.logprob_chunk_tokens")
    parser.add_argument("--variants", default=",".join(VARIANTS))
    parser.add_argument(
        "--quick",
        action="store_true",
        help="CPU smoke run: 4 x (64 + 64) tokens, 1 layer, vocabulary 16,384, 1 + 2 iterations",
    )
    parser.add_argument("--child", default=None, help=argparse.SUPPRESS)
    parser.add_argument("--model-dir", default=None, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.quick:
        args.rows, args.micro, args.prompt, args.completion = 4, 2, 64, 64
        args.layers, args.vocab, args.iterations, args.warmup = 1, 16_384, 2, 1
    if args.rows % 2 or args.rows % args.micro:
        parser.error("--rows must be even (TRL's groups of 2) and a multiple of --micro")
    if args.child:
        print(json.dumps(run_variant(args.child, Path(args.model_dir), args)))
        return
    import torch

    if not args.quick and not torch.cuda.is_available():
        print(NO_GPU, file=sys.stderr)
        sys.exit(EXIT_NO_GPU)
    started = machine()
    rows: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory() as tmp:
        model_dir = build_model(Path(tmp) / "qwen2.5-0.5b-shaped", args.layers, args.vocab)
        for variant in args.variants.split(","):
            cmd = [sys.executable, __file__, "--child", variant, "--model-dir", str(model_dir)]
            for key in ("rows", "micro", "prompt", "completion", "layers", "vocab", "iterations", "warmup"):
                cmd += [f"--{key}", str(getattr(args, key))]
            cmd += ["--dtype", args.dtype, "--chunk", str(args.chunk)]
            cmd += ["--gradient-checkpointing"] * args.gradient_checkpointing + ["--quick"] * args.quick
            done = subprocess.run(cmd, capture_output=True, text=True, check=False, cwd=ROOT)
            if done.returncode != 0:
                print(f"{variant} failed:\n{done.stderr[-3000:]}", file=sys.stderr)
                rows.append({"trainer": variant, "error": done.stderr.strip().splitlines()[-1:]})
                continue
            rows.append(json.loads(done.stdout.strip().splitlines()[-1]))
    ratio = _ratios(rows)
    params = {k: v for k, v in vars(args).items() if k not in ("child", "model_dir")}
    params["model"] = f"Qwen2.5-0.5B-shaped, random init, {args.layers} layer(s), vocab {args.vocab}"
    path = write_result("gpu_train", params, rows + ([ratio] if ratio else []), started=started)
    _print(rows, ratio, args)
    print(f"wrote {path}")
    if any("error" in r for r in rows):
        sys.exit(1)


if __name__ == "__main__":
    main()
