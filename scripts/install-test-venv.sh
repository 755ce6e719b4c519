#!/usr/bin/env bash
# The test virtualenv as CI uses it: `make .venv/.test-installed` (envhub-rl with the Makefile's
# TEST_EXTRAS, torch first, SkyRL), but in the cache of virtualenvs outside the clone (scripts/venv-cache.sh), keyed
# by what is pinned into it, with <repo>/.venv a link to it. A fresh clone on a warm machine (CI's)
# then only points the virtualenv's editable envhub at itself (seconds) instead of installing
# everything again (about two minutes, four on a machine with no pip cache).
#
#   ENVHUB_TEST_VENV   where the venv goes (default: a cached one)
#   ENVHUB_CACHE       the cache of virtualenvs (default ~/.cache/envhub)
#   PYTHON             interpreter that creates it (default: python3)
#   TEST_EXTRAS        the extras (default: the Makefile's)
#
# A real .venv folder in the clone (a developer's own `make test`) is left as it is and used.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
PYTHON="${PYTHON:-python3}"
TEST_EXTRAS="${TEST_EXTRAS:-all,dev,search-dense,train,trl}"
if [ -d "$ROOT/.venv" ] && [ ! -L "$ROOT/.venv" ]; then
  echo "install-test-venv: $ROOT/.venv is a folder of its own: using it (make .venv/.test-installed)" >&2
  exec make -C "$ROOT" .venv/.test-installed
fi
PINS="$("$PYTHON" - "$ROOT/pyproject.toml" "$TEST_EXTRAS" <<'PY'
import sys, tomllib
project = tomllib.load(open(sys.argv[1], "rb"))["project"]
extras = project["optional-dependencies"]
# An extra may name other extras: every extra's requirements are in the key.
print(sys.argv[2], sorted(project["dependencies"]), *(sorted(extras[name]) for name in sorted(extras)))
PY
)"
# What the editable install itself makes from pyproject.toml (console scripts, metadata, package
# data): not in the key, but a change of it re-installs envhub (--no-deps, seconds) below.
EDITABLE="$("$PYTHON" - "$ROOT/pyproject.toml" <<'PY'
import json, sys, tomllib
data = tomllib.load(open(sys.argv[1], "rb"))
tables = [data.get("build-system"), data["project"], data.get("tool", {}).get("setuptools")]
print(json.dumps(tables, sort_keys=True))
PY
)"
EDITABLE="$(printf '%s' "$EDITABLE" | sha256sum | cut -c1-16) $ROOT"
SCRIPTS="$(cat "$ROOT"/scripts/install-{test-venv,torch,skyrl}.sh | sha256sum | cut -c1-16)"
# shellcheck source=scripts/venv-cache.sh
CACHED_VENV_LINK=.venv source "$ROOT/scripts/venv-cache.sh"
CACHED_VENV_LINK=.venv cached_venv test "$PINS $SCRIPTS"
if [ "$FRESH" = 1 ]; then
  echo "install-test-venv: installing envhub-rl[$TEST_EXTRAS] into $VENV" >&2
  rm -rf "$VENV"
  "$PYTHON" -m venv "$VENV"
  "$VENV/bin/python" -m pip install -q -U pip wheel setuptools
  bash "$ROOT/scripts/install-torch.sh" "$VENV/bin/python"
  "$VENV/bin/python" -m pip install -q -e "$ROOT[$TEST_EXTRAS]"
  PYTHON="$VENV/bin/python" bash "$ROOT/scripts/install-skyrl.sh"
  echo "$EDITABLE" >"$VENV/.envhub-editable"
  finish_cached_venv
elif [ "$("$VENV/bin/python" -I -c 'import envhub, os; print(os.path.dirname(os.path.dirname(envhub.__file__)))' 2>/dev/null)" != "$ROOT" ] ||
  [ "$(cat "$VENV/.envhub-editable" 2>/dev/null)" != "$EDITABLE" ]; then
  # The cached virtualenv's editable envhub belongs to another clone, or was made from another
  # [project] (a console script added, same pins): install it again from here. (-I: not the
  # envhub of the current directory, which a plain -c would import first.)
  echo "install-test-venv: pointing the cached $VENV at $ROOT" >&2
  rm -f "$VENV/.envhub-editable"
  "$VENV/bin/python" -m pip install -q --no-deps -e "$ROOT"
  echo "$EDITABLE" >"$VENV/.envhub-editable"
fi
# Make's stamp: the virtualenv is up to date with this clone's pyproject.toml.
touch "$VENV/.test-installed"
