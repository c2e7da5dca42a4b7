#!/usr/bin/env python3
"""Opens --count non-blocking connections to HOST:PORT as fast as it can (bounded by --duration-ms),
holds them until the duration ends, then closes them. The kernel retransmits SYNs and final ACKs
on its own. Prints one JSON line: attempted, connected (writable without error at the end)."""
import argparse
import errno
import json
import select
import socket
import time

p = argparse.ArgumentParser()
p.add_argument("--host", required=True)
p.add_argument("--port", type=int, required=True)
p.add_argument("--count", type=int, required=True)
p.add_argument("--duration-ms", type=int, required=True)
a = p.parse_args()

deadline = time.monotonic() + a.duration_ms / 1000
socks, errors = [], {}
for _ in range(a.count):
    if time.monotonic() >= deadline:
        break
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.setblocking(False)
    rc = s.connect_ex((a.host, a.port))
    if rc not in (0, errno.EINPROGRESS):
        errors[errno.errorcode.get(rc, str(rc))] = errors.get(errno.errorcode.get(rc, str(rc)), 0) + 1
        s.close()
        continue
    socks.append(s)
remaining = deadline - time.monotonic()
if remaining > 0:
    time.sleep(remaining)
connected = 0
for s in socks:
    poller = select.poll()
    poller.register(s, select.POLLOUT)
    if poller.poll(0) and s.getsockopt(socket.SOL_SOCKET, socket.SO_ERROR) == 0:
        connected += 1
    s.close()
print(json.dumps({"attempted": len(socks), "connected": connected, "errors": errors}), flush=True)
