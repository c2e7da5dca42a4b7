"""tide-probes live tests (root): reproduce every kernel signal for real inside network
namespaces this test creates (named tidepr<pid>-*, always deleted) and check the probe saw it.

Run: make -C dataplane test-probes   (TIDE_PROBES=path/to/tide-probes)
"""

import json
import os
import queue
import shutil
import subprocess
import sys
import tempfile
import threading
import time

import pytest

PROBES = os.environ.get("TIDE_PROBES", os.path.join(os.path.dirname(__file__), "../../build/tide-probes"))
PY = sys.executable or "/usr/bin/python3"
PREFIX = f"tidepr{os.getpid()}-"
SAMPLE_MS = 200  # sample period asked of tide-probes, ms
WAIT_S = 5.0  # how long a signal may take to show up in a sample, s

if os.geteuid() != 0:
    # Fail, never skip: a run without root would check nothing and still look green.
    raise RuntimeError("tide-probes tests need root (BPF, network namespaces)")


def sh(*args, check=True, **kw):
    return subprocess.run(list(args), check=check, capture_output=True, text=True, **kw)


class Netns:
    """Network namespaces owned by this test run; delete_all() removes exactly those."""

    def __init__(self):
        self.names = []

    def add(self, short):
        name = PREFIX + short
        sh("ip", "netns", "add", name)
        self.names.append(name)
        sh("ip", "-n", name, "link", "set", "lo", "up")
        return name

    def delete_all(self):
        for name in reversed(self.names):
            sh("ip", "netns", "del", name, check=False)
        self.names = []


def inode(ns):
    """The namespace's inode number: what the probes report as `netns`."""
    return os.stat(f"/run/netns/{ns}").st_ino


def ns_exec(ns, *cmd, **kw):
    return sh("ip", "netns", "exec", ns, *cmd, **kw)


def ns_python(ns, code, **kw):
    """Starts python in `ns`; `ip netns exec` execs, so the returned pid is the python pid."""
    return subprocess.Popen(["ip", "netns", "exec", ns, PY, "-c", code], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, text=True, **kw)


class Probes:
    """A running tide-probes: JSON lines collected by a reader thread."""

    def __init__(self, *extra, user=None):
        cmd = [PROBES, "--interval-ms", str(SAMPLE_MS), *extra]
        if user is not None:
            cmd = ["setpriv", f"--reuid={user}", f"--regid={user}", "--clear-groups", *cmd]
        self.proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE, text=True)
        self.lines = queue.Queue()
        self.listens = []
        self.sample = None
        self.samples = 0
        self.cv = threading.Condition()
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()
        self.hello = self.next_of("hello", 30)

    def _read(self):
        for line in self.proc.stdout:
            msg = json.loads(line)
            with self.cv:
                if msg["type"] == "listen":
                    self.listens.append(msg)
                elif msg["type"] == "sample":
                    self.sample = msg
                    self.samples += 1
                else:
                    self.lines.put(msg)
                self.cv.notify_all()
        with self.cv:
            self.cv.notify_all()

    def next_of(self, kind, timeout):
        msg = self.lines.get(timeout=timeout)
        assert msg["type"] == kind, msg
        return msg

    def wait_for(self, pred, timeout=WAIT_S):
        """Waits until pred(self) is truthy on a sample newer than the call; returns its value."""
        deadline = time.time() + timeout
        with self.cv:
            start = self.samples
            while True:
                if self.samples > start:
                    v = pred(self)
                    if v:
                        return v
                left = deadline - time.time()
                if left <= 0 or self.proc.poll() is not None:
                    return pred(self)
                self.cv.wait(left)

    def stop(self, how="eof"):
        if self.proc.poll() is None:
            if how == "eof":
                self.proc.stdin.close()
            else:
                self.proc.terminate()
        try:
            return self.proc.wait(timeout=15)
        finally:
            if self.proc.poll() is None:
                self.proc.kill()
            self.reader.join(timeout=5)


@pytest.fixture(scope="module")
def netns():
    n = Netns()
    try:
        yield n
    finally:
        n.delete_all()


