#!/usr/bin/env python3
"""Incident 7: floods HOST:PORT with --size-byte UDP datagrams for --duration-ms from --senders
processes, each pinned to --cpu when given. Without RPS a veth delivers on the sending CPU, whose
NET_RX then handles each datagram before the send returns; incident 7 pins the senders away from
the CPU RPS steers to, so they keep queueing into its backlog. Prints one JSON line: datagrams
sent, and send errors (ENOBUFS/EAGAIN when the path pushes back) by name."""
import argparse
import errno
import json
import multiprocessing
import os
import socket
import time

SO_SNDBUFFORCE = 32  # <asm-generic/socket.h>; the socket module does not export it

p = argparse.ArgumentParser()
p.add_argument("--host", required=True)
p.add_argument("--port", type=int, required=True)
p.add_argument("--size", type=int, default=64)
p.add_argument("--senders", type=int, default=1)
p.add_argument("--cpu", type=int, default=-1)
p.add_argument("--duration-ms", type=int, default=3000)
# SO_SNDBUFFORCE (root): a default send buffer caps the datagrams in flight per socket (~250),
# too few to fill a CPU's input backlog; 0 keeps the default.
p.add_argument("--sndbuf", type=int, default=0)
a = p.parse_args()


def send(out) -> None:
    if a.cpu >= 0:
        os.sched_setaffinity(0, {a.cpu})
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    if a.sndbuf > 0:
        s.setsockopt(socket.SOL_SOCKET, SO_SNDBUFFORCE, a.sndbuf)
    payload = b"x" * a.size
    dest = (a.host, a.port)
    sent, errors = 0, {}
    deadline = time.monotonic() + a.duration_ms / 1000
    while time.monotonic() < deadline:
        for _ in range(64):
            try:
                s.sendto(payload, dest)
                sent += 1
            except OSError as e:
                name = errno.errorcode.get(e.errno or 0, str(e.errno))
                errors[name] = errors.get(name, 0) + 1
    out.put({"sent": sent, "errors": errors})


if __name__ == "__main__":
    q = multiprocessing.Queue()
    procs = [multiprocessing.Process(target=send, args=(q,)) for _ in range(a.senders)]
    for pr in procs:
        pr.start()
    total = {"sent": 0, "errors": {}}
    for _ in procs:
        try:  # a sender that crashed puts nothing: do not wait forever
            r = q.get(timeout=a.duration_ms / 1000 + 10)
        except Exception:
            r = {"sent": 0, "errors": {"sender_failed": 1}}
        total["sent"] += r["sent"]
        for k, v in r["errors"].items():
            total["errors"][k] = total["errors"].get(k, 0) + v
    for pr in procs:
        pr.join()
    print(json.dumps(total), flush=True)
