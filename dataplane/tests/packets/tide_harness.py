"""Shared helpers for the tide-director packet tests (pcap vdev) and the live test (af_packet).

Expectations are computed independently of the C code: SipHash from the Python reference that
made the shared vectors (packages/forwarding/vectors/make_vectors.py), tables built by tidectl
(packages/forwarding, TypeScript) and decoded here with struct.
"""

import contextlib
import importlib.util
import ipaddress
import itertools
import json
import os
import re
import shutil
import signal
import socket
import struct
import subprocess
import tempfile
import time
from pathlib import Path

DATAPLANE = Path(__file__).resolve().parents[2]
REPO = DATAPLANE.parent
DIRECTOR = os.environ.get("TIDE_DIRECTOR", str(DATAPLANE / "build" / "tide-director"))
# The one way to start a director without hardware (no hugepages, no PCI, no telemetry).
TEST_DIRECTOR = str(DATAPLANE / "tests" / "support" / "test-director")
# GUE's UDP port, from the C header that declares it (as packages/contracts' gue-wire test reads it).
GUE_WIRE_H = DATAPLANE / "common" / "tide_gue_wire.h"


def c_defines(path):
    """The integer #defines of a C header, by name ("19523u" -> 19523)."""
    return {m[1]: int(m[2]) for m in re.finditer(r"^#define\s+(\w+)\s+(\d+)u?\s*$",
                                                Path(path).read_text(), re.M)}


GUE_PORT = c_defines(GUE_WIRE_H)["TIDE_GUE_PORT"]
_runs = itertools.count()

_spec = importlib.util.spec_from_file_location(
    "make_vectors", REPO / "packages" / "forwarding" / "vectors" / "make_vectors.py"
)
_mv = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_mv)
siphash24 = _mv.siphash24

FIELD_BITS = ("src_addr", "dst_addr", "src_port", "dst_port")


# ---------------------------------------------------------------------------- tables


def tidectl(*args):
    """Runs the repository's tidectl (builds it first if needed)."""
    cli = REPO / "apps" / "tidectl" / "dist" / "tidectl.js"
    if not cli.exists():
        subprocess.run(["npm", "run", "build", "-w", "@tide/tidectl"], cwd=REPO, check=True,
                       stdout=subprocess.DEVNULL)
    return subprocess.run(["node", str(cli), *args], cwd=REPO, check=True, capture_output=True,
                          text=True).stdout


def build_table(tables, path):
    """Writes a GLBD file from glb JSON tables (list of dicts) with tidectl; returns path."""
    src = Path(str(path) + ".json")
    src.write_text(json.dumps({"tables": tables}))
    tidectl("table", "build", str(src), str(path))
    return Path(path)


class Table:
    """One decoded table of a GLBD v2 file."""

    def __init__(self, raw):
        (n,) = struct.unpack_from("<I", raw, 0)
        self.backends = []
        for i in range(n):
            fam, addr = struct.unpack_from("<I16s", raw, 4 + 24 * i)
            self.backends.append(str(ipaddress.ip_address(addr[:4] if fam == 1 else addr)))
        self.hash_key = bytes(raw[13320:13336])
        rows = memoryview(bytes(raw[13336:13336 + 65536 * 8])).cast("I")
        self.primary = rows[0::2]
        self.secondary = rows[1::2]

    def row(self, r):
        return self.backends[self.primary[r]], self.backends[self.secondary[r]]


def read_glbd(path):
    data = Path(path).read_bytes()
    assert data[:4] == b"GLBD"
    (n,) = struct.unpack_from("<I", data, 8)
    return [Table(data[24 + 537624 * t: 24 + 537624 * (t + 1)]) for t in range(n)]


def field_bits(fields):
    """GLBD v3 trailer byte of a field list: src_addr 0x1, dst_addr 0x2, src_port 0x4, dst_port 0x8."""
    return sum(1 << FIELD_BITS.index(f) for f in fields)


def glbd_v3(v2_bytes, per_table):
    """A v3 file from a v2 file, composed here from the format's description (not by the code
    under test): version 3, then per table {u8 hash_fields, u8 alt_hash_fields, u16 0}.
    `per_table` is [(fields, alt_fields)] in table order."""
    (n,) = struct.unpack_from("<I", v2_bytes, 8)
    assert v2_bytes[4:8] == struct.pack("<I", 2) and len(v2_bytes) == 24 + 537624 * n
    assert len(per_table) == n
    trailer = b"".join(struct.pack("<BBH", field_bits(f), field_bits(a), 0) for f, a in per_table)
    return v2_bytes[:4] + struct.pack("<I", 3) + v2_bytes[8:] + trailer


def pool_content_hash(data, t):
    """sha256 of table t as a 1-table file of the same version (v3: with its trailer entry)."""
    import hashlib
    (n,) = struct.unpack_from("<I", data, 8)
    (version,) = struct.unpack_from("<I", data, 4)
    one = data[:8] + struct.pack("<I", 1) + data[12:24] + data[24 + 537624 * t: 24 + 537624 * (t + 1)]
    if version == 3:
        one += data[24 + 537624 * n + 4 * t: 24 + 537624 * n + 4 * (t + 1)]
    return hashlib.sha256(one).hexdigest()


