#!/usr/bin/env bash
# The console container's command (target console of packages/devstack/docker/Dockerfile: the
# release tree in /app), as user tide:
#   1. refuse a port already in use on the host (host networking), saying which and how to move,
#      and exit 0: the compose file's restart policy (on-failure) then leaves it stopped instead of
#      restarting it into the same port every few seconds;
#   2. wait for PostgreSQL to accept connections (as long as it takes on a busy host; a message
#      every 30 s), instead of a fixed timeout;
#   3. migrate: tide-console migrate brings a database from an older Tide forward, never resets it;
#   4. seed (idempotent): the first admin, whose credentials go to $TIDE_DATA_DIR/admin-credentials
#      (the tide-data volume) exactly as `npm run up` writes .tide/admin-credentials, and the demo fleet;
#   5. serve: tide-console serve on $TIDE_CONSOLE_HOST:$PORT (exec: the init passes SIGTERM to it).
set -euo pipefail
cd /app

port=${PORT:-3100}
host=${TIDE_CONSOLE_HOST:-127.0.0.1}
say() { printf 'tide-console: %s\n' "$*" >&2; }

if (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then
  say "port $port is already in use on this host (a console of npm run up, or another server)."
  say "Stop it, or choose another port: TIDE_COMPOSE_CONSOLE_PORT=<port> docker-compose up -d"
  say "not starting (and not restarted: exit status 0)"
  exit 0
fi

# DATABASE_URL's host and port (postgresql://user:password@host:port/db). A URL this cannot read
# (no port, a Unix socket in ?host=) is not waited for: migrate's retries below cover a slow start.
db_hostport=${DATABASE_URL#*@}
db_hostport=${db_hostport%%/*}
db_host=${db_hostport%:*}
db_port=${db_hostport##*:}
if [[ -z $db_host || ! $db_port =~ ^[0-9]+$ ]]; then
  say "DATABASE_URL names no TCP host:port; not waiting for PostgreSQL before migrating"
  db_host=
fi
waited=0
until [[ -z $db_host ]] || (exec 3<>"/dev/tcp/$db_host/$db_port") 2>/dev/null; do
  ((waited % 30 != 0)) || say "waiting for PostgreSQL on $db_host:$db_port (${waited} s)"
  sleep 1
  waited=$((waited + 1))
done

say "migrating the database (tide-console migrate)"
# PostgreSQL may accept TCP before it accepts sessions (recovery after a kill): retry a few times.
for attempt in 1 2 3 4 5 6; do
  node tide-console.mjs migrate && break
  ((attempt < 6)) || exit 1
  say "migrate failed; trying again in 5 s"
  sleep 5
done
say "seeding (first admin, demo fleet)"
node seed.mjs

say "serving on http://$host:$port"
export PORT=$port TIDE_CONSOLE_HOST=$host
exec node tide-console.mjs serve
