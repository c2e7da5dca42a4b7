#!/usr/bin/env python3
"""A raw TCP client in two steps, to change the table between a SYN and its cookie ACK.

    cookie-client.py syn SRC SPORT VIP PORT STATE_FILE     -> sends a SYN, waits for the SYN-ACK,
                                                              writes {seq, ack} to STATE_FILE
    cookie-client.py ack SRC SPORT VIP PORT STATE_FILE     -> sends the ACK carrying an HTTP
                                                              request, prints the reply's first bytes
Runs inside the client namespace (root). The kernel would answer the SYN-ACK with a RST (no socket
owns SPORT); callers drop that RST with nft so the handshake stays half-open meanwhile.
"""
import json
import socket
import struct
import sys
import time
from importlib.util import module_from_spec, spec_from_file_location
from pathlib import Path

_spec = spec_from_file_location("syn_flood", Path(__file__).with_name("syn-flood.py"))
_flood = module_from_spec(_spec)
_spec.loader.exec_module(_flood)
csum = _flood.csum


def segment(src, dst, sport, dport, seq, ack, flags, payload=b""):
    tcp = struct.pack("!HHIIBBHHH", sport, dport, seq, ack, 5 << 4, flags, 64240, 0, 0) + payload
    pseudo = src + dst + struct.pack("!BBH", 0, 6, len(tcp))
    tcp = tcp[:16] + struct.pack("!H", csum(pseudo + tcp)) + tcp[18:]
    ip = struct.pack("!BBHHHBBH4s4s", 0x45, 0, 20 + len(tcp), 0, 0x4000, 64, 6, 0, src, dst)
    return ip[:10] + struct.pack("!H", csum(ip)) + ip[12:] + tcp


def receive(sniff, vip, dport, sport, want, timeout):
    """First TCP segment VIP:dport -> us:sport accepted by want(flags, seq, ack, payload)."""
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        sniff.settimeout(max(0.05, end - time.monotonic()))
        try:
            pkt = sniff.recv(65535)
        except TimeoutError:
            break
        ihl = (pkt[0] & 0xF) * 4
        if pkt[9] != 6 or pkt[12:16] != vip:
            continue
        sp, dp, seq, ack, off, flags = struct.unpack("!HHIIBB", pkt[ihl:ihl + 14])
        payload = pkt[ihl + (off >> 4) * 4:]
        if sp == dport and dp == sport and want(flags, seq, ack, payload):
            return flags, seq, ack, payload
    return None


def main():
    step, src_s, sport, vip_s, port, state = sys.argv[1], sys.argv[2], int(sys.argv[3]), \
        sys.argv[4], int(sys.argv[5]), Path(sys.argv[6])
    src, vip = socket.inet_aton(src_s), socket.inet_aton(vip_s)
    raw = socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_RAW)
    raw.setsockopt(socket.SOL_IP, socket.IP_HDRINCL, 1)
    sniff = socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_TCP)
    if step == "syn":
        isn = 0x10203040
        raw.sendto(segment(src, vip, sport, port, isn, 0, 0x02), (vip_s, 0))
        got = receive(sniff, vip, port, sport, lambda f, s, a, p: f & 0x12 == 0x12 and a == isn + 1, 5)
        if not got:
            print(json.dumps({"ok": False, "error": "no SYN-ACK"}))
            return 1
        state.write_text(json.dumps({"seq": isn + 1, "ack": (got[1] + 1) & 0xFFFFFFFF}))
        print(json.dumps({"ok": True, "cookie": got[1]}))
        return 0
    st = json.loads(state.read_text())
    request = b"GET / HTTP/1.0\r\n\r\n"
    raw.sendto(segment(src, vip, sport, port, st["seq"], st["ack"], 0x18, request), (vip_s, 0))
    got = receive(sniff, vip, port, sport, lambda f, s, a, p: len(p) > 0, 5)
    if not got:
        print(json.dumps({"ok": False, "error": "no reply to the cookie ACK"}))
        return 1
    print(json.dumps({"ok": True, "reply": got[3][:200].decode("latin-1")}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
