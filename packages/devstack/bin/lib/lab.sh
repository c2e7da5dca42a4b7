# The live fleet of `npm run up` (sourced by tide-up and tide-down): the lab (packages/lab) in
# console mode, registered with the dev console over REST, with one tide-agent per host and a light
# client load through its VIP, so the console shows directors in sync and proxies with traffic.
# shellcheck shell=bash

LAB_TOKEN_FILE="$TIDE_DIR/lab-token"
LAB_LOG="$TIDE_DIR/lab-up.log"
LAB_AGENT_BUNDLE="$TIDE_ROOT/apps/agent/dist/tide-agent.js"
# A namespace made and removed at once, to learn whether this host can make any (containers often cannot).
LAB_PROBE_NETNS="tide-up-probe-$$"

lab_cli() { (cd "$TIDE_ROOT" && TIDE_LAB_DIR="$TIDE_DIR/lab" node --import tsx packages/lab/src/cli.ts "$@"); }

# Whether the lab can run here; prints why not on stdout and returns 1 when it cannot.
lab_check() {
  if [[ $(uname -s) != Linux ]]; then
    echo "not Linux (the lab uses network namespaces)"
    return 1
  fi
  if [[ $(id -u) != 0 ]]; then
    echo "not root (network namespaces, veths and af_packet need root): run npm run up as root"
    return 1
  fi
  if ! command -v ip >/dev/null || ! ip netns list >/dev/null 2>&1; then
    echo "'ip netns' does not work here (iproute2 missing?)"
    return 1
  fi
  if ! ip netns add "$LAB_PROBE_NETNS" 2>/dev/null; then
    echo "cannot create a network namespace here (a container without CAP_SYS_ADMIN?)"
    return 1
  fi
  ip netns del "$LAB_PROBE_NETNS" 2>/dev/null || :
  return 0
}

# Builds what the lab needs: the data plane (DPDK is installed by the install step) and, if missing,
# the agent bundle (the build step makes it). Prints why on failure and returns 1.
lab_build() {
  # Always through make (incremental: seconds when nothing changed): a build from an older checkout
  # would refuse the console's tables (e.g. GLBD v3) and leave the directors out of sync.
  note "make -C dataplane" >&2
  if ! make -C dataplane --no-print-directory >"$TIDE_DIR/dataplane-build.log" 2>&1; then
    tail -n 20 "$TIDE_DIR/dataplane-build.log" >&2
    echo "make -C dataplane failed (log: $TIDE_DIR/dataplane-build.log)"
    return 1
  fi
  if [[ ! -s $LAB_AGENT_BUNDLE ]]; then
    note "no agent bundle: npm run build -w @tide/agent" >&2
    npm run -s build -w @tide/agent >/dev/null || {
      echo "npm run build -w @tide/agent failed"
      return 1
    }
  fi
}

# Brings the lab up in console mode with the client load (idempotent: a healthy lab is reused and
# its registration finds everything in place). Output goes to $LAB_LOG; returns non-zero on failure.
lab_up() {
  local console_url=$1
  devstack lab:token "$console_url" >/dev/null || return 1
  : >"$LAB_LOG"
  if ! lab_cli up --console "$console_url" --token-file "$LAB_TOKEN_FILE" --load >>"$LAB_LOG" 2>&1; then
    tail -n 25 "$LAB_LOG"
    return 1
  fi
  grep -E 'served by|reusing|nothing changed|created pool' "$LAB_LOG" | sed 's/^ *//' |
    while read -r line; do note "$line"; done || :
}

# Seconds until every lab director serves the console's version (GET /api/v1/sync via lab status).
lab_wait_in_sync() {
  local i
  for ((i = 0; i < 120; i++)); do
    if lab_cli status >/dev/null 2>&1; then return 0; fi
    sleep 0.5
  done
  return 1
}

# Stops the lab `npm run up` started (load, agents, directors, proxies, namespaces): one registered
# with this console. A lab someone started by hand (standalone) is theirs to stop. The console keeps
# its records of the lab's pool, proxies and directors.
lab_down() {
  local state=$TIDE_DIR/lab/glb/state.json
  if [[ ! -f $state ]] || ! grep -q "\"url\": \"http://localhost:$CONSOLE_PORT\"" "$state"; then
    note "no lab of npm run up is running"
    return 0
  fi
  if [[ $(id -u) != 0 ]]; then
    note "a lab is recorded in $TIDE_DIR/lab but stopping it needs root"
    return 0
  fi
  lab_cli down
  ok "lab stopped"
}
