#!/usr/bin/env bash
# The console image's healthcheck: GET /api/health with bash's own /dev/tcp (no node, no curl: a
# couple of milliseconds of CPU). read -t bounds the wait, so a check returns within 5 s even on an
# engine that does not kill checks at their timeout (Docker 20.10), and none pile up.
exec 3<>"/dev/tcp/127.0.0.1/${PORT:-3100}" || exit 1
printf 'GET /api/health HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n' >&3
read -r -t 5 _ status _ <&3 || exit 1
[[ $status == 200 ]]
