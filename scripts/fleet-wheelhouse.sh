#!/usr/bin/env bash
# Fill docker/wheelhouse with every wheel the fleet's images install, so that the images build
# with no registry (PIP_INSTALL_FLAGS=--no-index). Runs pip on this machine: its configuration
# (a local torch CPU wheel, a CA bundle) and its wheel cache apply, so after `make test` this
# mostly copies. sdists (ALFWorld's planner, ...) are built once here, not in every image.
set -euo pipefail
cd "$(dirname "$0")/.."
PY="${PYTHON:-.venv/bin/python}"
out=docker/wheelhouse
mkdir -p "$out"
stamp="$out/.stamp"
want="$(sha256sum pyproject.toml scripts/fleet-wheelhouse.sh | sha256sum | cut -c1-16)"
if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ]; then exit 0; fi
# The build backend (the images build envhub's own wheel from source), torch's CPU build, and
# what a dependency needs only on an older Python than this machine's: Debian bookworm's
# python3 (the local base) is 3.11.2, and redis wants async-timeout below 3.11.3.
"$PY" -m pip wheel -q -w "$out" "setuptools>=68" wheel "torch==2.13.0" "async-timeout>=4.0.3"
"$PY" -m pip wheel -q -w "$out" ".[search,tau,timeseries,redis,client,alfworld,webshop,browser,train]"
rm -f "$out"/envhub-*.whl  # the images build envhub from the source they copy
echo "$want" >"$stamp"
