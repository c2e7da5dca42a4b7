#!/usr/bin/env bash
# The one base image every Tide Dockerfile starts FROM (their ARG BASE_IMAGE):
#   bash packages/devstack/docker/base-image.sh [trixie|bookworm]      (default: trixie)
# First checks that a Docker engine answers (and says how to get one when none does: the compose
# stack's first real problem on a new machine, not a missing registry). Then tags
# debian:<suite>-slim in the Docker engine that `docker` talks to ($DOCKER_HOST), by the first
# way that works:
#   1. the engine has it already: made here (step 3), or pulled at the pinned digest;
#   2. `docker pull` of the pinned digest from a registry (most machines), tagged as above;
#   3. made here from Debian's packages: debootstrap --variant=minbase, trimmed like Docker's -slim
#      images (no docs, man pages or locales; no recommends), then `docker import` (root needed;
#      about 30 s). Build machines reach Debian's mirrors but no image registry.
# Pinned by digest (the multi-platform index of Debian's dated -slim tag), so that a registry build
# starts from the same bytes every time, whenever the floating tag moves: from Docker's official
# image metadata, https://github.com/docker-library/repo-info/tree/master/repos/debian/remote
# (trixie-20260918-slim.md, bookworm-20260918-slim.md). To move the pin, take the new dated tag's
# index digest from there (or `docker buildx imagetools inspect debian:trixie-slim`) and change it
# below; TIDE_BASE_IMAGE_PIN=<image>@sha256:<digest> overrides it (a mirror, a newer build).
# No registry answered where this pin was written: its pull path is untested here (see the README).
# Node needs trixie (Debian 13: nodejs 20.19, PostgreSQL 17); bookworm's nodejs is 18, too old for
# the console (package.json engines), so bookworm only suits the PostgreSQL image.
# TIDE_DEBIAN_MIRROR overrides the mirror (default http://deb.debian.org/debian). The machine's
# own CA certificates (/usr/local/share/ca-certificates, e.g. an egress proxy's) go into a base made
# here, so that npm inside the builds trusts what the host trusts (images that install Debian's
# ca-certificates pick them up).
set -euo pipefail

suite=${1:-trixie}
[[ $suite == trixie || $suite == bookworm ]] || {
  echo "base-image.sh: unknown suite '$suite' (trixie or bookworm)" >&2
  exit 64
}
tag="debian:$suite-slim"
case $suite in
  trixie) pin="debian:trixie-20260918-slim@sha256:a99cfc517144bc59b1978475ec53b46ecabec7e43635402ee5b77cc54cd1b20a" ;;
  bookworm) pin="debian:bookworm-20260918-slim@sha256:3783cc01769c7b2b1b83a5c5ad96c815348e28ed7da68e2e3687004faa906251" ;;
