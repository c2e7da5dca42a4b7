"""tide-director packet tests on the pcap vdev (no NIC, no hugepages).

Input frames are built with scapy; every output frame is checked field by field against
expectations computed in Python (tide_harness) from tables built by tidectl. Every reply of the
control socket is validated against the contract's JSON Schema (packages/contracts).
"""

import json
import os
import shutil
import signal
import socket
import struct
import subprocess
import threading
import time
from pathlib import Path

import jsonschema
from scapy.all import (
    ARP,
    ICMP,
    IP,
    TCP,
    UDP,
    Ether,
    ICMPv6EchoRequest,
    ICMPv6PacketTooBig,
    IPv6,
    IPv6ExtHdrHopByHop,
    Raw,
    raw,
)
from tide_harness import (
    DIRECTOR,
    REPO,
    TEST_DIRECTOR,
    Control,
    Notify,
    build_table,
    check_gue,
    director,
    expect,
    glbd_v3,
    pool_content_hash,
    read_glbd,
    read_pcap,
    tmpdir,
    ts_reference,
    wait_rx,
    write_pcap,
)

GATEWAY = "02:00:00:00:00:fe"
SOURCE = "192.0.2.10"
SEED = "0f1e2d3c4b5a69788796a5b4c3d2e1f0"
KEY = "a1b2c3d4e5f60718293a4b5c6d7e8f90"
ALL_FIELDS = ["src_addr", "dst_addr", "src_port", "dst_port"]

SCHEMA = json.loads((REPO / "packages/contracts/schemas/director-control.schema.json").read_text())


def E():
    """An Ethernet header from a router to the director (explicit MACs: no ARP lookups)."""
    return Ether(dst="02:00:00:00:00:01", src="02:00:00:00:00:02")


REPLY_SCHEMA = {"$defs": SCHEMA["$defs"], "$ref": "#/$defs/DirectorControlReply"}


def pools(variant=0):
    """Two pools; `variant` moves proxies so a second table routes flows differently."""
    www = [f"10.20.{variant}.{i}" for i in range(1, 9)]
    api = [f"10.21.{variant}.{i}" for i in range(1, 5)]
    return [
        {"hash_key": KEY, "seed": SEED,
         "binds": [{"ip": "203.0.113.10", "proto": "tcp", "port": 443},
                   {"ip": "203.0.113.10", "proto": "udp", "port": 53},
                   {"ip": "2001:db8::10", "proto": "tcp", "port": 443}],
         "backends": [{"ip": ip, "state": "draining" if i == 2 else "active", "healthy": True}
                      for i, ip in enumerate(www)]},
        {"hash_key": KEY[::-1], "seed": SEED[::-1],
         "binds": [{"ip": "203.0.113.64/26", "proto": "tcp", "port_start": 8000,
                    "port_end": 8099}],
         "backends": [{"ip": ip, "state": "active", "healthy": True} for ip in api]},
    ]


class Run:
    """One director run over one input pcap."""

    def __init__(self, tmp, frames, config=None, table=None):
        self.tmp = Path(tmp)
        self.table_path = table or build_table(pools(), self.tmp / "table.bin")
        self.tables = read_glbd(self.table_path)
        self.config = {"table_file": str(self.table_path), "pool_names": ["www", "api"],
                       "gateway_mac": GATEWAY, "source_ip": SOURCE, "mtu": 1500,
                       **(config or {})}
        self.inp, self.out = self.tmp / "in.pcap", self.tmp / "out.pcap"
        write_pcap(self.inp, [raw(f) for f in frames])
        self.n = len(frames)

    def eal(self):
        return ["-l", "0", f"--vdev=net_pcap0,rx_pcap={self.inp},tx_pcap={self.out}"]


def call(ctl, cmd, **args):
    reply = ctl.call(cmd, **args)
    jsonschema.validate(reply, REPLY_SCHEMA)
    return reply


def run_all(run, during=None):
    """Runs the director until it has read every input frame; returns (outputs, stats, status)."""
    with director(run.eal(), run.config, run.tmp) as (proc, ctl):
        status = call(ctl, "status")["result"]
        if during:
            during(ctl)
        stats = wait_rx(ctl, run.n)
        time.sleep(0.2)
        stats = call(ctl, "stats")["result"]
    return read_pcap(run.out), stats, status


