"""Live test: real packets through veths in network namespaces, tide-director on af_packet.

    client (10.99.0.1) ─┐
    director (af_packet,├─ bridge (ns fab) ── router 10.99.0.254 ── proxies 10.99.0.20, .21
      no kernel IP) ────┘

The client routes the VIP to the director (static neighbour), the director encapsulates to the
router's MAC, the router forwards to the primary proxy, whose kernel delivers the GUE datagram
to a UDP socket on GUE_PORT (the kernel drops it if the UDP checksum is wrong). Each proxy checks
that every flow it receives is one the table gives it as primary. Everything the test creates is
named tidelt<pid>-* and removed at the end, including leftovers of a crashed earlier run.
"""

import json
import os
import socket
import subprocess
import sys
import time

import pytest
from tide_harness import GUE_PORT, build_table, director, expect, read_glbd, tmpdir

NS = f"tidelt{os.getpid()}"
VIP = "203.0.113.10"
PROXIES = ["10.99.0.20", "10.99.0.21"]
FLOWS = 300

RECEIVER = r"""
import json, socket, sys, time
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.bind(("0.0.0.0", int(sys.argv[2])))
s.settimeout(0.5)
print("ready", flush=True)
end = time.time() + float(sys.argv[1])
while time.time() < end:
    try:
        data, peer = s.recvfrom(65535)
    except socket.timeout:
        continue
    print(json.dumps({"peer": peer[0], "hex": data.hex()}), flush=True)
"""


def sh(*args, check=True):
    return subprocess.run(args, check=check, capture_output=True, text=True)


def nsx(ns, *args, check=True):
    return sh("ip", "netns", "exec", f"{NS}-{ns}", *args, check=check)


def cleanup_stale():
    out = sh("ip", "netns", "list").stdout
    for line in out.splitlines():
        name = line.split()[0]
        if name.startswith("tidelt"):
            pid = name[len("tidelt"):].split("-")[0]
            if pid == str(os.getpid()) or not os.path.exists(f"/proc/{pid}"):
                sh("ip", "netns", "pids", name, check=False)
                for p in sh("ip", "netns", "pids", name, check=False).stdout.split():
                    sh("kill", "-9", p, check=False)
                sh("ip", "netns", "del", name, check=False)


def link(ns, ifname, peer, addr=None):
    sh("ip", "link", "add", ifname, "netns", f"{NS}-{ns}", "type", "veth", "peer", "name", peer,
       "netns", f"{NS}-fab")
    nsx("fab", "ip", "link", "set", peer, "master", "br0", "up")
    nsx(ns, "ip", "link", "set", ifname, "up")
    nsx(ns, "ip", "link", "set", "lo", "up")
    # Checksums must be complete on the wire: af_packet sees what the veth sends.
    nsx(ns, "ethtool", "-K", ifname, "tx", "off", "rx", "off", "gso", "off", "tso", "off",
        check=False)
    if addr:
        nsx(ns, "ip", "addr", "add", addr, "dev", ifname)
    return json.loads(nsx(ns, "ip", "-j", "link", "show", ifname).stdout)[0]["address"]


@pytest.fixture
def lab():
    cleanup_stale()
    names = ["fab", "cli", "dir", "rtr", "p0", "p1"]
    try:
        for n in names:
            sh("ip", "netns", "add", f"{NS}-{n}")
        nsx("fab", "ip", "link", "add", "br0", "type", "bridge")
        nsx("fab", "ip", "link", "set", "br0", "up")
        macs = {
            "cli": link("cli", "eth0", "cli", "10.99.0.1/24"),
            "dir": link("dir", "eth0", "dir"),
            "rtr": link("rtr", "eth0", "rtr", "10.99.0.254/24"),
            "p0": link("p0", "eth0", "p0", PROXIES[0] + "/24"),
            "p1": link("p1", "eth0", "p1", PROXIES[1] + "/24"),
        }
        nsx("rtr", "sysctl", "-qw", "net.ipv4.ip_forward=1")
        nsx("rtr", "sysctl", "-qw", "net.ipv4.conf.all.send_redirects=0")
        nsx("rtr", "sysctl", "-qw", "net.ipv4.conf.eth0.send_redirects=0")
        nsx("cli", "ip", "neigh", "add", "10.99.0.2", "lladdr", macs["dir"], "dev", "eth0",
            "nud", "permanent")
        nsx("cli", "ip", "route", "add", VIP + "/32", "via", "10.99.0.2")
        yield macs
    finally:
        cleanup_stale()


