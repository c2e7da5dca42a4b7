#!/usr/bin/env bash
# Entrypoint of the postgres image (as the postgres user):
#   empty $PGDATA            initdb (scram-sha-256 over TCP), the $POSTGRES_USER role (CREATEDB) and
#                            the $POSTGRES_DB database, password $POSTGRES_PASSWORD
#   a cluster of this major  started as it is
#   another major version    refused with the way to carry the data over: never initdb over a
#                            volume that holds data (the console's migrations bring an older Tide
#                            schema forward; PostgreSQL's own format needs a dump and restore)
# Then the server runs in the foreground on 127.0.0.1:$PGPORT (host networking).
set -euo pipefail

: "${POSTGRES_USER:=tide}" "${POSTGRES_DB:=tide}" "${PGPORT:=5434}"
say() { printf 'tide-postgres: %s\n' "$*" >&2; }

major="$(basename "$(dirname "$(readlink -f /usr/lib/postgresql/bin)")")"

# With host networking a port taken on the host is taken here: say so before PostgreSQL's own
# "could not bind" line, with the way out; exit 0, so that the compose file's restart policy
# (on-failure) leaves it stopped instead of restarting it into the same port every few seconds.
if (exec 3<>"/dev/tcp/127.0.0.1/$PGPORT") 2>/dev/null; then
  say "port $PGPORT on 127.0.0.1 is already in use on this host (another PostgreSQL?)."
  say "Stop that server, or choose another port: TIDE_COMPOSE_PG_PORT=<port> docker-compose up -d"
  say "not starting (and not restarted: exit status 0)"
  exit 0
fi

if [[ -s $PGDATA/PG_VERSION ]]; then
  found="$(<"$PGDATA/PG_VERSION")"
  if [[ $found != "$major" ]]; then
    say "the volume holds a PostgreSQL $found cluster; this image runs PostgreSQL $major."
    say "The data is left as it is. To carry it over: start the old image on this volume and"
    say "  pg_dumpall > tide.sql, then remove the volume (docker-compose down -v), start this one"
    say "  and psql -f tide.sql. The console then migrates the schema on its next start."
    exit 1
  fi
  say "PostgreSQL $major: using the cluster in $PGDATA"
elif [[ -n $(ls -A "$PGDATA" 2>/dev/null) ]]; then
  say "$PGDATA is not empty but holds no PostgreSQL cluster (no PG_VERSION): refusing to initdb over it"
  exit 1
else
  [[ -n ${POSTGRES_PASSWORD:-} ]] || {
    say "POSTGRES_PASSWORD is not set: it is needed to create the $POSTGRES_USER role"
    exit 1
  }
  say "PostgreSQL $major: first start, initdb in $PGDATA"
  initdb -D "$PGDATA" -U postgres --encoding=UTF8 --locale=C.UTF-8 \
    --auth-local=peer --auth-host=scram-sha-256 >/dev/null
  # A private socket-only start to create the role and database, then stopped.
  pg_ctl -D "$PGDATA" -o "-c listen_addresses=''" -w -s start
  psql -v ON_ERROR_STOP=1 -q -U postgres -d postgres \
    -v user="$POSTGRES_USER" -v password="$POSTGRES_PASSWORD" -v db="$POSTGRES_DB" <<'SQL'
CREATE ROLE :"user" LOGIN CREATEDB PASSWORD :'password';
CREATE DATABASE :"db" OWNER :"user";
SQL
  pg_ctl -D "$PGDATA" -m fast -w -s stop
  say "created role $POSTGRES_USER and database $POSTGRES_DB"
fi

exec postgres -D "$PGDATA" -c listen_addresses=127.0.0.1 -p "$PGPORT"
