#!/usr/bin/env bash
# The fleet container's command (target fleet of packages/devstack/docker/Dockerfile, compose
# profile `fleet`), as root with the capabilities the lab needs, on the host's network, what `npm run up`
# does on the host (packages/devstack/bin/lib/lab.sh):
#   1. waits until the console answers /api/health (as long as it takes: a message every 30 s);
#   2. the lab's admin API token: made once by signing in as the seeded admin (admin-credentials in
#      the tide-data volume, shared with the console) and kept there as lab-token (mode 600);
#   3. the lab in console mode: it registers pool `lab`, its proxies and directors over REST, starts
#      2 directors and 3 proxies in network namespaces, one tide-agent per host, a light client load.
#      A `lab up` that fails (a step of the lab timed out on a busy host) is run again, here, up to
#      LAB_UP_ATTEMPTS times: it keeps what already runs and starts the rest;
#   4. a watcher (status-watch.ts) keeps $TIDE_FLEET_STATUS_FILE, which the healthcheck reads;
#   5. on SIGTERM (docker-compose stop/down) stops the lab within STOP_BUDGET_S, so its
#      namespaces, veths and BPF programs go with it, and exits 0 inside the compose file's 60 s
#      grace period. A `lab down` that overruns the budget is abandoned: the namespaces die with the
#      container's processes and mounts, and their veths with them.
set -euo pipefail
cd /app

url=${TIDE_CONSOLE_URL:-http://127.0.0.1:3100}
data=${TIDE_DATA_DIR:-/app/.tide}
status_file=${TIDE_FLEET_STATUS_FILE:-/run/tide-fleet.status}
LAB_UP_ATTEMPTS=5
STOP_BUDGET_S=40
say() { printf 'tide-fleet: %s\n' "$*" >&2; }
lab() { node --import tsx packages/lab/src/cli.ts "$@"; }

stopping=0
child=
watcher=
stop() {
  stopping=1
  local started=$SECONDS
  say "stopping the lab"
  [[ -z $child ]] || kill "$child" 2>/dev/null || :
  [[ -z $watcher ]] || kill "$watcher" 2>/dev/null || :
  lab down &
  local down=$! rc=0
  # Waits in slices so that the budget holds whatever lab down does.
  while kill -0 "$down" 2>/dev/null && ((SECONDS - started < STOP_BUDGET_S)); do
    sleep 0.2
  done
  if kill -0 "$down" 2>/dev/null; then
    kill -KILL "$down" 2>/dev/null || :
    say "lab down did not finish within ${STOP_BUDGET_S} s; the namespaces go with the container"
  else
    wait "$down" || rc=$?
    ((rc == 0)) || say "lab down failed; the namespaces go with the container"
  fi
  say "stopped in $((SECONDS - started)) s"
  exit 0
}
trap stop TERM INT
# Bash runs a trap only once the foreground command has finished, and a step on a busy host can
# outlast docker's stop timeout, which then kills the lab without `lab down`. Every step runs in
# the background and is waited for, so the signal interrupts the wait and the trap runs at once.
step() {
  "$@" &
  child=$!
  local rc=0
  wait "$child" || rc=$?
  child=
  return "$rc"
}
# GET $1 with bash's /dev/tcp: 0 when it answers 200 (no node process per probe).
http_ok() {
  local rest=${1#http://} hostport path line
  hostport=${rest%%/*}
  path=/${rest#*/}
  [[ $rest == */* ]] || path=/
  exec 3<>"/dev/tcp/${hostport%:*}/${hostport##*:}" || return 1
  printf 'GET %s HTTP/1.0\r\nHost: %s\r\n\r\n' "$path" "$hostport" >&3
  read -r -t 10 _ line _ <&3 || line=
  exec 3<&-
  [[ $line == 200 ]]
}

# Docker mounts /proc/sys read-only; the lab sets sysctls in its own namespaces (ip netns exec
# ... sysctl -w), which write through this mount. Needs SYS_ADMIN (the compose file adds it).
if ! mount -o remount,rw /proc/sys 2>/dev/null && [[ ! -w /proc/sys/net/ipv4/ip_forward ]]; then
  say "/proc/sys is read-only and cannot be remounted: the container needs cap_add SYS_ADMIN"
  exit 1
fi

printf 'out-of-sync %s starting\n' "$EPOCHSECONDS" >"$status_file"
say "waiting for the console at $url"
waited=$SECONDS
until http_ok "$url/api/health" 2>/dev/null; do
  (((SECONDS - waited) % 30 != 0)) || say "still waiting for the console ($((SECONDS - waited)) s)"
  step sleep 1
done

say "the lab's API token ($data/lab-token)"
step env TIDE_DATA_DIR="$data" node --import tsx packages/devstack/src/cli.ts lab:token "$url" >/dev/null

# A container restarted by its policy keeps its files but not its namespaces: start clean.
rm -rf "${TIDE_LAB_DIR:?}"/*
say "bringing the lab up in console mode"
for ((attempt = 1; ; attempt++)); do
  if step lab up --console "$url" --token-file "$data/lab-token" --load; then
    break
  fi
  if ((attempt >= LAB_UP_ATTEMPTS)); then
    say "lab up failed $attempt times; giving up (the log above says why)"
    exit 1
  fi
  say "lab up failed (attempt $attempt of $LAB_UP_ATTEMPTS); running it again"
  step sleep 2
done

say "the fleet is up; health in $status_file (every director serving the console's table)"
TIDE_LAB_TOKEN_FILE="$data/lab-token" node --import tsx packages/devstack/docker/fleet/status-watch.ts \
  "$status_file" &
watcher=$!

# Wait in the background so the trap runs as soon as the signal arrives.
while ((!stopping)); do
  sleep infinity &
  wait $! || :
done