@pytest.fixture(scope="module")
def probes():
    p = Probes()
    try:
        yield p
    finally:
        rc = p.stop()
        assert rc == 0, p.proc.stderr.read()


def sum_hist(h):
    return sum(h)


# ---- lifecycle ---------------------------------------------------------------------------------


def test_hello_reports_every_probe_on(probes):
    ps = probes.hello["probes"]
    assert set(ps) == {"listen_backlog", "listen_overflow", "connect_latency", "port_parity",
                       "netrx_softirq", "netrx_wait", "icmp_frag_needed"}
    off = {k: v for k, v in ps.items() if not v["on"]}
    assert not off, off
    assert probes.hello["bucket_lo_us"][:4] == [0, 1, 2, 4]


# ---- 1. listen backlog -------------------------------------------------------------------------

LISTENER = """
import socket, sys
s = socket.socket()
s.bind(("127.0.0.1", 0))
s.listen(%d)
print(s.getsockname()[1], flush=True)
sys.stdin.read()
"""


def test_listen_backlog_limited_by_namespace_somaxconn(probes, netns):
    ns = netns.add("listen")
    ns_exec(ns, "sysctl", "-qw", "net.core.somaxconn=128")
    child = ns_python(ns, LISTENER % 8192)
    try:
        port = int(child.stdout.readline())

        def seen(p):
            return next((e for e in p.listens if e["pid"] == child.pid), None)

        ev = probes.wait_for(seen)
        assert ev, f"no listen event for pid {child.pid}"
        assert ev["requested"] == 8192 and ev["effective"] == 128 and ev["limited"] is True, ev
        assert ev["port"] == port and ev["netns"] == inode(ns) and ev["family"] == "inet", ev
    finally:
        child.stdin.close()
        child.wait(timeout=10)


# ---- 2. accept-queue overflow -----------------------------------------------------------------

# A listener with backlog 2 that never accepts and defers accept until data arrives: every
# handshake then completes only when the client's first data segment reaches the listener, so the
# requests pile up in SYN_RECV and the data segments find the accept queue full (the drop that
# skb:kfree_skb reports as TCP_LISTEN_OVERFLOW). Pure back-to-back connects on loopback complete
# serially and only get their SYNs dropped, which carries no drop reason.
OVERFLOW = """
import socket, time
srv = socket.socket()
srv.setsockopt(socket.IPPROTO_TCP, socket.TCP_DEFER_ACCEPT, 30)
srv.bind(("127.0.0.1", 0))
srv.listen(2)
port = srv.getsockname()[1]
clients = []
for round in range(4):
    batch = []
    for i in range(2):
        c = socket.socket()
        c.setblocking(False)
        c.connect_ex(("127.0.0.1", port))
        batch.append(c)
    time.sleep(0.1)
    for c in batch:
        try:
            c.send(b"x")
        except OSError:
            pass
    clients += batch
    time.sleep(0.1)
print(port, flush=True)
time.sleep(3)
"""


def test_listen_overflow_drops_by_port_and_netns(probes, netns):
    ns = netns.add("ovf")
    ns_exec(ns, "sysctl", "-qw", "net.ipv4.tcp_syncookies=0")
    child = ns_python(ns, OVERFLOW)
    try:
        port = int(child.stdout.readline())
        want = inode(ns)

        def drops(p):
            for e in p.sample.get("listen_overflow", []):
                if e["netns"] == want and e["port"] == port and e["drops"] > 0:
                    return e
            return None

        e = probes.wait_for(drops)
        nstat = ns_exec(ns, "nstat", "-asz", "TcpExtListenOverflows").stdout
        assert e, f"no overflow drops for port {port} netns {want} (nstat: {nstat})"
    finally:
        child.wait(timeout=30)


# ---- 3. connect() latency, EADDRNOTAVAIL, port parity -----------------------------------------

