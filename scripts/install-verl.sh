#!/usr/bin/env bash
# Install verl 0.9.1 and envhub (editable, extra `verl`) into their own virtualenv: verl pins
# transformers<5.11 while the trl extra resolves to a newer one, so the two cannot share
# envhub's test venv. tests/integrations/test_verl.py runs verl's AgentLoop in it.
#
#   ENVHUB_VERL_VENV   where the venv goes (default: a cached one, see below)
#   ENVHUB_CACHE       the cache of virtualenvs (default ~/.cache/envhub)
#   PYTHON             interpreter that creates it (default: python3)
#
# The virtualenv lives outside the clone (scripts/venv-cache.sh), keyed by what is pinned into it
# (the requirements of envhub-rl[verl] and of the extras it names, from pyproject.toml), this
# script and the Python version; <repo>/.venv-verl links to it. With the same key a run only
# points the virtualenv's editable envhub at this clone (seconds).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
PYTHON="${PYTHON:-python3}"
PINS="$("$PYTHON" - "$ROOT/pyproject.toml" <<'PY'
import sys, tomllib
project = tomllib.load(open(sys.argv[1], "rb"))["project"]
extras = project["optional-dependencies"]
print(sorted(project["dependencies"]), *(sorted(extras[name]) for name in ("verl", "train", "client")))
PY
)"
# shellcheck source=scripts/venv-cache.sh
source "$ROOT/scripts/venv-cache.sh"
cached_venv verl "$PINS $(sha256sum "$ROOT/scripts/install-verl.sh" | cut -c1-16)"
if [ "$FRESH" = 1 ]; then
  echo "install-verl: installing verl 0.9.1 and envhub-rl[verl] into $VENV (a few minutes)" >&2
  rm -rf "$VENV"
  "$PYTHON" -m venv "$VENV"
  "$VENV/bin/python" -m pip install -q -U pip wheel setuptools
  bash "$ROOT/scripts/install-torch.sh" "$VENV/bin/python"
  "$VENV/bin/python" -m pip install -q -e "$ROOT[verl]"
  # Fail here, not in the tests, if verl's agent loop cannot be imported on this machine.
  "$VENV/bin/python" -c "import verl.experimental.agent_loop.agent_loop, envhub.integrations.verl"
  finish_cached_venv
  echo "install-verl: ready: $VENV/bin/python" >&2
elif [ "$("$VENV/bin/python" -I -c 'import envhub, os; print(os.path.dirname(os.path.dirname(envhub.__file__)))' 2>/dev/null)" != "$ROOT" ]; then
  # The cached virtualenv's editable envhub belongs to another clone: point it here. (-I: not
  # the envhub of the current directory, which a plain -c would import first.)
  "$VENV/bin/python" -m pip install -q --no-deps -e "$ROOT"
fi
