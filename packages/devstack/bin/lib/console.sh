# The console as a background daemon (sourced by tide-up and tide-down).
# It runs in its own session (setsid), so stopping it signals npm, next and everything they started.
# shellcheck shell=bash

CONSOLE_PORT=3000 # apps/console's `start` (tide-console serve): PORT, default 3000
CONSOLE_PID_FILE="$TIDE_DIR/console.pid"
CONSOLE_LOG="$TIDE_DIR/console.log"
CONSOLE_READY_TIMEOUT_S=120
# The production server the Debian package runs (tide-console serve, apps/console/server/serve.ts),
# on the repo's build: `next start` warns that it does not serve standalone output.
CONSOLE_COMMAND=(npm run -w @tide/console start)
# Set in the daemon's environment: console_pid recognises our process by it (npm rewrites its
# command line, and a pid in console.pid may have been reused since).
CONSOLE_MARKER="TIDE_CONSOLE_DAEMON=$TIDE_ROOT"

# The pid in console.pid if that process is still our console (not a reused pid), else nothing.
console_pid() {
  local pid
  [[ -s $CONSOLE_PID_FILE ]] || return 0
  pid="$(<"$CONSOLE_PID_FILE")"
  if [[ $pid =~ ^[0-9]+$ ]] && tr '\0' '\n' <"/proc/$pid/environ" 2>/dev/null | grep -qxF "$CONSOLE_MARKER"; then
    echo "$pid"
  fi
}

# Is `pid` running (a zombie left by a crashed child does not count)?
running() {
  local stat
  stat="$(cat "/proc/$1/stat" 2>/dev/null)" || return 1
  stat="${stat##*) }"
  [[ ${stat%% *} != Z ]]
}

port_in_use() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

http_ok() {
  node -e 'fetch(process.argv[1], { signal: AbortSignal.timeout(3000) }).then(
    (r) => process.exit(r.status === 200 ? 0 : 1), () => process.exit(1))' "$1"
}

console_stop() {
  local pid i
  pid="$(console_pid)"
  if [[ -z $pid ]]; then
    rm -f "$CONSOLE_PID_FILE"
    return 0
  fi
  note "stopping the console (pid $pid)"
  kill -TERM -- "-$pid" 2>/dev/null || kill -TERM "$pid" 2>/dev/null || :
  for ((i = 0; i < 100; i++)); do
    running "$pid" || break
    sleep 0.1
  done
  if running "$pid"; then
    note "still running after 10 s: SIGKILL"
    kill -KILL -- "-$pid" 2>/dev/null || kill -KILL "$pid" 2>/dev/null || :
  fi
  rm -f "$CONSOLE_PID_FILE"
}

console_start() {
  local pid i
  [[ -f apps/console/package.json ]] || die "apps/console is missing"
  if port_in_use "$CONSOLE_PORT"; then
    die "port $CONSOLE_PORT is taken by a process tide-up did not start; stop it and run npm run up again"
  fi
  mkdir -p "$TIDE_DIR"
  : >"$CONSOLE_LOG"
  env "$CONSOLE_MARKER" DATABASE_URL="${CONSOLE_DATABASE_URL:-$DATABASE_URL}" TIDE_DATA_DIR="$TIDE_DIR" NODE_ENV=production \
    setsid "${CONSOLE_COMMAND[@]}" >>"$CONSOLE_LOG" 2>&1 </dev/null &
  pid=$!
  echo "$pid" >"$CONSOLE_PID_FILE"
  note "started (pid $pid); waiting for http://localhost:$CONSOLE_PORT/api/health"
  for ((i = 0; i < CONSOLE_READY_TIMEOUT_S * 2; i++)); do
    if ! running "$pid"; then
      echo "--- $CONSOLE_LOG (tail) ---"
      tail -n 30 "$CONSOLE_LOG"
      rm -f "$CONSOLE_PID_FILE"
      die "the console exited during start-up (log above)"
    fi
    if http_ok "http://localhost:$CONSOLE_PORT/api/health"; then return 0; fi
    sleep 0.5
  done
  echo "--- $CONSOLE_LOG (tail) ---"
  tail -n 30 "$CONSOLE_LOG"
  console_stop
  die "the console did not answer 200 on /api/health within ${CONSOLE_READY_TIMEOUT_S}s (log above)"
}
