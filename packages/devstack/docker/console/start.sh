#!/usr/bin/env bash
# The console container's command (target console of packages/devstack/docker/Dockerfile), as user tide:
#   1. refuse a port already in use on the host (host networking), saying which and how to move;
#   2. migrate: prisma migrate deploy brings a database from an older Tide forward, never resets it;
#   3. seed (idempotent): the first admin, whose credentials go to $TIDE_DATA_DIR/admin-credentials
#      (the tide-data volume) exactly as `npm run up` writes .tide/admin-credentials, and the demo fleet;
#   4. serve: next start on $TIDE_CONSOLE_HOST:$PORT.
set -euo pipefail
cd /app

port=${PORT:-3000}
host=${TIDE_CONSOLE_HOST:-127.0.0.1}
say() { printf 'tide-console: %s\n' "$*" >&2; }

if (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then
  say "port $port is already in use on this host (a console of npm run up, or another server)."
  say "Stop it (npm run down), or choose another port: TIDE_CONSOLE_PORT=<port> docker-compose up -d"
  exit 1
fi

say "migrating the database (prisma migrate deploy)"
bash packages/db/scripts/prisma.sh migrate deploy
say "seeding (first admin, demo fleet)"
node --import tsx packages/api/src/seed/main.ts

cd apps/console
say "serving on http://$host:$port"
exec node /app/node_modules/next/dist/bin/next start -p "$port" -H "$host"
