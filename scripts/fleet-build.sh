#!/usr/bin/env bash
# Build the fleet's images once each (compose would build the shared envhub-envs image once per
# service that names it, sending the build context every time), with no registry when needed:
#   1. scripts/fleet-base.sh: the public base, or a local one built from Debian's packages;
#   2. scripts/fleet-wheelhouse.sh: every wheel into docker/wheelhouse (this machine's pip);
#   3. docker build of each image, installing from the wheelhouse only (--no-index).
# Then `docker compose up` (or docker-compose) finds every image and builds nothing.
# Env: ENVHUB_TAG (latest), ENVHUB_FLEET_IMAGES (the images to build; default all but the CUDA
# trainer, which a GPU host builds with `docker compose --profile gpu build trainer`).
set -euo pipefail
cd "$(dirname "$0")/.."
eval "$(bash scripts/fleet-base.sh)"
export ENVHUB_BASE_IMAGE ENVHUB_REDIS_IMAGE
bash scripts/fleet-wheelhouse.sh
tag="${ENVHUB_TAG:-latest}"
declare -A dockerfiles=(
  [envhub-envs]=servers/envs/Dockerfile
  [envhub-alfworld]=servers/alfworld/Dockerfile
  [envhub-webshop]=servers/webshop/Dockerfile
  [envhub-rollout]=servers/rollout/Dockerfile
  [envhub-proxy]=servers/proxy/Dockerfile
  [envhub-trainer]=trainers/Dockerfile
)
for image in ${ENVHUB_FLEET_IMAGES:-envhub-envs envhub-rollout envhub-proxy envhub-trainer envhub-alfworld envhub-webshop}; do
  start=$(date +%s)
  docker build -q -t "$image:$tag" -f "${dockerfiles[$image]}" \
    --build-arg "BASE_IMAGE=$ENVHUB_BASE_IMAGE" --build-arg "PIP_INSTALL_FLAGS=--no-index" . >/dev/null
  echo "fleet-build: $image:$tag in $(( $(date +%s) - start )) s" >&2
done
# The classic builder keeps every builder stage as an untagged image (the next build's cache);
# drop those a day old, so that repeated builds do not pile up gigabytes.
docker image prune -f --filter label=dev.envhub.stage=builder --filter until=24h >/dev/null
echo "ENVHUB_BASE_IMAGE=$ENVHUB_BASE_IMAGE"
echo "ENVHUB_REDIS_IMAGE=$ENVHUB_REDIS_IMAGE"
