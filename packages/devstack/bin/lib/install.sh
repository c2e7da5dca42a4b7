# Installs what Tide needs on Debian 12 (sourced by tide-up, tide-test and .ci/run):
#   tide_install_system        apt packages, only those missing (root needed only then)
#   tide_install_node_modules  npm ci, only when node_modules differs from package-lock.json
#   tide_generate_prisma       the Prisma client (npm 11 may skip Prisma's own install scripts)
#   tide_install_python_tools  ruff (Python lint, not in Debian 12) in a venv under .tide/tools
#   tide_install               all four
#   tide_install_docker        docker.io + debootstrap for the compose tier (not part of tide_install)
# A second run finds everything in place and takes about a second.
# shellcheck shell=bash
# shellcheck source=common.sh
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

PG_BIN_DIR=/usr/lib/postgresql/15/bin

# Debian packages the data plane needs: DPDK 22.11 (director), jansson (control socket JSON),
# OpenSSL libcrypto (table content hashes), clang + compiler-rt (libFuzzer, sanitizers),
# clang-format (C style), scapy + pytest + jsonschema (packet tests), iproute2/ethtool (namespaces),
# valgrind (instructions per packet in the benchmark), bpftool + libbpf (tide-redirect, probes),
# python3-venv (the lint tier's ruff, tide_install_python_tools).
TIDE_DATAPLANE_PACKAGES=(dpdk libdpdk-dev pkg-config make gcc clang llvm libclang-rt-14-dev
  clang-format libjansson-dev libssl-dev libpcap-dev python3-scapy python3-pytest python3-jsonschema
  python3-venv iproute2 ethtool nftables iputils-ping iputils-tracepath valgrind bpftool libbpf-dev libelf-dev zlib1g-dev socat)

tide_install_system() {
  local missing=()
  [[ -x $PG_BIN_DIR/postgres && -x $PG_BIN_DIR/initdb && -x $PG_BIN_DIR/pg_ctl ]] || missing+=(postgresql-15)
  command -v chromium >/dev/null || missing+=(chromium)              # Playwright (e2e)
  command -v docker-compose >/dev/null || missing+=(docker-compose)  # compose file parser (tests)
  [[ -s /etc/ssl/certs/ca-certificates.crt ]] || missing+=(ca-certificates)
  local pkg
  for pkg in "${TIDE_DATAPLANE_PACKAGES[@]}"; do
    [[ $(dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null) == "install ok installed" ]] || missing+=("$pkg")
  done
  if ((${#missing[@]} == 0)); then
    ok "system packages present (postgresql-15, chromium, docker-compose, DPDK and data plane tools)"
    return
  fi
  [[ $(id -u) == 0 ]] || die "missing Debian packages: ${missing[*]}
       install them as root: apt-get install -y --no-install-recommends ${missing[*]}"
  note "installing Debian packages: ${missing[*]}"
  # Tide runs its own cluster: the postgresql-15 package must not create and start "15/main".
  mkdir -p /etc/postgresql-common/createcluster.d
  echo "create_main_cluster = false" >/etc/postgresql-common/createcluster.d/tide.conf
  local log
  log="$(mktemp /tmp/tide-apt.XXXXXX.log)"
  if ! DEBIAN_FRONTEND=noninteractive apt-get update >"$log" 2>&1 ||
    ! DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends "${missing[@]}" >>"$log" 2>&1; then
    tail -n 40 "$log"
    die "apt-get failed (full log: $log)"
  fi
  rm -f "$log"
  ok "installed ${missing[*]}"
}

tide_install_node_modules() {
  local why
  if why="$(cd "$TIDE_ROOT" && node packages/devstack/bin/lib/node-modules-current.mjs)"; then
    ok "node_modules matches package-lock.json"
    return
  fi
  note "npm ci ($why)"
  # Never --omit=optional: Next's SWC compiler and turbo's binary are optional dependencies.
  (cd "$TIDE_ROOT" && npm ci --no-audit --no-fund)
  ok "node_modules installed"
}

tide_generate_prisma() {
  local output
  output="$(cd "$TIDE_ROOT" && bash packages/db/scripts/prisma.sh generate 2>&1)" || {
    printf '%s\n' "$output"
    die "prisma generate failed (output above)"
  }
  ok "Prisma client generated"
}

# The compose tier's Docker engine and base-image maker. The packages' services are never started:
# a default dockerd changes the host's firewall and bridges (the tier runs its own, see
# packages/devstack/docker/tier/own-dockerd.ts); a policy-rc.d (exit 101) holds them back while
# apt runs when the machine has none.
tide_install_docker() {
  local missing=() pkg
  for pkg in docker.io debootstrap; do
    [[ $(dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null) == "install ok installed" ]] || missing+=("$pkg")
  done
  if ((${#missing[@]} == 0)); then
    ok "docker.io and debootstrap present"
    return
  fi
  [[ $(id -u) == 0 ]] || die "missing Debian packages: ${missing[*]}
       install them as root: apt-get install -y --no-install-recommends ${missing[*]}"
  note "installing Debian packages: ${missing[*]} (their services are not started)"
  local policy=/usr/sbin/policy-rc.d ours=0 log
  if [[ ! -e $policy ]]; then
    printf '#!/bin/sh\nexit 101\n' >"$policy" && chmod 755 "$policy" && ours=1
  fi
  log="$(mktemp /tmp/tide-apt.XXXXXX.log)"
  if ! DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends "${missing[@]}" >"$log" 2>&1 &&
    ! { DEBIAN_FRONTEND=noninteractive apt-get update >>"$log" 2>&1 &&
      DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends "${missing[@]}" >>"$log" 2>&1; }; then
    ((ours)) && rm -f "$policy"
    tail -n 40 "$log"
    die "apt-get failed (full log: $log)"
  fi
  ((ours)) && rm -f "$policy"
  rm -f "$log"
  ok "installed ${missing[*]}"
}

# ruff lints the repository's Python (ruff.toml; the lint tier). Debian 12 does not package it, so
# it comes from PyPI, pinned, into a venv of its own: nothing is installed into the system Python.
TIDE_RUFF_VERSION=0.17.5
TIDE_PYTHON_TOOLS="$TIDE_ROOT/.tide/tools/python"

tide_install_python_tools() {
  local ruff="$TIDE_PYTHON_TOOLS/bin/ruff"
  if [[ -x $ruff && $("$ruff" --version 2>/dev/null) == "ruff $TIDE_RUFF_VERSION" ]]; then
    ok "ruff $TIDE_RUFF_VERSION present"
    return
  fi
  note "installing ruff $TIDE_RUFF_VERSION into ${TIDE_PYTHON_TOOLS#"$TIDE_ROOT"/}"
  local log
  log="$(mktemp /tmp/tide-pip.XXXXXX.log)"
  if ! { python3 -m venv --clear "$TIDE_PYTHON_TOOLS" &&
    "$TIDE_PYTHON_TOOLS/bin/pip" install --quiet --disable-pip-version-check "ruff==$TIDE_RUFF_VERSION"; } >"$log" 2>&1; then
    tail -n 40 "$log"
    die "installing ruff failed (full log: $log)"
  fi
  rm -f "$log"
  ok "ruff $TIDE_RUFF_VERSION installed"
}

tide_install() {
  tide_install_system
  tide_install_node_modules
  tide_generate_prisma
  tide_install_python_tools
}
