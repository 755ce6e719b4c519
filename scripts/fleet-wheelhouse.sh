#!/usr/bin/env bash
# Fill docker/wheelhouse (bind-mounted into the image builds) with wheels for the images' Python
# and platform, not this host's: ENVHUB_IMAGE_PYTHON (3.11: python:3.11-slim-bookworm and the
# local Debian bookworm base alike) and ENVHUB_IMAGE_PLATFORM (manylinux_2_28_x86_64).
#
#   bash scripts/fleet-wheelhouse.sh         torch's CPU build: what a CPU image cannot get from
#                                            PyPI (PyPI's Linux torch is the CUDA build)
#   bash scripts/fleet-wheelhouse.sh --all   also every wheel the images install, for builds
#                                            with no registry (PIP_INSTALL_FLAGS=--no-index)
#
# torch comes from where pip's own configuration offers a CPU build: its local sources
# (find-links, e.g. a CPU wheel a machine keeps on disk), else PyTorch's CPU index
# (TORCH_CPU_INDEX). The wheels are kept outside the clone (ENVHUB_CACHE, default
# ~/.cache/envhub/wheelhouse/<key>, keyed by pyproject.toml, this script and the target) and
# linked into docker/wheelhouse, so that a new clone of the same pins downloads nothing.
#
# --all downloads binary wheels only (--only-binary, for the target). A source-only package
# (ALFWorld's planner) is built into a wheel on this host only when the host's Python and
# platform are the target's; elsewhere the image builds it (PLANNER_COMPILERS=1, the default).
set -euo pipefail
cd "$(dirname "$0")/.."
PY="${PYTHON:-$([ -x .venv/bin/python ] && echo .venv/bin/python || echo python3)}"
TARGET_PYTHON="${ENVHUB_IMAGE_PYTHON:-3.11}"
TARGET_PLATFORM="${ENVHUB_IMAGE_PLATFORM:-manylinux_2_28_x86_64}"
TORCH_CPU_INDEX="${TORCH_CPU_INDEX:-https://download.pytorch.org/whl/cpu}"
mode="${1:-torch}"
[ "$mode" = "--all" ] && mode=all
out=docker/wheelhouse
key="$( (cat pyproject.toml scripts/fleet-wheelhouse.sh; echo "$mode $TARGET_PYTHON $TARGET_PLATFORM") | sha256sum | cut -c1-16)"
cache="${ENVHUB_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/envhub}/wheelhouse/$key"
abi="cp${TARGET_PYTHON/./}"
target=(--only-binary=:all: --python-version "$TARGET_PYTHON" --implementation cp --abi "$abi"
        --platform "$TARGET_PLATFORM" --platform manylinux2014_x86_64 --platform linux_x86_64)

if [ ! -f "$cache/.complete" ]; then
  echo "fleet-wheelhouse: downloading $mode wheels for Python $TARGET_PYTHON on $TARGET_PLATFORM into $cache" >&2
  rm -rf "$cache" && mkdir -p "$cache"
  spec="$("$PY" -c 'import re, sys, tomllib; extras = tomllib.load(open("pyproject.toml", "rb"))["project"]["optional-dependencies"]; print(next(r for r in extras["train"] if re.match(r"torch\b", r)))')"
  "$PY" -m pip download -q --no-deps "${target[@]}" -d "$cache" --no-index "$spec" 2>/dev/null \
    || "$PY" -m pip download -q --no-deps "${target[@]}" -d "$cache" --index-url "$TORCH_CPU_INDEX" "$spec"
  ls "$cache"/torch-*+cpu-*.whl >/dev/null 2>&1 || {
    echo "fleet-wheelhouse: no CPU build of $spec was found (got: $(ls "$cache"))" >&2; exit 1; }
  if [ "$mode" = all ]; then
    # envhub-rl's own requirements, read from pyproject.toml (the images build envhub itself).
    mapfile -t reqs < <("$PY" - <<'EOF'
import tomllib
project = tomllib.load(open("pyproject.toml", "rb"))["project"]
extras = project["optional-dependencies"]
seen = list(project["dependencies"])
for name in ("search", "tau", "timeseries", "redis", "client", "alfworld", "webshop", "browser", "train"):
    seen += [r for r in extras[name] if not r.startswith("envhub-rl")]
print("\n".join(["setuptools>=68", "wheel", "transformers>=4.56", *dict.fromkeys(seen)]))
EOF
    )
    # torch stays the CPU build found above (its local version sorts above PyPI's same release).
    torch_version="$(basename "$cache"/torch-*+cpu-*.whl | cut -d- -f2)"
    echo "torch==$torch_version" >"$cache/constraints.txt"
    pin=(-c "$cache/constraints.txt" --find-links "$cache")
    host="$("$PY" -c 'import sys, sysconfig; print(f"{sys.version_info[0]}.{sys.version_info[1]}", sysconfig.get_platform())')"
    if [ "$host" = "$TARGET_PYTHON linux-x86_64" ]; then
      # This host is the target: build source-only packages here too (a wheel of each).
      "$PY" -m pip wheel -q "${pin[@]}" -w "$cache" "${reqs[@]}"
    else
      "$PY" -m pip download -q "${pin[@]}" "${target[@]}" -d "$cache" "${reqs[@]}"
    fi
    rm -f "$cache"/envhub_rl-*.whl "$cache/constraints.txt"
  fi
  touch "$cache/.complete"
fi
# Link the cached wheels into the build context (hard links where the file system allows).
find "$out" -maxdepth 1 -name '*.whl' -delete
cp -l "$cache"/*.whl "$out"/ 2>/dev/null || cp "$cache"/*.whl "$out"/
echo "fleet-wheelhouse: $(ls "$out"/*.whl | wc -l) wheels in $out ($mode)" >&2
