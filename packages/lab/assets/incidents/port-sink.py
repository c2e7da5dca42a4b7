#!/usr/bin/env python3
"""Accepts every connection on HOST:PORT and holds it (the far end of incident 4's connections)
until the peer goes away or SIGTERM; at most --max held. Prints {"ready": true}."""
import argparse
import json
import select
import signal
import socket
import sys

p = argparse.ArgumentParser()
p.add_argument("--host", required=True)
p.add_argument("--port", type=int, required=True)
p.add_argument("--max", type=int, default=8000)
a = p.parse_args()
signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind((a.host, a.port))
s.listen(4096)
held = []
print(json.dumps({"ready": True, "port": a.port}), flush=True)
while True:
    select.select([s], [], [], 1.0)
    try:
        s.setblocking(False)
        while True:
            c, _ = s.accept()
            held.append(c)
    except BlockingIOError:
        pass
    if len(held) > a.max:  # drop the oldest: those are the measured, already reset ones
        for c in held[: len(held) - a.max]:
            c.close()
        held = held[len(held) - a.max :]
