#!/usr/bin/env bash
# Install SkyRL 0.4.0 (the `skyrl` package: its generator and config classes) into envhub's test
# venv, for tests/integrations/test_skyrl.py, which runs SkyRL's own SkyRLGymGenerator.agent_loop
# and validates the documented config with SkyRL's config classes.
#
# skyrl 0.4.0 declares Python >= 3.12, but the test venv is 3.11 (the machine's CPU torch wheel
# is for 3.11). The code it needs parses and runs on 3.11 except one check of pydantic's
# (typing.TypedDict on < 3.12), which the test works around. So: --ignore-requires-python, and
# --no-deps (its pins would replace the venv's transformers and bring Ray), plus the two small
# modules its generator imports that the venv lacks.
#
#   PYTHON   the test venv's interpreter (default: <repo>/.venv/bin/python)
#
# Idempotent: an unchanged second run is a no-op.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
PYTHON="${PYTHON:-$ROOT/.venv/bin/python}"
PINS="skyrl==0.4.0 loguru==0.7.3 pybase64==1.5.1"
if "$PYTHON" -c "import importlib.metadata as m, sys; sys.exit(m.version('skyrl') != '0.4.0')" 2>/dev/null; then
  exit 0
fi
echo "install-skyrl: installing $PINS into $("$PYTHON" -c 'import sys; print(sys.prefix)')" >&2
# shellcheck disable=SC2086
"$PYTHON" -m pip install -q --no-deps --ignore-requires-python $PINS
