/**
 * tide-nsdiag against real namespaces (root): a listener whose listen() backlog somaxconn caps,
 * with a filled accept queue, read through tide-nsdiag and compared with ss in the namespace; fresh
 * sysctls and counters through the kept fds; a namespace that disappears mid-run; malformed
 * requests; a killed tide-nsdiag restarted. Binary: TIDE_NSDIAG_BINARY or
 * dataplane/build/tide-nsdiag (`make -C dataplane build/tide-nsdiag`); missing = failure.
 */
import { execFileSync, spawn, type ChildProcess } from "node:child_process";
import { accessSync, constants, readdirSync } from "node:fs";
import path from "node:path";
import { createInterface } from "node:readline";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parseProcNetCounters } from "../kernel/counters";
import { parseSsListeners } from "../kernel/listeners";
import { NsdiagClient } from "../namespaces/nsdiag-client";
import { HostSampler } from "./namespace-sampler";

const BINARY =
  process.env.TIDE_NSDIAG_BINARY ?? path.resolve(__dirname, "../../../../dataplane/build/tide-nsdiag");
const NS = `tidensd${process.pid}-a`;
const GONE = `tidensd${process.pid}-b`;
const PORT = 18090;
const PORT6 = 18091;
const SOMAXCONN = 4;
const CLIENTS = 8;
let server: ChildProcess | null = null;

const ip = (...args: string[]): string =>
  execFileSync("ip", args, { encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] });
const inodeOf = (p: string): number => Number(execFileSync("stat", ["-Lc", "%i", p], { encoding: "utf8" }));

// listen(64) capped to somaxconn 4; accept() never called, CLIENTS connections fill the queue.
const SERVER = `
import socket,time
s=socket.socket(); s.bind(("127.0.0.1",${PORT})); s.listen(64)
s6=socket.socket(socket.AF_INET6); s6.bind(("::",${PORT6})); s6.listen(2)
cs=[]
for i in range(${CLIENTS}):
    c=socket.socket(); c.setblocking(False); c.connect_ex(("127.0.0.1",${PORT})); cs.append(c)
time.sleep(1)
print("ready",flush=True)
time.sleep(600)`;

beforeAll(async () => {
  accessSync(BINARY, constants.X_OK); // throws: build it first
  for (const n of [NS, GONE]) {
    ip("netns", "add", n);
    ip("-n", n, "link", "set", "lo", "up");
  }
  ip("netns", "exec", NS, "sysctl", "-q", "-w", `net.core.somaxconn=${SOMAXCONN}`);
  server = spawn("ip", ["netns", "exec", NS, "python3", "-c", SERVER], {
    stdio: ["ignore", "pipe", "inherit"],
  });
  await new Promise<void>((resolve, reject) => {
    server!.stdout!.once("data", () => resolve());
    server!.once("exit", (code) => reject(new Error(`listener exited ${code}`)));
  });
});

afterAll(() => {
  server?.kill("SIGKILL");
  for (const n of [NS, GONE]) {
    try {
      ip("netns", "del", n);
    } catch {
      // already gone
    }
  }
});

