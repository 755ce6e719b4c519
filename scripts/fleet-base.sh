#!/usr/bin/env bash
# Make sure the fleet's base image exists, and print its name.
#
# The Dockerfiles take BASE_IMAGE as a build argument whose default is the public
# python:3.11-slim-bookworm. Where that cannot be pulled (no registry: air-gapped clusters, this
# project's CI), this script builds a local base from Debian's own packages instead:
# debootstrap (minbase, bookworm, python3 + venv + pip + CA certificates) imported as
# envhub-base:bookworm. The host's CA bundle goes into the local base and pip is told to use it,
# so pip works behind a TLS-inspecting proxy. It also builds envhub-redis:bookworm (Debian's
# redis-server on that base) where the public redis image cannot be pulled.
#
# Output (stdout, for `eval`): ENVHUB_BASE_IMAGE=... and ENVHUB_REDIS_IMAGE=...
# Env: ENVHUB_FLEET_CACHE (default ~/.cache/envhub/fleet, outside the clone) holds the debootstrap
# root between runs; the images themselves stay in the engine.
set -euo pipefail
cd "$(dirname "$0")/.."
public_base="${ENVHUB_PUBLIC_BASE:-python:3.11-slim-bookworm}"
public_redis="${ENVHUB_PUBLIC_REDIS:-redis:7.4-bookworm}"
local_base="envhub-base:bookworm"
local_redis="envhub-redis:bookworm"
cache="${ENVHUB_FLEET_CACHE:-${ENVHUB_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/envhub}/fleet}"
mkdir -p "$cache"

have() { docker image inspect "$1" >/dev/null 2>&1; }
pull() { timeout 60 docker pull -q "$1" >/dev/null 2>&1; }

if have "$public_base" || pull "$public_base"; then
  base="$public_base"
else
  if ! have "$local_base"; then
    echo "fleet-base: $public_base cannot be pulled; building $local_base with debootstrap" >&2
    rootfs="$cache/rootfs"
    if [ ! -x "$rootfs/usr/bin/python3" ]; then
      if ! command -v debootstrap >/dev/null 2>&1; then
        # A fresh Debian machine has no debootstrap (CI failed here): install it, saying so.
        sudo=""
        if [ "$(id -u)" -ne 0 ]; then
          command -v sudo >/dev/null 2>&1 || { echo "fleet-base: need root (or sudo) to apt-get install debootstrap" >&2; exit 1; }
          sudo=sudo
        fi
        echo "fleet-base: installing Debian's debootstrap (apt-get) to build $local_base" >&2
        DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends debootstrap >/dev/null 2>&1 \
          || { DEBIAN_FRONTEND=noninteractive $sudo apt-get update -qq && \
               DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends debootstrap >/dev/null; }
      fi
      rm -rf "$rootfs" && mkdir -p "$rootfs"
      debootstrap --variant=minbase \
        --include=python3,python3-venv,python3-pip,ca-certificates \
        bookworm "$rootfs" http://deb.debian.org/debian >"$cache/debootstrap.log" 2>&1 \
        || { tail -20 "$cache/debootstrap.log" >&2; exit 1; }
    fi
    # The host's CA bundle: the registries may sit behind a proxy that re-signs TLS.
    cp /etc/ssl/certs/ca-certificates.crt "$rootfs/etc/ssl/certs/ca-certificates.crt"
    printf '[global]\ncert = /etc/ssl/certs/ca-certificates.crt\n' >"$rootfs/etc/pip.conf"
    rm -rf "$rootfs"/var/cache/apt/archives/*.deb "$rootfs"/var/lib/apt/lists/*
    tar -C "$rootfs" -c . | docker import -c 'CMD ["/bin/bash"]' - "$local_base" >/dev/null
  fi
  base="$local_base"
fi

if have "$public_redis" || pull "$public_redis"; then
  redis="$public_redis"
else
  if ! have "$local_redis"; then
    echo "fleet-base: $public_redis cannot be pulled; building $local_redis from $base" >&2
    docker build -q -t "$local_redis" --build-arg "BASE_IMAGE=$base" docker/redis >/dev/null
  fi
  redis="$local_redis"
fi
echo "ENVHUB_BASE_IMAGE=$base"
echo "ENVHUB_REDIS_IMAGE=$redis"