esac
pin=${TIDE_BASE_IMAGE_PIN:-$pin}
pin_digest=${pin##*@}
[[ $pin_digest == sha256:* && ${#pin_digest} == 71 ]] || {
  echo "base-image.sh: TIDE_BASE_IMAGE_PIN must end in @sha256:<64 hex digits>, not '$pin'" >&2
  exit 64
}

# What a default dockerd does to the host, and how to run one that leaves the host alone: this
# stack uses host networking, so it needs no bridge, NAT or forwarding.
engine_help() {
  cat >&2 <<'HELP'
  Get one (Debian or Ubuntu, as root):
    apt-get install -y docker.io docker-compose
    systemctl start docker            # or: dockerd & (no systemd)
  Debian 12's docker-compose is v1 (1.29): the command is `docker-compose`, not `docker compose`.
  A default dockerd changes the host's firewall: it sets iptables' FORWARD policy to DROP, adds its
  DOCKER and NAT chains and a docker0 bridge, and turns on ip_forward (which can cut off VMs,
  containers of other tools and network-namespace labs). Nothing in this stack needs that (every
  service uses the host's network), so it can run with, in /etc/docker/daemon.json:
    {"iptables": false, "ip6tables": false, "bridge": "none", "ip-forward": false}
  The compose test tier (npm test -- compose) does not touch the host's engine: it starts its own
  dockerd with those flags and its own socket (packages/devstack/docker/tier/own-dockerd.ts).
HELP
}
if ! command -v docker >/dev/null; then
  echo "base-image.sh: no docker command: Docker is not installed." >&2
  engine_help
  exit 69
fi
if ! engine_error="$(docker version --format '{{.Server.Version}}' 2>&1 >/dev/null)"; then
  echo "base-image.sh: no Docker engine answers at ${DOCKER_HOST:-unix:///var/run/docker.sock}:" >&2
  printf '  %s\n' "$(printf '%s\n' "$engine_error" | grep -v '^\s*$' | tail -n 1)" >&2
  engine_help
  exit 69
fi
if ! command -v docker-compose >/dev/null && ! docker compose version >/dev/null 2>&1; then
  echo "base-image.sh: note: neither docker-compose nor \`docker compose\` is installed: apt-get install docker-compose" >&2
fi
mirror=${TIDE_DEBIAN_MIRROR:-http://deb.debian.org/debian}
# A registry that does not answer must not hold the build up for long.
PULL_TIMEOUT_S=60

# What the engine's $tag is: "made" here (an import has no registry digest), "pinned" (pulled at
# the pin), "other" (pulled some other way, e.g. `docker pull` of the floating tag) or "none".
present() {
  local digests
  digests="$(docker image inspect -f '{{join .RepoDigests " "}}' "$tag" 2>/dev/null)" || {
    echo none
    return
  }
  if [[ -z $digests ]]; then
    echo made
  elif [[ " $digests " == *"@$pin_digest "* ]]; then
    echo pinned
  else
    echo other
  fi
}
have="$(present)"
case $have in
  made)
    echo "base image $tag: present (made here)"
    exit 0
    ;;
  pinned)
    echo "base image $tag: present (pulled at $pin_digest)"
    exit 0
    ;;
esac
if timeout "$PULL_TIMEOUT_S" docker pull -q "$pin" >/dev/null 2>&1; then
  docker tag "$pin" "$tag"
  echo "base image $tag: pulled $pin"
  exit 0
fi
if [[ $have == other ]]; then
  echo "base image $tag: present but not the pinned $pin_digest (pulled by tag?), and no registry" \
    "serves the pin: building on it as it is" >&2
  exit 0
fi

echo "base image $tag: no registry answers; making it with debootstrap from $mirror"
[[ $(id -u) == 0 ]] || {
  echo "base-image.sh: debootstrap needs root (or a registry that serves $tag)" >&2
  exit 1
}
command -v debootstrap >/dev/null || {
  echo "base-image.sh: debootstrap is missing: apt-get install -y debootstrap" >&2
  exit 1
}

rootfs="$(mktemp -d /tmp/tide-base-rootfs.XXXXXX)"
log="$rootfs.log"
cleanup() {
  # debootstrap mounts /proc and /sys in the target while it installs; never leave one behind.
  local m
  for m in "$rootfs/proc" "$rootfs/sys" "$rootfs/dev/pts" "$rootfs/dev"; do
    mountpoint -q "$m" 2>/dev/null && umount -l "$m"
  done
  rm -rf "$rootfs"
}
trap cleanup EXIT

start=$SECONDS
if ! debootstrap --variant=minbase "$suite" "$rootfs" "$mirror" >"$log" 2>&1; then
  tail -n 30 "$log" >&2
  echo "base-image.sh: debootstrap failed (log: $log)" >&2
  exit 1
fi
rm -f "$log"

# What Docker's official -slim images configure: no documentation, man pages or translations in
# installed packages, no recommended packages, no apt caches kept in layers.
cat >"$rootfs/etc/dpkg/dpkg.cfg.d/docker-slim" <<'EOF'
path-exclude /usr/share/doc/*
path-include /usr/share/doc/*/copyright
path-exclude /usr/share/man/*
path-exclude /usr/share/info/*
path-exclude /usr/share/locale/*
path-exclude /usr/share/lintian/*
EOF
cat >"$rootfs/etc/apt/apt.conf.d/docker-slim" <<'EOF'
APT::Install-Recommends "false";
APT::Install-Suggests "false";
Acquire::Languages "none";
DPkg::Post-Invoke { "rm -f /var/cache/apt/archives/*.deb /var/cache/apt/*.bin || true"; };
EOF
rm -rf "$rootfs"/usr/share/doc/*/[!c]* "$rootfs"/usr/share/man/* "$rootfs"/usr/share/locale/* \
  "$rootfs"/var/lib/apt/lists/* "$rootfs"/var/cache/apt/*.bin "$rootfs"/var/cache/apt/archives/*.deb \
  "$rootfs"/var/log/*.log "$rootfs"/etc/hostname "$rootfs"/etc/resolv.conf
: >"$rootfs/etc/machine-id"
if compgen -G "/usr/local/share/ca-certificates/*.crt" >/dev/null; then
  mkdir -p "$rootfs/usr/local/share/ca-certificates"
  cp /usr/local/share/ca-certificates/*.crt "$rootfs/usr/local/share/ca-certificates/"
fi
# Package installs in image builds must not try to start services (there is no init system).
printf '#!/bin/sh\nexit 101\n' >"$rootfs/usr/sbin/policy-rc.d"
chmod 755 "$rootfs/usr/sbin/policy-rc.d"

tar --numeric-owner -C "$rootfs" -c . |
  docker import --change 'CMD ["bash"]' --change 'ENV LANG=C.UTF-8' - "$tag" >/dev/null
echo "base image $tag: made in $((SECONDS - start)) s ($(docker image inspect -f '{{.Size}}' "$tag" | numfmt --to=iec))"
