# Shared by the dev stack scripts (sourced): repo root, output, environment.
# shellcheck shell=bash

TIDE_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../../../.." && pwd)"
TIDE_DIR="${TIDE_DATA_DIR:-$TIDE_ROOT/.tide}"
# Telemetry and update checks off: the network reaches package registries only.
export TURBO_TELEMETRY_DISABLED=1 NEXT_TELEMETRY_DISABLED=1 CHECKPOINT_DISABLE=1 PRISMA_HIDE_UPDATE_MESSAGE=1
export npm_config_update_notifier=false npm_config_fund=false npm_config_audit=false

if [[ -t 1 ]]; then
  _bold=$'\e[1m' _green=$'\e[32m' _red=$'\e[31m' _dim=$'\e[2m' _reset=$'\e[0m'
else
  _bold="" _green="" _red="" _dim="" _reset=""
fi

# step "Doing X": a numbered heading for the next thing the script does.
_step_no=0
step() {
  _step_no=$((_step_no + 1))
  printf '\n%s==> [%d] %s%s\n' "$_bold" "$_step_no" "$*" "$_reset"
}
ok() { printf '%s    ok%s %s\n' "$_green" "$_reset" "$*"; }
note() { printf '%s    %s%s\n' "$_dim" "$*" "$_reset"; }
die() {
  printf '\n%sERROR:%s %s\n' "$_red" "$_reset" "$*" >&2
  exit 1
}

# devstack <command>: the TypeScript CLI (packages/devstack/src/cli.ts).
devstack() { (cd "$TIDE_ROOT" && node --import tsx packages/devstack/src/cli.ts "$@"); }
