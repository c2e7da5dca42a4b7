#!/usr/bin/env bash
# The Prisma CLI with Tide's offline setup: packages/db/prisma.config.ts (Wasm schema engine over
# node-postgres) and the timer preload. Usage: bash packages/db/scripts/prisma.sh <prisma args…>
# Migrations need DATABASE_URL; `generate` does not connect, so any URL does.
set -euo pipefail

db_dir="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
repo_root="$(cd "$db_dir/../.." && pwd)"

# No update checks or telemetry (the network reaches package registries only).
export CHECKPOINT_DISABLE=1 PRISMA_HIDE_UPDATE_MESSAGE=1
# Prisma would otherwise try to download a native schema engine for `generate`; the Wasm engine
# selected in prisma.config.ts does the migrations.
export PRISMA_SCHEMA_ENGINE_BINARY="${PRISMA_SCHEMA_ENGINE_BINARY:-/bin/false}"
if [[ "${1:-}" == "generate" ]]; then
  export DATABASE_URL="${DATABASE_URL:-postgresql://unused@127.0.0.1:1/unused}"
fi

exec node --require "$db_dir/scripts/unref-wasm-timers.cjs" "$repo_root/node_modules/prisma/build/index.js" \
  "$@" --config "$db_dir/prisma.config.ts"
