#!/usr/bin/env python3
"""Incident 7: --count TCP listeners on one --port, each bound to its own address
10.207.X.Y (needs net.ipv4.ip_nonlocal_bind=1 in the namespace), or with --wildcard a single
0.0.0.0 listener (the remedy). Holds them until SIGTERM or --lifetime-ms; prints {"ready": true}."""
import argparse
import json
import resource
import signal
import socket
import sys
import time

p = argparse.ArgumentParser()
p.add_argument("--port", type=int, required=True)
p.add_argument("--count", type=int, default=16000)
p.add_argument("--wildcard", action="store_true")
p.add_argument("--lifetime-ms", type=int, default=120000)
a = p.parse_args()
signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))

def listen(addr):
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.bind((addr, a.port))
    s.listen(16)
    return s

held = []
if a.wildcard:
    held.append(listen("0.0.0.0"))
else:
    for i in range(a.count):
        n = i + 1  # 10.207.0.1, 10.207.0.2, ... 10.207.62.128 for 16000
        held.append(listen(f"10.207.{n >> 8}.{n & 255}"))
print(json.dumps({"ready": True, "port": a.port, "listeners": len(held)}), flush=True)
time.sleep(a.lifetime_ms / 1000)