def port_mac(status):
    return status["ports"][0]["mac"]


def tcp4(src, dst, sport, dport, payload=b"", **kw):
    return E() / IP(src=src, dst=dst, **kw) / TCP(
        sport=sport, dport=dport, flags="S") / Raw(payload)


def test_forwards_ipv4_ipv6_udp_cidr_and_port_ranges():
    frames, exps = [], []
    with tmpdir() as tmp:
        run = Run(tmp, [])
        www, api = run.tables
        for i in range(200):
            src = f"198.51.{100 + i % 3}.{i}"
            frames.append(tcp4(src, "203.0.113.10", 30000 + i, 443, tos=0x28))
            exps.append((expect(www, src, "203.0.113.10", 30000 + i, 443), 0x28))
        for i in range(40):
            src = f"198.51.100.{i}"
            frames.append(E() / IP(src=src, dst="203.0.113.10") / UDP(sport=5000 + i,
                                                                           dport=53) / b"q")
            exps.append((expect(www, src, "203.0.113.10", 5000 + i, 53), 0))
        for i in range(40):
            src = f"2001:db8:1::{i + 1:x}"
            frames.append(E() / IPv6(src=src, dst="2001:db8::10", tc=0xb8) /
                          TCP(sport=40000 + i, dport=443, flags="S"))
            exps.append((expect(www, src, "2001:db8::10", 40000 + i, 443), 0xb8))
        for i in range(40):
            dst, port = f"203.0.113.{64 + (i * 7) % 64}", 8000 + (i * 13) % 100
            frames.append(tcp4(f"198.51.100.{i}", dst, 20000 + i, port))
            exps.append((expect(api, f"198.51.100.{i}", dst, 20000 + i, port), 0))
        misses = [tcp4("198.51.100.1", "203.0.113.64", 1, 8100),   # port above the range
                  tcp4("198.51.100.1", "203.0.113.64", 1, 7999),   # below
                  tcp4("198.51.100.1", "203.0.113.128", 1, 8050),  # address outside the /26
                  tcp4("198.51.100.1", "203.0.113.10", 1, 80),     # unbound port
                  E() / IP(src="198.51.100.1", dst="203.0.113.10") / UDP(dport=443),
                  E() / IPv6(src="2001:db8:1::1", dst="2001:db8::11") / TCP(dport=443)]
        run = Run(tmp, frames + misses, table=run.table_path)
        outputs, stats, status = run_all(run)
    assert len(outputs) == len(frames)
    for frame, out, (exp, tos) in zip(frames, outputs, exps):
        check_gue(out, raw(frame[1]), exp, GATEWAY, port_mac(status), SOURCE, tos=tos)
    t = stats["totals"]
    assert t["forwarded_packets"] == len(frames)
    assert t["forwarded_ipv6"] == 40 and t["forwarded_ipv4"] == len(frames) - 40
    assert t["dropped"]["no_bind"] == len(misses)
    assert sum(t["dropped"].values()) == len(misses)


def test_ethernet_padding_is_not_encapsulated():
    with tmpdir() as tmp:
        frame = tcp4("198.51.100.7", "203.0.113.10", 1234, 443)
        padded = Ether(raw(frame) + b"\0" * 6)  # 54 + 6 = 60-byte minimum frame
        run = Run(tmp, [padded])
        outputs, _, status = run_all(run)
        exp = expect(run.tables[0], "198.51.100.7", "203.0.113.10", 1234, 443)
    check_gue(outputs[0], raw(frame[1]), exp, GATEWAY, port_mac(status), SOURCE)


