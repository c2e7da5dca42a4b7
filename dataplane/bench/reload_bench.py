"""Benchmark: table reload time for a 4-pool file while tide-director forwards, and packets lost.

The director (one lcore, pcap vdev) streams 1,000,000 packets spread over 4 pools (64 proxies
each) while this script reloads two different 4-pool files in turn over a second control
connection. Reported: load_table's own load_ms (read + validate + compile + sha256 per pool +
RCU swap and grace period) and packets lost = received - forwarded - dropped (target 0), with
the input count checked against the director's rx counter.

    make -C dataplane bench      (after the per-packet figures), or from dataplane/:
    PYTHONPATH=tests/packets TIDE_DIRECTOR=build/tide-director /usr/bin/python3 \
        bench/reload_bench.py [packets]

It drives the director with the packet tests' harness (tests/packets/tide_harness.py).
"""

import statistics
import sys
import threading
from pathlib import Path

from scapy.all import IP, TCP, Ether, raw
from tide_harness import Control, build_table, director, tmpdir, wait_rx, write_pcap

KEY, SEED = "a1b2c3d4e5f60718293a4b5c6d7e8f90", "0f1e2d3c4b5a69788796a5b4c3d2e1f0"


def pools(variant):
    return [{"hash_key": KEY, "seed": SEED,
             "binds": [{"ip": f"203.0.113.{10 + p}", "proto": "tcp", "port": 443}],
             "backends": [{"ip": f"10.{20 + p}.{variant}.{i + 1}", "state": "active",
                           "healthy": True} for i in range(64)]} for p in range(4)]


def main():
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 1_000_000
    with tmpdir() as tmp:
        tmp = Path(tmp)
        a = build_table(pools(0), tmp / "a.bin")
        b = build_table(pools(1), tmp / "b.bin")
        templates = [raw(Ether(dst="02:00:00:00:00:01", src="02:00:00:00:00:02") /
                         IP(src=f"198.51.{100 + i % 4}.{i % 256}", dst=f"203.0.113.{10 + i % 4}") /
                         TCP(sport=10000 + i, dport=443, flags="A")) for i in range(4096)]
        write_pcap(tmp / "in.pcap", (templates[i % 4096] for i in range(n)))
        config = {"table_file": str(a), "pool_names": ["www", "api", "dns", "git"],
                  "gateway_mac": "02:00:00:00:00:fe", "source_ip": "192.0.2.10"}
        eal = ["-l", "0", f"--vdev=net_pcap0,rx_pcap={tmp / 'in.pcap'},tx_pcap=/dev/null"]
        loads = []
        with director(eal, config, tmp) as (_, ctl):
            loader = Control(tmp / "director.sock")
            stop = threading.Event()

            def loop():
                i = 0
                while not stop.is_set():
                    r = loader.ok("load_table", path=str(b if i % 2 == 0 else a))
                    loads.append(r["load_ms"])
                    i += 1

            t = threading.Thread(target=loop)
            t.start()
            wait_rx(ctl, n, timeout=300)
            stop.set()
            t.join()
            loader.close()
            totals = ctl.ok("stats")["totals"]
    dropped = sum(totals["dropped"].values())
    lost = totals["rx_packets"] - totals["forwarded_packets"] - dropped - totals["tx_failed"]
    loads.sort()
    print(f"reload of a 4-pool file (4 x 64 proxies, {4 * 537624 + 24} bytes) while forwarding:")
    print(f"  reloads {len(loads)}: load_ms median {statistics.median(loads):.2f}, "
          f"p95 {loads[int(len(loads) * 0.95)]:.2f}, max {loads[-1]:.2f}")
    print(f"  packets: input {n}, received {totals['rx_packets']}, forwarded "
          f"{totals['forwarded_packets']}, dropped {dropped}, tx_failed {totals['tx_failed']}, "
          f"lost {lost + (n - totals['rx_packets'])}")
    return 0 if lost == 0 and dropped == 0 and totals["rx_packets"] == n else 1


if __name__ == "__main__":
    sys.exit(main())
