#!/usr/bin/env python3
"""Incident 4: connect() latency as the ephemeral port range fills.

Holds --hold connections to HOST:PORT (each keeps one ephemeral port), then times --measure more
connect() calls (each closed with an RST: SO_LINGER 0, so no TIME_WAIT). With --window N each
measured socket first gets IP_LOCAL_PORT_RANGE (socket option 51) = a random N-port window inside
--range-lo..--range-hi, so the kernel scans only that window. Bounded by --max-ms.
Prints one JSON line: held, hold errors, measured latencies (us), errors by errno, even-port share.
"""
import argparse
import errno
import json
import random
import socket
import statistics
import struct
import time

IP_LOCAL_PORT_RANGE = 51
p = argparse.ArgumentParser()
p.add_argument("--host", required=True)
p.add_argument("--port", type=int, required=True)
p.add_argument("--hold", type=int, default=0)
p.add_argument("--measure", type=int, default=300)
p.add_argument("--window", type=int, default=0)
p.add_argument("--warmup", type=int, default=50, help="untimed connects first (caches, branch predictors)")
p.add_argument("--range-lo", type=int, default=50000)
p.add_argument("--range-hi", type=int, default=51999)
p.add_argument("--hold-ms", type=int, default=0, help="keep the held ports this long after measuring")
p.add_argument("--max-ms", type=int, default=30000)
a = p.parse_args()
deadline = time.monotonic() + a.max_ms / 1000

held, hold_errors = [], {}
for _ in range(a.hold):
    if time.monotonic() > deadline:
        break
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    try:
        s.connect((a.host, a.port))
        held.append(s)
    except OSError as e:
        name = errno.errorcode.get(e.errno or 0, str(e.errno))
        hold_errors[name] = hold_errors.get(name, 0) + 1
        s.close()
even = sum(1 for s in held if s.getsockname()[1] % 2 == 0)

lat, errors = [], {}
linger = struct.pack("ii", 1, 0)
for i in range(a.warmup + a.measure):
    if time.monotonic() > deadline:
        break
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, linger)
    if a.window > 0:
        lo = random.randint(a.range_lo, a.range_hi - a.window + 1)
        s.setsockopt(socket.IPPROTO_IP, IP_LOCAL_PORT_RANGE, struct.pack("I", ((lo + a.window - 1) << 16) | lo))
    t0 = time.perf_counter_ns()
    try:
        s.connect((a.host, a.port))
        if i >= a.warmup:
            lat.append((time.perf_counter_ns() - t0) / 1000)
    except OSError as e:
        if i < a.warmup:
            s.close()
            continue
        lat.append((time.perf_counter_ns() - t0) / 1000)
        name = errno.errorcode.get(e.errno or 0, str(e.errno))
        errors[name] = errors.get(name, 0) + 1
    s.close()

def pct(q):
    if not lat:
        return None
    xs = sorted(lat)
    return round(xs[min(len(xs) - 1, int(q * len(xs)))], 1)

if a.hold_ms > 0:
    time.sleep(min(a.hold_ms / 1000, max(0.0, deadline - time.monotonic())))
for s in held:
    s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, linger)
    s.close()
print(json.dumps({
    "held": len(held), "hold_errors": hold_errors, "held_even": even,
    "measured": len(lat), "errors": errors, "window": a.window,
    "median_us": round(statistics.median(lat), 1) if lat else None,
    "p25_us": pct(0.25), "p90_us": pct(0.9), "mean_us": round(statistics.mean(lat), 1) if lat else None,
}), flush=True)