CONNECTS = """
import errno, socket, sys
refused = 0
for i in range(20):
    s = socket.socket()
    if s.connect_ex(("127.0.0.1", 9)) == errno.ECONNREFUSED:
        refused += 1
    s.close()
srv = socket.socket()
srv.bind(("127.0.0.1", 40000))  # outside the ephemeral range, which must stay for the clients
srv.listen(128)
held, ok, unavail = [], 0, 0
for i in range(40):
    s = socket.socket()
    rc = s.connect_ex(srv.getsockname())
    if rc == 0:
        ok += 1
        held.append(s)
    elif rc == errno.EADDRNOTAVAIL:
        unavail += 1
        s.close()
print(refused, ok, unavail, flush=True)
sys.stdin.read()
"""


def test_connect_latency_errors_and_port_parity(probes, netns):
    ns = netns.add("conn")
    # 10 ephemeral ports: the 11th concurrent connection to one destination finds none.
    ns_exec(ns, "sysctl", "-qw", "net.ipv4.ip_local_port_range=50000 50009")
    child = ns_python(ns, CONNECTS)
    try:
        refused, ok, unavail = map(int, child.stdout.readline().split())
        assert refused == 20 and ok == 10 and unavail == 30, (refused, ok, unavail)

        def entry(p):
            for e in p.sample.get("connect", []):
                if e["pid"] == child.pid and e["calls"] >= 60:
                    return e
            return None

        e = probes.wait_for(entry)
        assert e, f"no connect stats for pid {child.pid}"
        assert e["netns"] == inode(ns) and e["comm"].startswith("python"), e
        assert e["calls"] == 60 and sum_hist(e["hist"]) == 60, e
        assert e["errors"] == 50 and e["eaddrnotavail"] == 30, e
        # Ports 50000..50009: the kernel tries even offsets first, but all ten end up used.
        assert e["sport_even"] + e["sport_odd"] == 10 and e["sport_even"] == 5, e
    finally:
        child.stdin.close()
        child.wait(timeout=10)


# ---- 4. NET_RX softirq -------------------------------------------------------------------------


def veth_pair(netns, a, b, addr_a, addr_b, mtu=1500):
    """veth between namespaces a and b with /24 addresses; offloads off (GSO hides MTU limits)."""
    ia, ib = f"{PREFIX[-6:]}{len(netns.names)}a", f"{PREFIX[-6:]}{len(netns.names)}b"
    sh("ip", "link", "add", ia, "mtu", str(mtu), "netns", a, "type", "veth", "peer", "name", ib,
       "mtu", str(mtu), "netns", b)
    for ns, dev, addr in ((a, ia, addr_a), (b, ib, addr_b)):
        sh("ip", "-n", ns, "addr", "add", addr + "/24", "dev", dev)
        sh("ip", "-n", ns, "link", "set", dev, "up")
        ns_exec(ns, "ethtool", "-K", dev, "gso", "off", "tso", "off", "gro", "off", check=False)
    return ia, ib


def netrx_totals(p):
    cpus = p.sample.get("netrx", [])
    return (sum(c["runs"] for c in cpus), sum(sum_hist(c["hist"]) for c in cpus),
            sum(c["waits"] for c in cpus))


def test_netrx_softirq_histogram_after_veth_traffic(probes, netns):
    a, b = netns.add("rxa"), netns.add("rxb")
    veth_pair(netns, a, b, "10.77.1.1", "10.77.1.2")
    probes.wait_for(lambda p: True)
    runs0, hist0, waits0 = netrx_totals(probes)
    ns_exec(a, "ping", "-q", "-c", "50", "-i", "0.002", "-W", "1", "10.77.1.2")
    got = probes.wait_for(lambda p: netrx_totals(p)[0] >= runs0 + 50 and netrx_totals(p))
    assert got, f"NET_RX runs did not grow by 50 (before {runs0})"
    runs, hist, waits = got
    assert hist == runs and hist > hist0 and waits > waits0, (got, runs0, hist0, waits0)


# ---- 5. ICMP frag-needed -----------------------------------------------------------------------