def test_icmp_pmtu_reaches_the_flows_proxy_and_echo_hashes_ports_zero():
    client, vip, cport = "198.51.100.77", "203.0.113.10", 51515
    client6, vip6 = "2001:db8:1::77", "2001:db8::10"
    frames = [
        # frag-needed from a router about a packet the proxy sent (VIP:443 -> client:cport)
        E() / IP(src="192.0.2.254", dst=vip) / ICMP(type=3, code=4, nexthopmtu=1400) /
        IP(src=vip, dst=client, flags="DF") / TCP(sport=443, dport=cport, flags="A"),
        E() / IPv6(src="2001:db8:ff::1", dst=vip6) / ICMPv6PacketTooBig(mtu=1280) /
        IPv6(src=vip6, dst=client6) / TCP(sport=443, dport=cport, flags="A"),
        E() / IP(src=client, dst=vip) / ICMP(type=8, id=7, seq=1),
        E() / IPv6(src=client6, dst=vip6) / ICMPv6EchoRequest(id=7, seq=1),
    ]
    with tmpdir() as tmp:
        run = Run(tmp, frames, config={"hash_fields": ALL_FIELDS})
        www = run.tables[0]
        exps = [expect(www, client, vip, cport, 443, ALL_FIELDS),
                expect(www, client6, vip6, cport, 443, ALL_FIELDS),
                expect(www, client, vip, 0, 0, ALL_FIELDS),
                expect(www, client6, vip6, 0, 0, ALL_FIELDS)]
        outputs, stats, status = run_all(run)
        with director(["-l", "0", "--vdev=net_null0"], run.config, run.tmp) as (_, ctl):
            explained = call(ctl, "explain", src_addr=client, dst_addr=vip, protocol="tcp",
                             src_port=cport, dst_port=443)["result"]
    assert len(outputs) == 4
    for frame, out, exp in zip(frames, outputs, exps):
        check_gue(out, raw(frame[1]), exp, GATEWAY, port_mac(status), SOURCE)
    # The ICMP lands on the proxy that owns the TCP flow, as explain reports for the flow.
    assert explained["primary"] == exps[0]["primary"] and explained["row"] == exps[0]["row"]
    assert explained["outer_source_port"] == exps[0]["sport"]
    assert stats["totals"]["forwarded_icmp_pmtu"] == 2
    assert stats["totals"]["forwarded_icmp_echo"] == 2


def test_migration_adds_the_alt_pair_as_hops():
    with tmpdir() as tmp:
        frames = [tcp4(f"198.51.100.{i}", "203.0.113.10", 30000 + i, 443) for i in range(20)]
        run = Run(tmp, frames, config={"hash_fields": ["src_addr"],
                                       "alt_hash_fields": ["src_addr", "src_port"]})
        outputs, _, status = run_all(run)
        for i, (frame, out) in enumerate(zip(frames, outputs)):
            exp = expect(run.tables[0], f"198.51.100.{i}", "203.0.113.10", 30000 + i, 443,
                         ["src_addr"], ["src_addr", "src_port"])
            assert len(exp["hops"]) == 3
            check_gue(out, raw(frame[1]), exp, GATEWAY, port_mac(status), SOURCE)
    assert len(outputs) == 20


def drop_cases():
    ok = raw(tcp4("198.51.100.1", "203.0.113.10", 1000, 443))
    bad_version = bytearray(ok)
    bad_version[14] = 0x55
    bad_ihl = bytearray(ok)
    bad_ihl[14] = 0x44
    long_total = bytearray(ok)
    long_total[16:18] = struct.pack("!H", 1000)
    v6_short = raw(E() / IPv6(src="2001:db8:1::1", dst="2001:db8::10", plen=200) /
                   TCP(dport=443))
    big = tcp4("198.51.100.1", "203.0.113.10", 1000, 443, payload=b"x" * 1421)  # IP 1461
    return {
        "malformed": [Ether(bytes(bad_version)), Ether(bytes(bad_ihl)),
                      E() / IP(src="198.51.100.1", dst="203.0.113.10") /
                      UDP(sport=1, dport=53, len=4)],
        "truncated": [Ether(bytes(long_total)), Ether(v6_short), Ether(ok[:14 + 20 + 10]),
                      Ether(ok[:20])],
        "too_big": [big],
        "unsupported": [E() / ARP(pdst="203.0.113.10"),
                        E() / IP(src="198.51.100.1", dst="203.0.113.10", flags="MF") /
                        TCP(dport=443),
                        E() / IP(src="198.51.100.1", dst="203.0.113.10", frag=100) / (b"x" * 8),
                        E() / IPv6(src="2001:db8:1::1", dst="2001:db8::10") /
                        IPv6ExtHdrHopByHop() / TCP(dport=443),
                        E() / IP(src="198.51.100.1", dst="203.0.113.10") / ICMP(type=13),
                        E() / IP(src="198.51.100.1", dst="203.0.113.10", proto=47) / b"gre!"],
        "no_bind": [tcp4("198.51.100.1", "203.0.113.11", 1000, 443)],
    }


