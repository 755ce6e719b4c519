#!/usr/bin/env bash
# Install verl 0.9.1 and envhub (editable, extra `verl`) into their own virtualenv: verl pins
# transformers<5.11 while the trl extra resolves to a newer one, so the two cannot share
# envhub's test venv. tests/integrations/test_verl.py runs verl's AgentLoop in it.
#
#   ENVHUB_VERL_VENV   where the venv goes (default: <repo>/.venv-verl)
#   PYTHON             interpreter that creates it (default: python3)
#
# Idempotent: a stamp records the pins and pyproject.toml's hash; an unchanged second run is a no-op.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
VENV="${ENVHUB_VERL_VENV:-$ROOT/.venv-verl}"
PYTHON="${PYTHON:-python3}"
PINS="torch==2.13.0 verl==0.9.1 $(sha256sum "$ROOT/pyproject.toml" | cut -c1-16)"
STAMP="$VENV/.envhub-verl-installed"

if [ -x "$VENV/bin/python" ] && [ -f "$STAMP" ] && [ "$(cat "$STAMP")" = "$PINS" ]; then
  exit 0
fi
echo "install-verl: installing verl 0.9.1 and envhub-rl[verl] into $VENV (a few minutes)" >&2
[ -x "$VENV/bin/python" ] || "$PYTHON" -m venv "$VENV"
"$VENV/bin/python" -m pip install -q -U pip wheel setuptools
# torch from the machine's local CPU wheel first, so that nothing pulls a CUDA build.
"$VENV/bin/python" -m pip install -q "torch==2.13.0"
"$VENV/bin/python" -m pip install -q -e "$ROOT[verl]"
# Fail here, not in the tests, if verl's agent loop cannot be imported on this machine.
"$VENV/bin/python" -c "import verl.experimental.agent_loop.agent_loop, envhub.integrations.verl"
echo "$PINS" >"$STAMP"
echo "install-verl: ready: $VENV/bin/python" >&2
