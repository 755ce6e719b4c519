#!/usr/bin/env bash
# One command for the GPU training benchmark (bench/gpu_train.py; its --help says what it measures):
# a Qwen2.5-0.5B-shaped model, a few bf16 iterations, tokens/s, peak GPU memory and the ratio to
# TRL's GRPOTrainer on the same rows. Arguments pass through (--quick: a tiny CPU smoke run).
# Uses the project's .venv when there is one, else python3 on PATH.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
python="$root/.venv/bin/python"
[ -x "$python" ] || python="$(command -v python3)"
export PYTHONPATH="$root${PYTHONPATH:+:$PYTHONPATH}"
exec "$python" "$root/bench/gpu_train.py" "$@"