def test_every_drop_reason_is_counted_and_nothing_leaks():
    cases = drop_cases()
    frames = [f for fs in cases.values() for f in fs]
    # The largest frame that fits: inner IP 1460 + 40 bytes of GUE = 1500.
    fits = tcp4("198.51.100.1", "203.0.113.10", 1000, 443, payload=b"x" * 1420)
    with tmpdir() as tmp:
        run = Run(tmp, frames + [fits])
        outputs, stats, _ = run_all(run)
    dropped = stats["totals"]["dropped"]
    for reason, fs in cases.items():
        assert dropped[reason] == len(fs), (reason, dropped)
    assert stats["totals"]["forwarded_packets"] == 1 and len(outputs) == 1
    assert len(outputs[0]) == 14 + 1500
    assert stats["lcores"][0]["counters"]["dropped"] == dropped


def test_v3_pools_hash_on_their_own_fields_like_the_console():
    """One GLBD v3 file, pool www hashed on src_addr and pool api on src_addr+src_port (migrating
    from src_addr); the configured default (dst_port) must not be used for either. The file, the
    forwarded packets, explain, status and the per-pool content hashes must agree with the Python
    expectation and with packages/forwarding (encodeGlbd, explainFlow with the table's fields)."""
    www_fields, api_fields, api_alt = ["src_addr"], ["src_addr", "src_port"], ["src_addr"]
    per_table = [(www_fields, []), (api_fields, api_alt)]
    flows = ([(0, f"198.51.100.{i}", 30000 + i, "203.0.113.10", 443) for i in range(30)] +
             [(1, f"198.51.101.{i}", 40000 + i, "203.0.113.70", 8000 + i) for i in range(30)])
    with tmpdir() as tmp:
        tmp = Path(tmp)
        spec = pools()
        spec[1]["backends"][3]["state"] = "inactive"
        v2, v3 = build_table(spec, tmp / "v2.bin"), tmp / "v3.bin"
        ref = ts_reference({
            "v2": str(v2), "v3": str(v3),
            "tables": [{"hashFields": f, "altHashFields": a} for f, a in per_table],
            "flows": [{"table": t, "srcAddr": s, "srcPort": sp, "dstAddr": d, "dstPort": dp}
                      for t, s, sp, d, dp in flows]})
        data = v3.read_bytes()
        assert data == glbd_v3(v2.read_bytes(), per_table), "TS v3 bytes differ from the layout"
        tables = read_glbd(v3)
        exps = [expect(tables[t], s, d, sp, dp, *per_table[t]) for t, s, sp, d, dp in flows]
        for exp, ts in zip(exps, ref["explains"]):
            assert (ts["row"], ts["primary"], ts["secondary"], ts["outerSourcePort"]) == (
                exp["row"], exp["primary"], exp["hops"][0], exp["sport"])
        # The two pools' fields really differ for these flows (else the test proves nothing).
        assert sum(expect(tables[1], s, d, sp, dp)["row"] != e["row"]
                   for (t, s, sp, d, dp), e in zip(flows, exps) if t == 1) >= 25
        assert pool_content_hash(data, 0) != pool_content_hash(v2.read_bytes(), 0)
        frames = [tcp4(s, d, sp, dp) for _, s, sp, d, dp in flows]
        run = Run(tmp, frames, config={"hash_fields": ["dst_port"]}, table=v3)
        explained, loaded = [], []

        def during(ctl):
            for _t, s, sp, d, dp in flows:
                explained.append(call(ctl, "explain", src_addr=s, dst_addr=d, protocol="tcp",
                                      src_port=sp, dst_port=dp)["result"])
            loaded.append(call(ctl, "load_table", path=str(v3), pool_names=["www", "api"])["result"])

        outputs, _, status = run_all(run, during=during)
    assert len(outputs) == len(frames)
    for frame, out, exp in zip(frames, outputs, exps):
        check_gue(out, raw(frame[1]), exp, GATEWAY, port_mac(status), SOURCE)
    for (t, *_), exp, ts, got in zip(flows, exps, ref["explains"], explained):
        assert got["pool_index"] == t and got["hash_fields"] == ts["hashFields"] == per_table[t][0]
        assert got["alt_hash_fields"] == per_table[t][1]
        assert (got["row"], got["digest"], got["primary"], got["secondary"]) == (
            ts["row"], ts["digest"], ts["primary"], ts["secondary"])
        assert got["hops"] == exp["hops"] and got["outer_source_port"] == exp["sport"]
    # Top-level fields are the configured default; each pool reports its own.
    assert status["hash_fields"] == ["dst_port"] and status["alt_hash_fields"] == []
    for pool_list in (status["pools"], loaded[0]["pools"]):
        assert [(p["hash_fields"], p["alt_hash_fields"]) for p in pool_list] == per_table
        assert [p["content_hash"] for p in pool_list] == ref["contentHashes"] == [
            pool_content_hash(data, t) for t in range(2)]
    states = {(p["name"], b["address"]): b["state"] for p in status["pools"] for b in p["backends"]}
    assert states[("www", "10.20.0.3")] == "draining"
    assert states[("api", "10.21.0.4")] == "inactive"
    assert list(states.values()).count("inactive") == 1


