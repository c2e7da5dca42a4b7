#!/usr/bin/env bash
# The fleet image's healthcheck: reads the status file start.sh's watcher keeps (status-watch.ts)
# instead of running the lab's CLI. Healthy when its line says in-sync and was written within
# MAX_AGE_S (three of the watcher's 15 s rounds and some slack for a busy host). Builtins only.
MAX_AGE_S=90
file=${TIDE_FLEET_STATUS_FILE:-/run/tide-fleet.status}
read -r state written why <"$file" 2>/dev/null || { echo "no status yet ($file)"; exit 1; }
age=$((EPOCHSECONDS - written))
((age <= MAX_AGE_S)) || { echo "status is ${age} s old: the watcher is not running"; exit 1; }
[[ $state == in-sync ]] || { echo "$state: $why"; exit 1; }
