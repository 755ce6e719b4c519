#!/usr/bin/env bash
# Build the fleet's images through the compose file's own build: sections (Compose v2, BuildKit),
# as `docker compose up --build` does, with what this machine needs around it:
#   1. scripts/fleet-base.sh: the public base image, or where no registry answers a local one
#      from Debian's packages (kept in the engine between runs);
#   2. scripts/fleet-wheelhouse.sh: torch's CPU build for the CPU images (cached outside the clone);
#   3. `docker compose --profile cpu-train build`: every image but the CUDA trainer (a GPU host
#      builds that with `docker compose --profile gpu build trainer`).
# Prints ENVHUB_BASE_IMAGE=... and ENVHUB_REDIS_IMAGE=... (for .env, or `eval`). BuildKit's cache
# (pip's cache mounts, the layers) stays in the engine, so a second run rebuilds only what changed.
set -euo pipefail
cd "$(dirname "$0")/.."
eval "$(bash scripts/fleet-base.sh)"
export ENVHUB_BASE_IMAGE ENVHUB_REDIS_IMAGE
bash scripts/fleet-wheelhouse.sh
start=$(date +%s)
docker compose --profile cpu-train build >&2
# Every image the file names must now exist (a Compose whose wrapper drops the exit status would
# otherwise report a failed build as done; scripts/install-docker.sh links the binary itself).
for image in $(docker compose --profile cpu-train config --images); do
  docker image inspect "$image" >/dev/null 2>&1 || { echo "fleet-build: $image was not built" >&2; exit 1; }
done
echo "fleet-build: compose build in $(( $(date +%s) - start )) s" >&2
echo "ENVHUB_BASE_IMAGE=$ENVHUB_BASE_IMAGE"
echo "ENVHUB_REDIS_IMAGE=$ENVHUB_REDIS_IMAGE"