def test_load_table_refuses_a_fifo_without_blocking_the_control_socket():
    with tmpdir() as tmp:
        run = Run(tmp, [])
        fifo = run.tmp / "table.fifo"
        os.mkfifo(fifo)
        with director(["-l", "0", "--vdev=net_null0"], run.config, run.tmp) as (proc, ctl):
            ctl.sock.settimeout(5)  # opening a FIFO for reading would wait for a writer forever
            for path in (fifo, run.tmp):
                reply = call(ctl, "load_table", path=str(path))
                assert not reply["ok"] and reply["error"]["code"] == "io_error", reply
                assert "not a regular file" in reply["error"]["message"]
            assert call(ctl, "status")["result"]["table"]["generation"] == 1
            assert proc.poll() is None


def test_no_table_counts_no_table_and_load_table_starts_forwarding():
    frames = [tcp4("198.51.100.1", "203.0.113.10", 1000, 443)] * 5
    with tmpdir() as tmp:
        run = Run(tmp, frames)
        table = run.config.pop("table_file")
        with director(run.eal(), run.config, run.tmp) as (_, ctl):
            stats = wait_rx(ctl, 5)
            assert stats["totals"]["dropped"]["no_table"] == 5
            assert call(ctl, "status")["result"]["table"] is None
            res = call(ctl, "load_table", path=table, pool_names=["www", "api"])["result"]
            assert res["generation"] == 1 and [p["name"] for p in res["pools"]] == ["www", "api"]


def corrupt(src, dst, offset, value):
    data = bytearray(Path(src).read_bytes())
    data[offset] = value
    Path(dst).write_bytes(bytes(data))
    return str(dst)


def test_control_socket_refuses_bad_input_and_keeps_serving():
    with tmpdir() as tmp:
        run = Run(tmp, [])
        run.n = 0
        table = str(run.table_path)
        with director(["-l", "0", "--vdev=net_null0"], run.config, run.tmp) as (proc, ctl):
            before = call(ctl, "status")["result"]
            assert before["table"]["generation"] == 1
            hashes = [p["content_hash"] for p in before["pools"]]
            # Each pool's hash is the sha256 of its table as a 1-table file (the console's hash).
            data = Path(table).read_bytes()
            assert hashes == [pool_content_hash(data, t) for t in range(2)]
            bad = [
                (corrupt(table, run.tmp / "a.bin", 0, ord("X")), "bad_magic"),
                (corrupt(table, run.tmp / "b.bin", 24 + 4 + 20, 9), "bad_state"),
                (corrupt(table, run.tmp / "c.bin", 24 + 13336 + 8 * 100, 200),
                 "backend_index_out_of_range"),
            ]
            Path(run.tmp / "short.bin").write_bytes(Path(table).read_bytes()[:1000])
            bad.append((str(run.tmp / "short.bin"), "bad_size"))
            for path, code in bad:
                reply = call(ctl, "load_table", path=path)
                assert not reply["ok"] and reply["error"]["code"] == "invalid_table", reply
                assert reply["error"]["detail"]["glbd_code"] == code
            reply = call(ctl, "load_table", path=str(run.tmp / "missing.bin"))
            assert reply["error"]["code"] == "io_error"
            reply = call(ctl, "load_table", path=table, pool_names=["only-one"])
            assert reply["error"]["detail"]["glbd_code"] == "pool_names"
            for line, code in [(b"not json\n", "bad_request"), (b"[1,2]\n", "bad_request"),
                               (b'{"cmd":"reboot"}\n', "unknown_command"),
                               (b'{"cmd":"status","extra":1}\n', "bad_request"),
                               (b'{"cmd":"explain","src_addr":"x","dst_addr":"y",'
                                b'"protocol":"tcp"}\n', "bad_request"),
                               (b'{"cmd":"set_gateway","mac":"zz","source_ip":"1.2.3.4"}\n',
                                "bad_request"),
                               (b"{" + b" " * 70000 + b"}\n", "line_too_long")]:
                reply = ctl.raw(line)
                jsonschema.validate(reply, REPLY_SCHEMA)
                assert not reply["ok"] and reply["error"]["code"] == code, (line[:40], reply)
            reply = call(ctl, "explain", src_addr="198.51.100.1", dst_addr="203.0.113.200",
                         protocol="tcp", src_port=1, dst_port=443)
            assert reply["error"]["code"] == "no_bind"
            after = call(ctl, "status")["result"]
            assert after["table"]["generation"] == 1
            assert [p["content_hash"] for p in after["pools"]] == hashes
            assert proc.poll() is None
            gw = call(ctl, "set_gateway", mac="02:00:00:00:00:aa", source_ip="192.0.2.11")
            assert gw["ok"] and call(ctl, "status")["result"]["gateway"]["source_ip"] == "192.0.2.11"


