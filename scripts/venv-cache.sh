# Sourced by scripts/install-vllm.sh and scripts/install-verl.sh: their virtualenvs live outside
# the clone, in ENVHUB_CACHE (default ~/.cache/envhub), one folder per key (a hash of what is
# pinned into it), and <repo>/.venv-<name> is a link to the current one. A new clone of the same
# pins (CI's) links the existing virtualenv instead of installing it again.
#
#   cached_venv NAME KEY_TEXT   sets VENV (the folder) and FRESH (1 when it must be installed)
#   finish_cached_venv          after a successful install: stamps VENV, links <repo>/.venv-NAME
#
# cached_venv holds a lock on the key until the sourcing script exits (flock, where there is one).
#
# CACHED_VENV_LINK, when set, names the link instead of .venv-NAME (install-test-venv.sh: .venv).
#
# ENVHUB_<NAME>_VENV (e.g. ENVHUB_VLLM_VENV), when set, is the folder itself (no cache, no link).

ENVHUB_CACHE="${ENVHUB_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/envhub}"

cached_venv() {
  local name="$1" text="$2" override key
  override="ENVHUB_$(echo "$name" | tr '[:lower:]' '[:upper:]')_VENV"
  key="$(printf '%s\n%s\n' "$text" "$("${PYTHON:-python3}" -c 'import sys; print(sys.version)')" | sha256sum | cut -c1-16)"
  _CACHED_NAME="$name"
  _CACHED_KEY="$key"
  _CACHED_LINK=""
  if [ -n "${!override:-}" ]; then
    VENV="${!override}"
  else
    VENV="$ENVHUB_CACHE/venvs/$name-$key"
    _CACHED_LINK="$ROOT/${CACHED_VENV_LINK:-.venv-$name}"
  fi
  # One install of a key at a time: another clone's script (CI's beside a developer's) waits here
  # until the first has finished (the lock is the script's until it exits), then finds it stamped.
  if command -v flock >/dev/null; then
    mkdir -p "$ENVHUB_CACHE/venvs"
    exec {_CACHED_LOCK}>"$ENVHUB_CACHE/venvs/.$name-$key.lock"
    flock "$_CACHED_LOCK"
  fi
  FRESH=1
  if [ -x "$VENV/bin/python" ] && [ "$(cat "$VENV/.envhub-key" 2>/dev/null)" = "$key" ]; then
    FRESH=0
    _link_cached_venv
  fi
  # The install scripts rm -rf a folder they must install again: never one envhub did not make
  # (a user's own virtualenv named by ENVHUB_<NAME>_VENV has no .envhub-key).
  if [ "$FRESH" = 1 ] && [ -n "${!override:-}" ] && [ ! -e "$VENV/.envhub-key" ] &&
    [ -n "$(ls -A "$VENV" 2>/dev/null)" ]; then
    echo "venv-cache: $override=$VENV holds something envhub did not install (no .envhub-key), so it is left as it is: point $override at a new or empty folder, or remove that one yourself" >&2
    exit 2
  fi
}

_link_cached_venv() {
  [ -n "$_CACHED_LINK" ] || return 0
  # A real folder there is an older script's virtualenv in the clone: the cache replaces it.
  if [ -d "$_CACHED_LINK" ] && [ ! -L "$_CACHED_LINK" ]; then
    echo "venv-cache: replacing the folder $_CACHED_LINK with a link to $VENV" >&2
    rm -rf "$_CACHED_LINK"
  fi
  ln -sfn "$VENV" "$_CACHED_LINK"
}

finish_cached_venv() {
  echo "$_CACHED_KEY" >"$VENV/.envhub-key"
  _link_cached_venv
}
