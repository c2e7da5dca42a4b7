#!/usr/bin/env python3
"""A listener that accepts slowly (incident 1: accept queue overflow).

listen(--backlog) is capped by net.core.somaxconn of this namespace. Every --accept-interval-ms it
accepts (and closes) at most one connection. SIGUSR1 calls listen() again with --backlog (the
effective backlog is re-read from somaxconn then: the remedy after raising it). SIGTERM ends it.
Prints JSON lines: {"ready": true, ...} then {"relisten": N}.
"""
import argparse
import json
import signal
import socket
import time

p = argparse.ArgumentParser()
p.add_argument("--host", required=True)
p.add_argument("--port", type=int, required=True)
p.add_argument("--backlog", type=int, required=True)
p.add_argument("--accept-interval-ms", type=int, default=500)
a = p.parse_args()

s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind((a.host, a.port))
s.listen(a.backlog)
s.setblocking(False)
state = {"stop": False, "relisten": False}
signal.signal(signal.SIGTERM, lambda *_: state.update(stop=True))
signal.signal(signal.SIGUSR1, lambda *_: state.update(relisten=True))
print(json.dumps({"ready": True, "port": a.port, "requested_backlog": a.backlog}), flush=True)
accepted = 0
while not state["stop"]:
    if state["relisten"]:
        state["relisten"] = False
        s.listen(a.backlog)
        print(json.dumps({"relisten": a.backlog}), flush=True)
    try:
        c, _ = s.accept()
        c.close()
        accepted += 1
    except BlockingIOError:
        pass
    time.sleep(a.accept_interval_ms / 1000)
print(json.dumps({"accepted": accepted}), flush=True)