def test_table_reload_mid_stream_loses_and_misroutes_nothing():
    """Reloads alternate two tables while 1M packets stream through one lcore (long enough that
    reloads land mid-stream even when the machine is busy at start-up).

    Every packet must come out (zero loss) and go to the primary of its flow under table A or
    table B; both tables must have been used (the reloads really happened mid-stream).
    """
    n_flows, n = 512, 1_000_000
    with tmpdir() as tmp:
        tmp = Path(tmp)
        a = build_table(pools(0), tmp / "a.bin")
        b = build_table(pools(1), tmp / "b.bin")
        ta, tb = read_glbd(a)[0], read_glbd(b)[0]
        flows = [(f"198.51.{100 + i // 256}.{i % 256}", 10000 + i) for i in range(n_flows)]
        templates = [raw(tcp4(src, "203.0.113.10", sport, 443)) for src, sport in flows]
        frames = [templates[i % n_flows] for i in range(n)]
        run = Run(tmp, [], table=a)
        write_pcap(run.inp, frames)
        run.n = n
        want = {}
        for src, sport in flows:
            key = socket.inet_aton(src)
            want[key] = (socket.inet_aton(expect(ta, src, "203.0.113.10", sport, 443)["primary"]),
                         socket.inet_aton(expect(tb, src, "203.0.113.10", sport, 443)["primary"]))
        loads = []

        def reload(ctl):
            stop = threading.Event()
            loader = Control(run.tmp / "director.sock")  # its own connection: replies in order

            def loop():
                i = 0
                while not stop.is_set() and len(loads) < 200:
                    r = loader.ok("load_table", path=str(b if i % 2 == 0 else a),
                               pool_names=["www", "api"])
                    loads.append(r["load_ms"])
                    i += 1
            t = threading.Thread(target=loop)
            t.start()
            wait_rx(ctl, n, timeout=120)
            stop.set()
            t.join()
            loader.close()

        outputs, stats, _ = run_all(run, during=reload)
    assert stats["totals"]["rx_packets"] == n
    assert stats["totals"]["forwarded_packets"] == n, stats["totals"]
    assert sum(stats["totals"]["dropped"].values()) == 0 and stats["totals"]["tx_failed"] == 0
    assert len(outputs) == n
    used = [0, 0]
    for out in outputs:
        inner_src = out[50 + 4 + 12: 50 + 4 + 16]
        pa, pb = want[inner_src]
        dst = out[30:34]
        assert dst in (pa, pb), "packet sent to a proxy of neither table"
        if pa != pb:
            used[dst == pb] += 1
    assert len(loads) >= 2, loads
    assert used[0] > 0 and used[1] > 0, f"reloads did not land mid-stream: {used}, {loads}"
    print(f"\nreloads during the stream: {len(loads)}, load_ms median "
          f"{sorted(loads)[len(loads) // 2]:.1f}, packets via A/B: {used}")