def test_client_packets_reach_the_primary_proxy_encapsulated(lab):
    with tmpdir() as tmp:
        table = build_table([{
            "hash_key": "00112233445566778899aabbccddeeff",
            "seed": "ffeeddccbbaa99887766554433221100",
            "binds": [{"ip": VIP, "proto": "udp", "port": 53}],
            "backends": [{"ip": p, "state": "active", "healthy": True} for p in PROXIES],
        }], f"{tmp}/live.bin")
        tbl = read_glbd(table)[0]
        receivers = {}
        for i, ns in enumerate(["p0", "p1"]):
            receivers[PROXIES[i]] = subprocess.Popen(
                ["ip", "netns", "exec", f"{NS}-{ns}", sys.executable, "-c", RECEIVER, "20",
                 str(GUE_PORT)],
                stdout=subprocess.PIPE, text=True)
        for r in receivers.values():
            assert r.stdout.readline().strip() == "ready"
        config = {"table_file": str(table), "pool_names": ["dns"],
                  "hash_fields": ["src_addr", "src_port"], "gateway_mac": lab["rtr"],
                  "source_ip": "10.99.0.2", "idle_sleep_us": 200}
        eal = ["-l", "0", "--vdev=net_af_packet0,iface=eth0"]
        with director(eal, config, tmp, netns=f"{NS}-dir") as (_, ctl):
            status = ctl.ok("status")
            assert status["ports"][0]["mac"] == lab["dir"]
            sender = (
                "import socket\n"
                f"for i in range({FLOWS}):\n"
                "    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)\n"
                "    s.bind(('10.99.0.1', 20000 + i))\n"
                f"    s.sendto(b'tide-%d' % i, ('{VIP}', 53))\n"
                "    s.close()\n")
            nsx("cli", sys.executable, "-c", sender)
            deadline = time.time() + 10
            while ctl.ok("stats")["totals"]["forwarded_packets"] < FLOWS and time.time() < deadline:
                time.sleep(0.1)
            stats = ctl.ok("stats")["totals"]
        time.sleep(1)
        got = {}
        for proxy, r in receivers.items():
            r.terminate()
            out, _ = r.communicate(timeout=10)
            got[proxy] = [json.loads(line) for line in out.splitlines() if line.startswith("{")]
    assert stats["forwarded_packets"] >= FLOWS, stats
    # af_packet must not hand the director its own GUE output back (it would count as no_bind).
    assert stats["dropped"]["no_bind"] == 0, stats
    total = 0
    for proxy, datagrams in got.items():
        for d in datagrams:
            data = bytes.fromhex(d["hex"])
            assert d["peer"] == "10.99.0.2", "outer source = the director's address"
            assert data[0] == 2 and data[1] == 4 and data[6] == 0 and data[7] == 1, data[:8].hex()
            inner = data[12:]
            assert socket.inet_ntoa(inner[12:16]) == "10.99.0.1"
            assert socket.inet_ntoa(inner[16:20]) == VIP
            sport = int.from_bytes(inner[20:22], "big")
            exp = expect(tbl, "10.99.0.1", VIP, sport, 53, ["src_addr", "src_port"])
            assert exp["primary"] == proxy, f"flow {sport} reached {proxy}, table says {exp}"
            assert socket.inet_ntoa(data[8:12]) == exp["hops"][0], "hop = secondary"
            assert inner[28:] == b"tide-%d" % (sport - 20000)
            total += 1
    # Every datagram arrived once (veths do not drop at this rate), spread over both proxies.
    assert total == FLOWS, {p: len(d) for p, d in got.items()}
    assert all(len(d) > FLOWS // 5 for d in got.values())