def test_icmp_frag_needed_counted_in_router_namespace(probes, netns):
    c, r, s = netns.add("pmc"), netns.add("pmr"), netns.add("pms")
    veth_pair(netns, c, r, "10.77.2.2", "10.77.2.1", mtu=1500)
    veth_pair(netns, r, s, "10.77.3.1", "10.77.3.2", mtu=1200)
    ns_exec(r, "sysctl", "-qw", "net.ipv4.ip_forward=1")
    sh("ip", "-n", c, "route", "add", "10.77.3.0/24", "via", "10.77.2.1")
    sh("ip", "-n", s, "route", "add", "10.77.2.0/24", "via", "10.77.3.1")
    # Small packets cross; a 1400-byte DF packet cannot enter the 1200 link: r answers 3/4.
    ns_exec(c, "ping", "-q", "-c", "1", "-W", "2", "10.77.3.2")
    ns_exec(c, "ping", "-q", "-M", "do", "-s", "1400", "-c", "3", "-i", "0.2", "-W", "1",
            "10.77.3.2", check=False)
    want = inode(r)

    def sent(p):
        return next((e["sent"] for e in p.sample.get("icmp_frag_needed", [])
                     if e["netns"] == want), 0)

    n = probes.wait_for(lambda p: sent(p) >= 1 and sent(p))
    assert n, f"no frag-needed counted for the router netns {want}"
    assert not any(e["netns"] in (inode(c), inode(s))
                   for e in probes.sample.get("icmp_frag_needed", [])), probes.sample


# ---- pinning, shutdown, degraded runs -----------------------------------------------------------


def test_pin_dir_mounts_pins_and_cleans_up():
    base = tempfile.mkdtemp(prefix="tidepr-")
    pin = os.path.join(base, "pins")
    p = Probes("--pin-dir", pin)
    try:
        assert "pin_error" not in p.hello, p.hello
        names = sorted(n for n in os.listdir(pin) if n.startswith("tp_"))
        assert names == ["tp_connect", "tp_icmp_fragnd", "tp_netrx", "tp_netrx_peak",
                         "tp_overflow"], names
        dump = sh("bpftool", "-j", "map", "show", "pinned", os.path.join(pin, "tp_connect"))
        assert json.loads(dump.stdout)["type"] == "lru_hash"
    finally:
        rc = p.stop("term")
    try:
        assert rc == 0
        assert not os.path.exists(pin), "pin dir left behind"
        with open("/proc/self/mounts") as f:
            assert pin not in f.read()
    finally:
        shutil.rmtree(base, ignore_errors=True)


def test_without_privileges_reports_probes_off_and_exits_on_eof():
    p = Probes(user=65534)
    rc = p.stop("eof")
    ps = p.hello["probes"]
    assert all(not v["on"] and v["reason"] for v in ps.values()), ps
    assert rc == 0


# ---- overhead (informal; printed, not asserted: this machine is noisy) -------------------------

RATE = """
import socket, time
srv = socket.socket()
srv.bind(("127.0.0.1", 0))
srv.listen(4096)
addr = srv.getsockname()
def burst(n):
    t = time.perf_counter()
    for i in range(n):
        c = socket.socket()
        c.connect(addr)
        a, _ = srv.accept()
        a.close()
        c.close()
    return n / (time.perf_counter() - t)
burst(500)
print(max(burst(3000) for _ in range(3)), flush=True)
"""


def test_overhead_connect_rate(netns):
    ns = netns.add("rate")
    # Closed sockets sit in TIME_WAIT: give the run plenty of ports and reuse.
    ns_exec(ns, "sysctl", "-qw", "net.ipv4.ip_local_port_range=10000 65000")

    def rate():
        return float(ns_exec(ns, PY, "-c", RATE).stdout)

    without = rate()
    p = Probes()
    try:
        with_probes = rate()
    finally:
        p.stop()
    again = rate()
    base = (without + again) / 2
    print(f"\n  overhead: connect+accept+close/s without probes {base:.0f} "
          f"({without:.0f}, {again:.0f}), with probes {with_probes:.0f}: "
          f"{100 * (base - with_probes) / base:+.1f}% slower", flush=True)