def ts_reference(request):
    """Runs tests/packets/ts_reference.ts (packages/forwarding: encodeGlbd, explainFlow)."""
    tsx = REPO / "node_modules" / ".bin" / "tsx"
    out = subprocess.run([str(tsx), str(Path(__file__).with_name("ts_reference.ts"))],
                         cwd=REPO, input=json.dumps(request), check=True, capture_output=True,
                         text=True).stdout
    return json.loads(out)


def flow_digest(hash_key, fields, src, dst, sport, dport):
    msg = b""
    if "src_addr" in fields:
        msg += ipaddress.ip_address(src).packed
    if "dst_addr" in fields:
        msg += ipaddress.ip_address(dst).packed
    if "src_port" in fields:
        msg += struct.pack(">H", sport)
    if "dst_port" in fields:
        msg += struct.pack(">H", dport)
    return siphash24(hash_key, msg)


def expect(table, src, dst, sport=0, dport=0, fields=("src_addr",), alt_fields=()):
    """What the director must do with the client flow src:sport -> dst:dport."""
    d = flow_digest(table.hash_key, fields, src, dst, sport, dport)
    row = d & 0xFFFF
    primary, secondary = table.row(row)
    hops = [secondary]
    if alt_fields:
        a = flow_digest(table.hash_key, alt_fields, src, dst, sport, dport) & 0xFFFF
        hops += list(table.row(a))
    return {"row": row, "primary": primary, "hops": hops,
            "sport": 0x8000 | ((d ^ sport) & 0x7FFF)}


# ---------------------------------------------------------------------------- checksums


def csum(data):
    if len(data) % 2:
        data += b"\0"
    s = sum(struct.unpack(f"!{len(data) // 2}H", data))
    while s >> 16:
        s = (s & 0xFFFF) + (s >> 16)
    return (~s) & 0xFFFF


def check_gue(frame, inner, exp, gateway_mac, src_mac, source_ip, tos=None):
    """Checks one encapsulated frame field by field; returns the decoded outer fields."""
    assert frame[0:6] == bytes.fromhex(gateway_mac.replace(":", "")), "Ethernet dst = gateway"
    if src_mac:
        assert frame[6:12] == bytes.fromhex(src_mac.replace(":", "")), "Ethernet src = port MAC"
    assert frame[12:14] == b"\x08\x00"
    ip = frame[14:34]
    assert ip[0] == 0x45
    if tos is not None:
        assert ip[1] == tos, "TOS copied from the inner packet"
    tot = struct.unpack("!H", ip[2:4])[0]
    assert tot == len(frame) - 14, "outer total length"
    assert struct.unpack("!H", ip[6:8])[0] == 0x4000, "DF set, no fragment offset"
    assert ip[8] == 64, "TTL 64"
    assert ip[9] == 17, "UDP"
    assert csum(ip) == 0, "outer IPv4 header checksum"
    assert socket.inet_ntoa(ip[12:16]) == source_ip
    assert socket.inet_ntoa(ip[16:20]) == exp["primary"], "outer dst = primary"
    udp = frame[34:42]
    sport, dport, ulen, ucs = struct.unpack("!HHHH", udp)
    assert sport == exp["sport"], f"outer sport {sport} != {exp['sport']}"
    assert dport == GUE_PORT
    assert ulen == len(frame) - 34
    pseudo = ip[12:20] + struct.pack("!BBH", 0, 17, ulen)
    assert ucs != 0 and csum(pseudo + frame[34:]) == 0, "UDP checksum"
    hops = exp["hops"]
    gue = frame[42:50 + 4 * len(hops)]
    assert gue[0] == 1 + len(hops), "GUE version 0, C 0, hlen"
    assert gue[1] == (4 if inner[0] >> 4 == 4 else 41), "GUE proto"
    assert gue[2:4] == b"\0\0", "GUE flags"
    assert gue[4:6] == b"\0\0", "GLB private type 0"
    assert gue[6] == 0, "next_hop 0"
    assert gue[7] == len(hops), "hop_count"
    got_hops = [socket.inet_ntoa(gue[8 + 4 * i: 12 + 4 * i]) for i in range(len(hops))]
    assert got_hops == hops, f"hops {got_hops} != {hops}"
    assert frame[50 + 4 * len(hops):] == inner, "inner packet unchanged"
    return {"dst": exp["primary"], "sport": sport}


# ---------------------------------------------------------------------------- pcap files


