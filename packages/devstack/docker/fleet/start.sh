#!/usr/bin/env bash
# The fleet container's command (target fleet of packages/devstack/docker/Dockerfile, compose
# profile `fleet`), as root with the capabilities the lab needs, on the host's network, what `npm run up`
# does on the host (packages/devstack/bin/lib/lab.sh):
#   1. the lab's admin API token: made once by signing in as the seeded admin (admin-credentials in
#      the tide-data volume, shared with the console) and kept there as lab-token (mode 600);
#   2. the lab in console mode: it registers pool `lab`, its proxies and directors over REST, starts
#      2 directors and 3 proxies in network namespaces, one tide-agent per host, a light client load;
#   3. waits; on SIGTERM (docker-compose stop/down) stops the lab, so its namespaces, veths and BPF
#      programs go with it. Were it killed instead, the namespaces die with the container's
#      processes and mounts, and their veths with them.
set -euo pipefail
cd /app

url=${TIDE_CONSOLE_URL:-http://127.0.0.1:3000}
data=${TIDE_DATA_DIR:-/app/.tide}
say() { printf 'tide-fleet: %s\n' "$*" >&2; }
lab() { node --import tsx packages/lab/src/cli.ts "$@"; }
# Exit 0 only while every lab director serves the console's version (the image's healthcheck too).
lab_in_sync() { lab status --console "$url" --token-file "$data/lab-token" >/dev/null 2>&1; }

stopping=0
child=
stop() {
  stopping=1
  say "stopping the lab"
  [[ -z $child ]] || kill "$child" 2>/dev/null || :
  lab down || say "lab down failed; the namespaces go with the container"
  exit 0
}
trap stop TERM INT
# Bash runs a trap only once the foreground command has finished, and a `lab status` on a busy host
# can outlast docker's stop timeout, which then kills the lab without `lab down`. Every step runs
# in the background and is waited for, so the signal interrupts the wait and the trap runs at once.
step() {
  "$@" &
  child=$!
  local rc=0
  wait "$child" || rc=$?
  child=
  return "$rc"
}

# Docker mounts /proc/sys read-only; the lab sets sysctls in its own namespaces (ip netns exec
# ... sysctl -w), which write through this mount. Needs SYS_ADMIN (the compose file adds it).
if ! mount -o remount,rw /proc/sys 2>/dev/null && [[ ! -w /proc/sys/net/ipv4/ip_forward ]]; then
  say "/proc/sys is read-only and cannot be remounted: the container needs cap_add SYS_ADMIN"
  exit 1
fi

say "waiting for the console at $url"
for ((i = 0; i < 240; i++)); do
  if step node -e "fetch('$url/api/health').then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"; then
    break
  fi
  step sleep 1
done

say "the lab's API token ($data/lab-token)"
step env TIDE_DATA_DIR="$data" node --import tsx packages/devstack/src/cli.ts lab:token "$url" >/dev/null

# A container restarted by its policy keeps its files but not its namespaces: start clean.
rm -rf "${TIDE_LAB_DIR:?}"/*
say "bringing the lab up in console mode"
step lab up --console "$url" --token-file "$data/lab-token" --load
for ((i = 0; i < 120; i++)); do
  if step lab_in_sync; then
    say "the fleet is up: every lab director serves the console's table"
    break
  fi
  step sleep 0.5
done
((i < 120)) || say "the lab is up but its directors are not in sync yet (lab status says why)"

# Wait in the background so the trap runs as soon as the signal arrives.
while ((!stopping)); do
  sleep infinity &
  wait $! || :
done