# ---------------------------------------------------------------------------- as a systemd service


def reload(proc, notify, config_path, config):
    """Rewrites the config file, sends SIGHUP (ExecReload), returns the READY=1 that ends it."""
    config_path.write_text(json.dumps(config))
    proc.send_signal(signal.SIGHUP)
    reloading = notify.wait("RELOADING", proc=proc)
    assert int(reloading["MONOTONIC_USEC"]) > 0, reloading
    return notify.wait("READY", proc=proc)


def test_systemd_ready_after_listen_sighup_reload_and_stopping():
    with tmpdir() as tmp:
        run = Run(tmp, [])
        config_path = run.tmp / "director.json"  # where the harness writes it
        running = {"control_socket": str(run.tmp / "director.sock"), **run.config}
        other = build_table(pools(1), run.tmp / "agent.bin")
        notify = Notify(run.tmp / "notify")
        try:
            with director(["-l", "0", "--vdev=net_null0"], run.config, run.tmp,
                          notify=notify) as (proc, ctl):
                # The harness connected once, right after READY=1: the socket listened by then.
                ready = notify.seen[-1]
                assert ready["STATUS"] == ("forwarding on 1 port(s) with 1 lcore(s); table "
                                           f"generation 1 ({run.table_path})"), ready

                # Live keys apply, restart keys are refused by name, the table is re-read.
                new = {**running, "gateway_mac": "02:00:00:00:00:fd", "mtu": 9000,
                       "mbufs": 16383, "pool_names": ["web", "api"]}
                ready = reload(proc, notify, config_path, new)
                assert ready["STATUS"].startswith("mbufs need a restart; "), ready
                status = call(ctl, "status")["result"]
                assert status["gateway"]["mac"] == "02:00:00:00:00:fd" and status["mtu"] == 9000
                assert status["table"]["generation"] == 2
                assert [p["name"] for p in status["pools"]] == ["web", "api"]

                # A table the agent loaded over the socket is not replaced by the file's.
                call(ctl, "load_table", path=str(other), pool_names=["www", "api"])
                reload(proc, notify, config_path, {**new, "mbufs": running.get("mbufs", 8191)})
                status = call(ctl, "status")["result"]
                assert status["table"]["generation"] == 3
                assert status["table"]["path"] == str(other)

                # A bad file, or a table_file that does not validate, changes nothing.
                bad_table = run.tmp / "bad.bin"
                bad_table.write_bytes(b"GLBD" + bytes(20))
                for bad, why in (({**new, "mtu": 100}, '"mtu" is 100'),
                                 ({**new, "colour": "red"}, 'unknown key "colour"'),
                                 ({**new, "gateway_mac": "02:00:00:00:00:fc",
                                   "table_file": str(bad_table)}, f"table_file {bad_table}")):
                    ready = reload(proc, notify, config_path, bad)
                    assert ready["STATUS"].startswith("reload refused ("), ready
                    assert why in ready["STATUS"], ready
                    status = call(ctl, "status")["result"]
                    assert status["gateway"]["mac"] == "02:00:00:00:00:fd" and status["mtu"] == 9000
                    assert status["table"]["generation"] == 3
                assert proc.poll() is None
            assert proc.returncode == 0
            assert notify.wait("STOPPING", timeout=5)["STATUS"] == "stopping"
        finally:
            notify.close()
        log = (run.tmp / "director.log").read_text()
        assert '"mbufs" changed, but only a restart applies it' in log, log


def test_bad_configuration_exits_2():
    with tmpdir() as tmp:
        cfg = Path(tmp) / "director.json"
        cfg.write_text(json.dumps({"gateway_mac": GATEWAY, "source_ip": SOURCE, "colour": "red"}))
        prefix = f"tide-test-exit2-{os.getpid()}"
        try:
            proc = subprocess.run([TEST_DIRECTOR, DIRECTOR, f"--file-prefix={prefix}", "-l", "0",
                                   "--vdev=net_null0", "--", "--config", str(cfg)],
                                  capture_output=True, text=True, timeout=60)
        finally:
            shutil.rmtree(f"/var/run/dpdk/{prefix}", ignore_errors=True)
        assert proc.returncode == 2, proc.stderr
        assert 'unknown key "colour"' in proc.stderr
