#!/usr/bin/env python3
"""Incident 6: accepts on HOST:PORT and reads slowly: every --interval-ms it reads at most
--chunk bytes from each connection, so the receive queue fills with the sender's small skbs and
the kernel prunes/collapses it. Prints {"ready": true}; SIGTERM ends it."""
import argparse
import json
import signal
import socket
import sys
import time

p = argparse.ArgumentParser()
p.add_argument("--host", required=True)
p.add_argument("--port", type=int, required=True)
p.add_argument("--interval-ms", type=int, default=50)
p.add_argument("--chunk", type=int, default=4096)
a = p.parse_args()
signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind((a.host, a.port))
s.listen(64)
s.setblocking(False)
conns = []
print(json.dumps({"ready": True, "port": a.port}), flush=True)
while True:
    try:
        c, _ = s.accept()
        c.setblocking(False)
        conns.append(c)
    except BlockingIOError:
        pass
    for c in list(conns):
        try:
            if c.recv(a.chunk) == b"":
                conns.remove(c)
                c.close()
        except BlockingIOError:
            pass
        except OSError:
            conns.remove(c)
            c.close()
    time.sleep(a.interval_ms / 1000)
