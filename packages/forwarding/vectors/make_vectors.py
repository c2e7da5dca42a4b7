#!/usr/bin/env python3
"""Independent reference for forwarding-vectors.json (plain Python ints, no Tide code).

Run from anywhere: python3 make_vectors.py > forwarding-vectors.json && npx prettier --write forwarding-vectors.json
Reads the golden .bin files from ../testdata/glb (relative to this file) to
record rows exactly as glb-director wrote them. Asserts the SipHash paper's published outputs
and the published GLB vectors before writing anything.
"""
import ipaddress
import json
import os
import struct
import sys

M = (1 << 64) - 1


def rotl(x, b):
    return ((x << b) | (x >> (64 - b))) & M


def siphash24(key: bytes, msg: bytes) -> int:
    k0, k1 = struct.unpack("<QQ", key)
    v0, v1 = k0 ^ 0x736F6D6570736575, k1 ^ 0x646F72616E646F6D
    v2, v3 = k0 ^ 0x6C7967656E657261, k1 ^ 0x7465646279746573

    def rnd():
        nonlocal v0, v1, v2, v3
        v0 = (v0 + v1) & M; v1 = rotl(v1, 13) ^ v0; v0 = rotl(v0, 32)
        v2 = (v2 + v3) & M; v3 = rotl(v3, 16) ^ v2
        v0 = (v0 + v3) & M; v3 = rotl(v3, 21) ^ v0
        v2 = (v2 + v1) & M; v1 = rotl(v1, 17) ^ v2; v2 = rotl(v2, 32)

    n = len(msg)
    padded = msg + bytes((8 - (n + 1) % 8) % 8) + bytes([n & 0xFF])
    for i in range(0, len(padded), 8):
        m = struct.unpack("<Q", padded[i:i + 8])[0]
        v3 ^= m; rnd(); rnd(); v0 ^= m
    v2 ^= 0xFF
    for _ in range(4):
        rnd()
    return v0 ^ v1 ^ v2 ^ v3


def out_bytes(d: int) -> bytes:
    return struct.pack("<Q", d)


def ip_bytes(s: str) -> bytes:
    return ipaddress.ip_address(s).packed


def row_seed(seed: bytes, row: int) -> bytes:
    return out_bytes(siphash24(seed, struct.pack(">I", row)))


def order(seed: bytes, addrs, row: int):
    rs = row_seed(seed, row)
    scored = [(struct.unpack(">Q", out_bytes(siphash24(seed, rs + ip_bytes(a))))[0], i) for i, a in enumerate(addrs)]
    return [i for _, i in sorted(scored)]


def assign(seed, backends, row, variant):
    """backends: list of (ip, state, healthy). Returns (primary_idx, secondary_idx)."""
    o = [i for i in order(seed, [b[0] for b in backends], row) if backends[i][1] != "inactive"]
    if len(o) == 1:
        return o[0], o[0]
    a, b = o[0], o[1]
    st = lambda i: backends[i][1]
    ok = lambda i: backends[i][2]
    if variant == "glb":
        bad = st(a) == "draining" or not ok(a)
        return (b, a) if bad and st(b) == "active" else (a, b)
    usable = [i for i in o if ok(i) and st(i) in ("active", "filling")]
    if a in usable:
        return a, b
    if b in usable:
        return b, a
    if not usable:
        return a, b
    return (usable[0], usable[1]) if len(usable) > 1 else (usable[0], usable[0])