def write_pcap(path, frames):
    with open(path, "wb") as f:
        f.write(struct.pack("<IHHiIII", 0xA1B2C3D4, 2, 4, 0, 0, 65535, 1))
        for i, fr in enumerate(frames):
            f.write(struct.pack("<IIII", i // 1000000, i % 1000000, len(fr), len(fr)))
            f.write(fr)


def read_pcap(path):
    data = Path(path).read_bytes()
    magic = struct.unpack_from("<I", data, 0)[0]
    assert magic in (0xA1B2C3D4, 0xA1B23C4D), hex(magic)
    out, off = [], 24
    while off + 16 <= len(data):
        incl = struct.unpack_from("<I", data, off + 8)[0]
        out.append(data[off + 16: off + 16 + incl])
        off += 16 + incl
    return out


# ---------------------------------------------------------------------------- the director


class Control:
    """A control-socket client: one request per line, one reply per line."""

    def __init__(self, path):
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.settimeout(30)
        self.sock.connect(str(path))
        self.buf = b""

    def raw(self, line: bytes):
        self.sock.sendall(line)
        while b"\n" not in self.buf:
            chunk = self.sock.recv(1 << 20)
            if not chunk:
                raise ConnectionError("director closed the control connection")
            self.buf += chunk
        line, self.buf = self.buf.split(b"\n", 1)
        return json.loads(line)

    def call(self, cmd, **args):
        return self.raw((json.dumps({"cmd": cmd, **args}) + "\n").encode())

    def ok(self, cmd, **args):
        reply = self.call(cmd, **args)
        assert reply["ok"], reply
        return reply["result"]

    def close(self):
        self.sock.close()


class Notify:
    """A datagram socket standing in for systemd's notify socket ($NOTIFY_SOCKET of a Type=notify
    unit): each message is a dict of its VAR=value lines."""

    def __init__(self, path):
        self.path = str(path)
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        self.sock.bind(self.path)
        self.sock.settimeout(0.1)
        self.seen = []  # every message received, in order

    def next(self, proc=None, timeout=30):
        """The next message; fails when `proc` exits or nothing comes within `timeout` seconds."""
        deadline = time.time() + timeout
        while True:
            try:
                data = self.sock.recv(65536)
            except TimeoutError:
                if proc is not None and proc.poll() is not None:
                    raise RuntimeError(f"exited {proc.returncode} before notifying") from None
                if time.time() > deadline:
                    raise TimeoutError(f"no notification in {timeout}s") from None
                continue
            msg = dict(line.split("=", 1) for line in data.decode().split("\n") if line)
            self.seen.append(msg)
            return msg

    def wait(self, key, value="1", proc=None, timeout=30):
        """Skips messages until one sets key=value; returns it."""
        while True:
            msg = self.next(proc, timeout)
            if msg.get(key) == value:
                return msg

    def close(self):
        self.sock.close()
        with contextlib.suppress(FileNotFoundError):
            os.unlink(self.path)


@contextlib.contextmanager
def director(eal_args, config, workdir, netns=None, notify=None):
    """Starts tide-director; yields (process, Control); always stops it and removes the socket.
    With `notify` (a Notify) it runs as under systemd: the start waits for READY=1 and then
    connects once, so a READY=1 sent before the control socket listens fails the start."""
    workdir = Path(workdir)
    sock = workdir / "director.sock"
    cfg = {"control_socket": str(sock), **config}
    cfg_path = workdir / "director.json"
    cfg_path.write_text(json.dumps(cfg))
    # --no-huge cannot be combined with --in-memory: a unique file prefix keeps runs apart, and
    # its runtime directory is removed afterwards.
    prefix = f"tide-test-{os.getpid()}-{next(_runs)}"
    cmd = [TEST_DIRECTOR, DIRECTOR, f"--file-prefix={prefix}", *eal_args, "--", "--config",
           str(cfg_path)]
    if netns:
        cmd = ["ip", "netns", "exec", netns, *cmd]
    log = open(workdir / "director.log", "wb")
    env = {**os.environ, "NOTIFY_SOCKET": notify.path} if notify else None
    proc = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, env=env)
    ctl = None
    try:
        if notify:
            notify.wait("READY", proc=proc)
            try:
                ctl = Control(sock)
            except OSError as e:
                raise AssertionError(f"READY=1 came before the control socket listened: {e}") from e
        deadline = time.time() + 30
        while ctl is None:
            if proc.poll() is not None:
                raise RuntimeError("tide-director exited {}:\n{}".format(
                    proc.returncode, (workdir / "director.log").read_text(errors="replace")))
            if time.time() > deadline:
                raise TimeoutError("control socket did not appear")
            try:
                ctl = Control(sock)
            except OSError:
                time.sleep(0.05)
        yield proc, ctl
    finally:
        if ctl:
            ctl.close()
        if proc.poll() is None:
            proc.send_signal(signal.SIGTERM)
            try:
                proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
        log.close()
        shutil.rmtree(f"/var/run/dpdk/{prefix}", ignore_errors=True)


def wait_rx(ctl, n, timeout=60):
    """Waits until the director has received n packets; returns the stats."""
    deadline = time.time() + timeout
    while True:
        stats = ctl.ok("stats")
        if stats["totals"]["rx_packets"] >= n:
            return stats
        if time.time() > deadline:
            raise TimeoutError(f"received {stats['totals']['rx_packets']} of {n}")
        time.sleep(0.05)


def tmpdir():
    return tempfile.TemporaryDirectory(prefix="tide-director-test-")
