#!/usr/bin/env python3
"""Incident 6: sends --size-byte writes with TCP_NODELAY (one small segment each) to HOST:PORT
for --duration-ms, over --conns connections. Prints one JSON line with the bytes sent."""
import argparse
import json
import select
import socket
import time

p = argparse.ArgumentParser()
p.add_argument("--host", required=True)
p.add_argument("--port", type=int, required=True)
p.add_argument("--size", type=int, default=64)
p.add_argument("--conns", type=int, default=1)
p.add_argument("--duration-ms", type=int, default=3000)
a = p.parse_args()
socks = []
for _ in range(a.conns):
    s = socket.create_connection((a.host, a.port), timeout=5)
    s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    s.setblocking(False)
    socks.append(s)
payload = b"x" * a.size
sent, writes = 0, 0
deadline = time.monotonic() + a.duration_ms / 1000
while time.monotonic() < deadline:
    progressed = False
    for s in socks:
        try:
            sent += s.send(payload)
            writes += 1
            progressed = True
        except BlockingIOError:
            pass
    if not progressed:
        select.select([], socks, [], 0.01)
for s in socks:
    s.close()
print(json.dumps({"sent": sent, "writes": writes}), flush=True)