def flow_input(fields, src, dst, sport, dport):
    out = b""
    for f in ["src_addr", "dst_addr", "src_port", "dst_port"]:
        if f not in fields:
            continue
        out += {"src_addr": lambda: ip_bytes(src), "dst_addr": lambda: ip_bytes(dst),
                "src_port": lambda: struct.pack(">H", sport), "dst_port": lambda: struct.pack(">H", dport)}[f]()
    return out


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    golden_dir = os.path.normpath(os.path.join(here, "../testdata/glb"))

    # SipHash paper (Aumasson & Bernstein), Appendix A / reference vectors.h: key 00..0f, msg 00..n-1.
    key = bytes(range(16))
    paper = {0: "310e0edd47db6f72", 1: "fd67dc93c539f874", 8: "6224939a79f5f593", 15: "e545be4961ca29a1",
             63: "724506eb4c328a95"}
    sip = []
    for n in range(64):
        h = out_bytes(siphash24(key, bytes(range(n)))).hex()
        if n in paper:
            assert h == paper[n], (n, h)
        sip.append({"key": key.hex(), "message": bytes(range(n)).hex(), "output": h,
                    "u64": f"{siphash24(key, bytes(range(n))):016x}"})

    # Published rendezvous vectors (glb-reference.md) + extra rows, all-IPv4 and an IPv6 set.
    pub_seed = bytes.fromhex("49a3d861d661ae5ab06ed9326871a2f5")
    pub = ["1.1.1.1", "1.1.1.2", "1.1.1.3", "1.1.1.4"]
    published = {0x0000: ("491c53a72df4c837", ["1.1.1.4", "1.1.1.3", "1.1.1.2", "1.1.1.1"]),
                 0xFFFF: ("f223c0cc65161620", ["1.1.1.1", "1.1.1.2", "1.1.1.4", "1.1.1.3"]),
                 0xBB44: ("e290f8f430eb33d3", ["1.1.1.4", "1.1.1.1", "1.1.1.2", "1.1.1.3"])}
    rdv = []
    for row in [0x0000, 0xFFFF, 0xBB44, 1, 2, 0x1234, 0x8000]:
        rs = row_seed(pub_seed, row).hex()
        ordered = [pub[i] for i in order(pub_seed, pub, row)]
        if row in published:
            assert (rs, ordered) == published[row], (row, rs, ordered)
        rdv.append({"seed": pub_seed.hex(), "proxies": pub, "row": row, "rowSeed": rs, "order": ordered,
                    "source": "published" if row in published else "reference-python"})
    v6 = ["2001:db8::1", "2001:db8::2", "10.0.0.1", "fd00::1:2"]
    for row in [0, 7, 0xABCD]:
        rdv.append({"seed": pub_seed.hex(), "proxies": v6, "row": row, "rowSeed": row_seed(pub_seed, row).hex(),
                    "order": [v6[i] for i in order(pub_seed, v6, row)], "source": "reference-python"})

    # Flow cases: table.json table 0 (published vector) and IPv6 / multi-field cases.
    hk = bytes.fromhex("12345678901234561234567890123456")
    seed = bytes.fromhex("34567890123456783456789012345678")
    proxies = [("1.2.3.4", "active", True), ("2.3.4.5", "active", True), ("3.4.5.6", "active", True)]
    flows = []
    cases = [
        (["src_addr"], "10.11.12.13", None, 45678, None, "published"),
        (["src_addr", "src_port"], "10.11.12.13", None, 45678, None, "published"),
        (["src_addr", "src_port"], "10.11.12.13", None, 45679, None, "published"),
        (["src_addr", "src_port"], "10.11.12.13", None, 45680, None, "published"),
        (["src_addr"], "2001:db8:1::77", None, 51000, None, "reference-python"),
        (["src_addr", "dst_addr"], "198.51.100.9", "1.1.1.1", 40000, 443, "reference-python"),
        (["src_addr", "dst_addr", "src_port", "dst_port"], "198.51.100.9", "1.1.1.1", 40000, 443, "reference-python"),
        (["src_addr", "dst_addr", "src_port", "dst_port"], "2001:db8:1::77", "2001:db8::10", 51000, 443,
         "reference-python"),
        (["dst_port"], "192.0.2.1", None, 1, 80, "reference-python"),
    ]
    pub_flow = {("src_addr",): ("008972f1657a5cbd", 0x5CBD, "3.4.5.6", "2.3.4.5", 61139)}
    pub_ports = {45678: ("1.2.3.4", "2.3.4.5"), 45679: ("1.2.3.4", "3.4.5.6"), 45680: ("2.3.4.5", "3.4.5.6")}
    for fields, src, dst, sport, dport, source in cases:
        d = siphash24(hk, flow_input(fields, src, dst, sport, dport))
        row = d & 0xFFFF
        p, s = assign(seed, proxies, row, "tide")
        case = {"hashKey": hk.hex(), "seed": seed.hex(), "proxies": [x[0] for x in proxies], "fields": fields,
                "srcAddr": src, "srcPort": sport, "digest": f"{d:016x}", "row": row,
                "primary": proxies[p][0], "secondary": proxies[s][0],
                "outerSourcePort": 0x8000 | ((d ^ sport) & 0x7FFF), "source": source}
        if dst is not None:
            case["dstAddr"] = dst
        if dport is not None:
            case["dstPort"] = dport
        if source == "published" and tuple(fields) in pub_flow:
            exp = pub_flow[tuple(fields)]
            assert (case["digest"], row, case["primary"], case["secondary"], case["outerSourcePort"]) == exp, case
        if source == "published" and fields == ["src_addr", "src_port"]:
            assert (case["primary"], case["secondary"]) == pub_ports[sport], case
        flows.append(case)

    # Rows exactly as glb-director wrote them in the golden files, and the Python rules' answer.
    golden = []
    for name in ["golden-drain", "golden-unhealthy", "golden-inactive", "table"]:
        spec = json.load(open(os.path.join(golden_dir, name + ".json")))
        blob = open(os.path.join(golden_dir, name + ".bin"), "rb").read()
        for t, table in enumerate(spec["tables"]):
            backends = [(b["ip"], b["state"], b["healthy"]) for b in table["backends"]]
            tseed = bytes.fromhex(table["seed"])
            base = 24 + t * 537624 + 13336
            for row in [0, 1, 2, 0x5CBD, 0x7FFF, 0xFFFF]:
                p, s = struct.unpack_from("<II", blob, base + row * 8)
                assert assign(tseed, backends, row, "glb") == (p, s), (name, row)
                golden.append({"file": name + ".bin", "table": t, "row": row,
                               "primary": backends[p][0], "secondary": backends[s][0]})

    json.dump({
        "about": "Forwarding vectors shared by the TS and C implementations. Made by make_vectors.py, an "
                 "independent Python reference; published values are asserted there. Hex strings are bytes in "
                 "order, except 'u64'/'digest' which are the u64 value (little-endian reading of the output).",
        "siphash24": sip, "rendezvous": rdv, "flows": flows, "goldenRows": golden,
    }, sys.stdout, indent=1)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
