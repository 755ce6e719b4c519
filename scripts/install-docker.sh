#!/usr/bin/env bash
# The Docker engine and Compose for the fleet test (tests/fleet): Debian's docker.io (dockerd,
# containerd, runc) and docker-compose (Compose 1.29, which reads the Compose Specification the
# repository's docker-compose.yml keeps to). Installs what is missing, then starts dockerd when
# `docker info` does not answer. Needs root (or sudo). Idempotent.
set -euo pipefail
cd "$(dirname "$0")/.."
SUDO=""
if [ "$(id -u)" -ne 0 ]; then
  if command -v sudo >/dev/null 2>&1; then SUDO=sudo; else
    echo "install-docker: need root to install and start the Docker engine; the fleet test fails under CI=true" >&2
    exit 0
  fi
fi
missing=()
command -v dockerd >/dev/null 2>&1 || missing+=(docker.io)
command -v docker-compose >/dev/null 2>&1 || missing+=(docker-compose)
command -v debootstrap >/dev/null 2>&1 || missing+=(debootstrap)
if [ ${#missing[@]} -gt 0 ]; then
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get update -qq
  $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
if ! docker info >/dev/null 2>&1; then
  mkdir -p .cache
  log="${ENVHUB_DOCKERD_LOG:-$PWD/.cache/dockerd.log}"
  $SUDO sh -c "nohup dockerd --storage-driver=overlay2 >'$log' 2>&1 &"
  for _ in $(seq 1 60); do
    docker info >/dev/null 2>&1 && break
    sleep 1
  done
  docker info >/dev/null 2>&1 || { echo "install-docker: dockerd did not start; see $log" >&2; tail -20 "$log" >&2; exit 1; }
fi
