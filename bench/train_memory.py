"""Peak memory and time of one update on a Qwen2.5-0.5B-shaped model: envhub (lean and whole-vocab
log-probs) against TRL's ``GRPOTrainer`` on the same rows.

The model has Qwen2.5-0.5B's shape (hidden 896, MLP 4864, 14 heads, 2 KV heads, tied
151,936-token vocabulary) with ``--layers`` decoder layers (2 by default, to fit this CPU) and
random weights. The rows are ``--rows`` sequences of ``--prompt`` + ``--completion`` random
tokens (2,048 per row by default), trained in micro-batches of ``--micro`` rows, fp32 on the CPU,
KL off, entropy on for envhub (verl-agent's 0.001) and whatever TRL computes by default.

Each trainer runs in its own process. After the model, optimizer and trainer are built, the
process resets its peak resident set size (``/proc/self/clear_refs`` = 5), runs one update
(envhub: old log-probs, then forward, backward, clip, AdamW; TRL: ``compute_loss`` and
``accelerator.backward`` per micro-batch, clip, its optimizer's step, as in
``bench/train_step.py``), and reports the peak RSS of that update above the RSS before it
(``VmHWM`` minus ``VmRSS``) and its wall time. AdamW's state is allocated by the first step, in
every variant alike.

    python bench/train_memory.py            # 2 x (1536 + 512) tokens, 2 layers
    python bench/train_memory.py --quick    # 2 x (384 + 128), 1 layer, vocabulary 16,384

Writes ``docs/results/train_memory.json`` and prints a table.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench._common import machine, prompt_completion_rows, results_dir

VOCAB = 151_936
VARIANTS = ("envhub", "envhub-whole-vocab", "trl")


def _status(field: str) -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1]) * 1024
    raise RuntimeError(field)


def build_model(out: Path, layers: int, vocab: int = VOCAB) -> Path:
    import torch
    from transformers import Qwen2Config, Qwen2ForCausalLM

    from envhub.policy.tiny import build_tiny_tokenizer

    config = Qwen2Config(
        vocab_size=vocab,
        hidden_size=896,
        intermediate_size=4864,
        num_hidden_layers=layers,
        num_attention_heads=14,
        num_key_value_heads=2,
        max_position_embeddings=32768,
        tie_word_embeddings=True,
    )
    torch.manual_seed(0)
    Qwen2ForCausalLM(config).save_pretrained(out)
    build_tiny_tokenizer().save_pretrained(out)  # TRL wants a tokenizer; ids are random anyway
    return out


def _zero_reward(completions: list[Any], **_: Any) -> list[float | None]:
    return [0.0] * len(completions)


def run_variant(variant: str, model_dir: Path, args: argparse.Namespace) -> dict[str, Any]:
    """In a fresh process: build, reset the peak RSS, one update, report."""
    import torch
    from transformers import AutoModelForCausalLM

    torch.manual_seed(0)
    n, micro, p, c = args.rows, args.micro, args.prompt, args.completion
    g = torch.Generator().manual_seed(0)
    prompt = torch.randint(3, args.vocab, (n, p), generator=g)
    completion = torch.randint(3, args.vocab, (n, c), generator=g)
    advantages = torch.randn(n, generator=g)
    if variant.startswith("envhub"):
        from envhub.train.config import LossConfig, ModelConfig, OptimConfig
        from envhub.train.learner import Learner

        model = AutoModelForCausalLM.from_pretrained(str(model_dir), dtype=torch.float32)
        chunk = 0 if variant == "envhub-whole-vocab" else args.chunk
        learner = Learner(
            model,
            model_config=ModelConfig(path=str(model_dir), device="cpu", logprob_chunk_tokens=chunk),
            loss=LossConfig(kl_coef=0.0, entropy_coef=0.001),
            optim=OptimConfig(lr=1e-6, micro_batch_rows=micro, mini_batch_rows=n, shuffle=False),
            temperature=1.0,
        )
        rows = prompt_completion_rows(prompt, completion, advantages)

        def step() -> float:
            stats = learner.update(rows, learner.logprobs(rows))
            return stats.loss

    else:
        import warnings

        from datasets import Dataset
        from trl import GRPOConfig, GRPOTrainer

        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            config = GRPOConfig(
                output_dir=str(model_dir.parent / "trl"),
                per_device_train_batch_size=micro,
                gradient_accumulation_steps=max(1, n // micro),
                num_generations=2,
                max_completion_length=c,
                beta=0.0,
                loss_type="dapo",
                learning_rate=1e-6,
                max_grad_norm=1.0,
                use_cpu=True,
                bf16=False,
                report_to=[],
            )
            trainer: Any = GRPOTrainer(
                model=str(model_dir),
                reward_funcs=_zero_reward,
                args=config,
                train_dataset=Dataset.from_dict({"prompt": ["x"] * max(n, 2)}),
            )
        trainer.create_optimizer()
        trainer.current_gradient_accumulation_steps = max(1, n // micro)
        trl_model = trainer.model
        trl_model.train()
        tokens = torch.tensor(float(n * c))

        def step() -> float:
            total = 0.0
            for s in range(0, n, micro):
                part = slice(s, s + micro)
                inputs = {
                    "prompt_ids": prompt[part],
                    "prompt_mask": torch.ones_like(prompt[part]),
                    "completion_ids": completion[part],
                    "completion_mask": torch.ones_like(completion[part]),
                    "advantages": advantages[part],
                    "old_per_token_logps": None,
                    "num_items_in_batch": tokens,
                }
                with trainer.compute_loss_context_manager():
                    loss = trainer.compute_loss(trl_model, inputs, num_items_in_batch=tokens)
                trainer.accelerator.backward(loss)
                total += float(loss.detach())
            torch.nn.utils.clip_grad_norm_(trl_model.parameters(), 1.0)
            trainer.optimizer.step()
            trainer.optimizer.zero_grad(set_to_none=True)
            return total

    Path("/proc/self/clear_refs").write_text("5")  # reset the peak RSS (VmHWM) to the current RSS
    before = _status("VmRSS")
    start = time.perf_counter()
    loss = step()
    seconds = time.perf_counter() - start
    peak = _status("VmHWM")
    return {
        "trainer": variant,
        "update_s": seconds,
        "rss_before_gib": before / 2**30,
        "peak_rss_gib": peak / 2**30,
        "update_peak_above_before_gib": (peak - before) / 2**30,
        "tokens_per_s": n * (p + c) / seconds,
        "loss": loss,
    }


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--rows", type=int, default=2)
    parser.add_argument("--micro", type=int, default=1, help="rows per micro-batch")
    parser.add_argument("--prompt", type=int, default=1536)
    parser.add_argument("--completion", type=int, default=512)
    parser.add_argument("--layers", type=int, default=2)
    parser.add_argument("--chunk", type=int, default=512, help="envhub's model.logprob_chunk_tokens")
    parser.add_argument("--variants", default=",".join(VARIANTS))
    parser.add_argument("--vocab", type=int, default=VOCAB, help="vocabulary size (Qwen2.5's by default)")
    parser.add_argument(
        "--quick", action="store_true", help="2 x (384 + 128) tokens, 1 layer, a 16,384-token vocabulary"
    )
    parser.add_argument(
        "--out", default=None, help="default: docs/results/train_memory.json (--quick: bench/results/)"
    )
    parser.add_argument("--child", default=None, help=argparse.SUPPRESS)
    parser.add_argument("--model-dir", default=None, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.quick:
        # A smoke run of every code path (tests/test_bench.py): the vocabulary the memory figures
        # are about is the full run's.
        args.prompt, args.completion, args.layers, args.vocab = 384, 128, 1, 16_384
    if args.child:
        print(json.dumps(run_variant(args.child, Path(args.model_dir), args)))
        return
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        model_dir = build_model(Path(tmp) / "qwen2.5-0.5b-shaped", args.layers, args.vocab)
        for variant in args.variants.split(","):
            cmd = [sys.executable, __file__, "--child", variant, "--model-dir", str(model_dir)]
            for key in ("rows", "micro", "prompt", "completion", "layers", "chunk", "vocab"):
                cmd += [f"--{key}", str(getattr(args, key))]
            done = subprocess.run(cmd, capture_output=True, text=True, check=False)
            if done.returncode != 0:
                print(f"{variant} failed:\n{done.stderr[-3000:]}", file=sys.stderr)
                rows.append({"trainer": variant, "error": done.stderr.strip().splitlines()[-1:]})
                continue
            rows.append(json.loads(done.stdout.strip().splitlines()[-1]))
    params = {
        k: getattr(args, k)
        for k in ("rows", "micro", "prompt", "completion", "layers", "chunk", "vocab", "quick")
    }
    params["model"] = f"Qwen2.5-0.5B-shaped, random init, vocab {args.vocab}, fp32, CPU"
    out = Path(args.out) if args.out else results_dir() / "train_memory.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps({"machine": machine(), "parameters": params, "rows": rows}, indent=2) + "\n")
    print(
        f"one update, {args.rows} x ({args.prompt} + {args.completion}) tokens, micro-batch {args.micro}, "
        f"{args.layers} layer(s)"
    )
    print(f"{'trainer':<20} {'update s':>9} {'peak above before GiB':>22} {'peak RSS GiB':>13}")
    for r in rows:
        if "error" in r:
            print(f"{r['trainer']:<20} failed: {r['error']}")
            continue
        print(
            f"{r['trainer']:<20} {r['update_s']:>9.1f} {r['update_peak_above_before_gib']:>22.2f} "
            f"{r['peak_rss_gib']:>13.2f}"
        )
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