describe("tide-nsdiag", () => {
  it("reports the capped backlog and the filled accept queue exactly as ss does", async () => {
    const client = new NsdiagClient(BINARY);
    try {
      const [r] = await client.request(
        [{ inode: inodeOf(`/run/netns/${NS}`), path: `/run/netns/${NS}` }],
        true,
      );
      if (r?.state !== "ok") throw new Error(`tide-nsdiag: ${JSON.stringify(r)}`);
      const v4 = r.listeners.find((l) => l[1] === PORT);
      expect(v4).toBeDefined();
      const [address, , recvQ, sendQ] = v4!;
      expect(address).toBe("127.0.0.1");
      expect(sendQ).toBe(SOMAXCONN); // listen(64) capped by somaxconn
      expect(recvQ).toBeGreaterThanOrEqual(SOMAXCONN); // full: the kernel admits backlog + 1
      expect(r.listeners.find((l) => l[1] === PORT6)).toEqual(["*", PORT6, 0, 2]); // dual-stack wildcard
      // Same listeners as ss in the namespace (address, port, Recv-Q, Send-Q).
      const ss = parseSsListeners(ip("netns", "exec", NS, "ss", "-ltnH"))
        .map((l) => [l.address, l.port, l.recvQ, l.sendQ])
        .sort();
      expect([...r.listeners].sort()).toEqual(ss);
      expect(r.ports).toEqual([
        [PORT, 1],
        [PORT6, 1],
      ]);
      expect(r.sysctls!.get("net/core/somaxconn")?.trim()).toBe(String(SOMAXCONN));
      // The kept fds read the namespace's files: same counters as cat in the namespace (values may
      // move between the two reads: the overflowing clients retransmit).
      const keys = (text: string): string[] => Object.keys(parseProcNetCounters(text)).sort();
      expect(keys(r.netstat!)).toEqual(keys(ip("netns", "exec", NS, "cat", "/proc/net/netstat")));
      expect(keys(r.snmp!)).toEqual(keys(ip("netns", "exec", NS, "cat", "/proc/net/snmp")));
      expect(parseProcNetCounters(r.netstat!).TcpExtListenOverflows).toBeGreaterThan(0); // queue overflowed
    } finally {
      client.stop();
    }
  });

  it("samples through HostSampler: sysctls and counters re-read from the kept fds are current", async () => {
    const sampler = new HostSampler({ nsdiagBinary: BINARY, sysctlRefreshMs: 0 });
    try {
      const first = await sampler.sample();
      expect(sampler.collectorState()).toMatchObject({ path: "nsdiag", nsdiag: { state: "running" } });
      expect(first.errors.filter((e) => e.inode === inodeOf(`/run/netns/${NS}`))).toEqual([]);
      expect(first.namespaces[0]!.netns.root).toBe(true);
      const ns = first.namespaces.find((n) => n.netns.name === NS)!;
      expect(ns.sysctls.somaxconn).toBe(SOMAXCONN);
      expect(ns.listeners.find((l) => l.port === PORT)).toMatchObject({
        address: "127.0.0.1",
        sendQ: SOMAXCONN,
      });
      const passiveBefore = ns.counters.TcpPassiveOpens ?? -1;
      const pingsBefore = ns.counters.IcmpOutEchoReps ?? -1;
      ip("netns", "exec", NS, "sysctl", "-q", "-w", "net.ipv4.tcp_mtu_probing=2");
      ip("netns", "exec", NS, "ping", "-c", "2", "-i", "0.2", "-q", "127.0.0.1");
      const second = await sampler.sample();
      const ns2 = second.namespaces.find((n) => n.netns.name === NS)!;
      expect(ns2.sysctls.tcpMtuProbing).toBe(2);
      expect(ns2.counters.IcmpOutEchoReps).toBe(pingsBefore + 2);
      expect(ns2.counters.TcpPassiveOpens).toBeGreaterThanOrEqual(passiveBefore);
      // The root namespace did not see the pings or the sysctl of the test namespace.
      const root = second.namespaces[0]!;
      expect(root.netns.inode).not.toBe(ns2.netns.inode);
    } finally {
      sampler.close();
    }
  });

  it("reports a namespace that disappears mid-run as gone and releases it", async () => {
    const sampler = new HostSampler({ nsdiagBinary: BINARY });
    try {
      const gonePath = `/run/netns/${GONE}`;
      const goneInode = inodeOf(gonePath);
      const before = await sampler.sample();
      expect(before.namespaces.find((n) => n.netns.name === GONE)).toBeDefined();
      const pid = sampler.collectorState().nsdiag!.pid!;
      // tide-nsdiag keeps 10 fds per namespace (sock_diag, 6 sysctls, 3 /proc/net files); other
      // helpers' namespaces come and go meanwhile, so compare what is left after those.
      const baseFds = (namespaces: number): number => readdirSync(`/proc/${pid}/fd`).length - 10 * namespaces;
      const baseBefore = baseFds(before.namespaces.length);
      ip("netns", "del", GONE);
      // Another agent on this host (a parallel test on the shell fallback) may keep a helper shell in
      // it, which keeps it alive and visible in /proc: sample a few times, then accept it only as an
      // unnamed namespace of someone else's processes.
      let after = await sampler.sample();
      for (let i = 0; i < 6 && after.namespaces.some((n) => n.netns.inode === goneInode); i++) {
        await new Promise((r) => setTimeout(r, 500));
        after = await sampler.sample();
      }
      expect(after.namespaces.find((n) => n.netns.name === NS)).toBeDefined();
      const lingering = after.namespaces.find((n) => n.netns.inode === goneInode);
      // (Other helpers' namespaces may vanish mid-tick and be reported gone: only ours matter.)
      expect(after.errors.filter((e) => e.inode === goneInode)).toEqual([]);
      expect(baseFds(after.namespaces.length)).toBe(baseBefore); // its fds were closed
      if (lingering !== undefined) {
        expect(lingering.netns.name).toBeNull();
        expect(lingering.pids).not.toContain(pid);
        expect(lingering.pids).not.toContain(process.pid);
      }
      // Asked directly (discovery raced with the deletion): gone, not fatal.
      const client = new NsdiagClient(BINARY);
      try {
        const replies = await client.request(
          [
            { inode: goneInode, path: gonePath },
            { inode: inodeOf(`/run/netns/${NS}`), path: `/run/netns/${NS}` },
          ],
          false,
        );
        expect(replies.map((r) => r.state)).toEqual(["gone", "ok"]);
      } finally {
        client.stop();
      }
    } finally {
      sampler.close();
    }
  });

  it("answers malformed requests with an error and keeps serving", async () => {
    const child = spawn(BINARY, [], { stdio: ["pipe", "pipe", "inherit"] });
    const lines = createInterface({ input: child.stdout });
    const replies: unknown[] = [];
    const done = new Promise<void>((resolve) =>
      lines.on("line", (l) => {
        replies.push(JSON.parse(l));
        if (replies.length === 7) resolve();
      }),
    );
    child.stdin.write('garbage\n[1]\n{"id":2}\n');
    child.stdin.write(`{"id":3,"ns":[{"inode":-1,"path":null}]}\n`);
    child.stdin.write(`{"id":4,"ns":[{"inode":1,"path":"${"x".repeat(5000)}"}]}\n`);
    child.stdin.write(`{"id":5,"ns":[{"inode":${inodeOf("/proc/self/ns/net")},"path":null}]}\n`);
    await done;
    child.stdin.end();
    expect(replies[0]).toMatchObject({ type: "hello" });
    expect(replies.slice(1, 6)).toEqual([
      { id: null, error: expect.stringMatching(/malformed/) },
      { id: null, error: expect.stringMatching(/not an object/) },
      { id: 2, error: expect.any(String) },
      { id: 3, error: expect.any(String) },
      { id: 4, error: expect.any(String) },
    ]);
    expect(replies[6]).toMatchObject({ id: 5, ns: [{ state: "ok" }] });
  });

  it("restarts a killed tide-nsdiag and reports the restart", async () => {
    const sampler = new HostSampler({ nsdiagBinary: BINARY });
    try {
      await sampler.sample();
      const pid = sampler.collectorState().nsdiag!.pid!;
      process.kill(pid, "SIGKILL");
      let state = sampler.collectorState();
      for (let i = 0; i < 100 && state.nsdiag!.state === "running"; i++) {
        await new Promise((r) => setTimeout(r, 20));
        state = sampler.collectorState();
      }
      expect(state.nsdiag).toMatchObject({ state: "restarting", restarts: 1 });
      const during = await sampler.sample();
      expect(during.errors.length).toBeGreaterThan(0);
      for (let i = 0; i < 100 && sampler.collectorState().nsdiag!.state !== "running"; i++)
        await new Promise((r) => setTimeout(r, 100));
      const again = await sampler.sample();
      expect(again.errors.filter((e) => e.inode === inodeOf(`/run/netns/${NS}`))).toEqual([]);
      expect(again.namespaces.find((n) => n.netns.name === NS)).toBeDefined();
      expect(sampler.collectorState().nsdiag!.pid).not.toBe(pid);
    } finally {
      sampler.close();
    }
  });

  it("falls back to ss per namespace when the binary is missing, and says so", async () => {
    const sampler = new HostSampler({ nsdiagBinary: "/nonexistent/tide-nsdiag" });
    try {
      const sample = await sampler.sample();
      expect(sampler.collectorState()).toMatchObject({
        path: "shell",
        reason: expect.stringMatching(/not found/),
      });
      expect(sample.namespaces.find((n) => n.netns.name === NS)?.sysctls.somaxconn).toBe(SOMAXCONN);
    } finally {
      sampler.close();
    }
  });
});
