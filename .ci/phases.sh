# Sourced by .ci/run (and tests/deploy/test_ci_run.py): timed phases and the table of their wall
# times, printed at exit.
declare -a TABLE=()
FG_PID=""
FAILED=0
# phase NAME COMMAND...: run it, record its wall time and outcome; later phases still run.
phase() {
  local name="$1" start=$SECONDS rc=0
  shift
  echo "=== .ci/run: $name: $*"
  # Run as a child the shell waits for (not in the foreground), so that a TERM to the run is
  # handled at once (the table, the background phases stopped) instead of after the phase.
  "$@" &
  FG_PID=$!
  wait "$FG_PID" || rc=$?
  FG_PID=""
  TABLE+=("$(printf '%-34s %6d s  %s' "$name" $((SECONDS - start)) "$([ "$rc" = 0 ] && echo ok || echo "FAILED (exit $rc)")")")
  [ "$rc" = 0 ] || FAILED=1
  return 0
}
# phase_bg NAME COMMAND...: a phase that runs in the background (its output kept and printed when
# phase_wait NAME collects it, so that it does not interleave with the foreground's). It runs
# under `timeout` (CI_BG_TIMEOUT_S, default 2400 s), in its own process group: a hung build
# cannot hold the run past its budget, and a run that ends first (killed, or a phase_wait never
# reached) stops it and says so in the table.
BG_DIR="$(mktemp -d)"
declare -A BG_PID=()
declare -A BG_DONE=()
_bg_file() { echo "$BG_DIR/$(echo "$1" | tr -c 'a-z0-9' _)"; }
phase_bg() {
  local name="$1" file
  shift
  file="$(_bg_file "$name")"
  echo "=== .ci/run: $name (in the background, at most ${CI_BG_TIMEOUT_S:-2400} s): $*"
  (
    start=$SECONDS rc=0
    # timeout leads its own process group (the build's docker clients included).
    timeout --kill-after=30 "${CI_BG_TIMEOUT_S:-2400}" "$@" >"$file.log" 2>&1 &
    echo $! >"$file.pid"
    wait $! || rc=$?
    echo "$((SECONDS - start)) $rc" >"$file.status"
  ) &
  BG_PID[$name]=$!
}
_bg_outcome() {
  case "$1" in
    0) echo ok ;;
    124 | 137) echo "FAILED (timed out after ${CI_BG_TIMEOUT_S:-2400} s)" ;;
    *) echo "FAILED (exit $1)" ;;
  esac
}
phase_wait() {
  local name="$1" file secs rc
  file="$(_bg_file "$name")"
  wait "${BG_PID[$name]}" || true
  BG_DONE[$name]=1
  echo "=== .ci/run: $name (from the background):"
  cat "$file.log" 2>/dev/null || true
  read -r secs rc <"$file.status" 2>/dev/null || { secs=0 rc=1; }
  TABLE+=("$(printf '%-34s %6d s  %s' "$name (background)" "$secs" "$(_bg_outcome "$rc")")")
  [ "$rc" = 0 ] || FAILED=1
}
# Background phases still running when the run ends: stopped (their process group), and a row.
_bg_stop_all() {
  local name file pid
  for name in "${!BG_PID[@]}"; do
    [ -n "${BG_DONE[$name]:-}" ] && continue
    file="$(_bg_file "$name")"
    pid="$(cat "$file.pid" 2>/dev/null || true)"
    [ -n "$pid" ] && kill -TERM -- "-$pid" 2>/dev/null
    kill -TERM "${BG_PID[$name]}" 2>/dev/null
    TABLE+=("$(printf '%-34s %6s    %s' "$name (background)" "-" "FAILED (not finished: stopped when the run ended)")")
    FAILED=1
  done
}
report() {
  if [ -n "$FG_PID" ]; then
    kill -TERM "$FG_PID" 2>/dev/null
    TABLE+=("$(printf '%-34s %6s    %s' "(the phase running)" "-" "FAILED (stopped: the run was killed)")")
    FAILED=1
  fi
  _bg_stop_all
  echo
  echo "=== .ci/run: wall time per phase"
  printf '%s\n' "${TABLE[@]}"
  printf '%-34s %6d s\n' "total" "$SECONDS"
}
# Also when the run is killed: TERM and INT exit (running the EXIT trap), stopping the phase
# that was running and the background ones.
trap report EXIT
trap 'exit 143' TERM
trap 'exit 130' INT
