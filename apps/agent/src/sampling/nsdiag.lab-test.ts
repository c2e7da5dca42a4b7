/**
 * tide-nsdiag against real namespaces (root): a listener whose listen() backlog somaxconn caps,
 * with a filled accept queue, read through tide-nsdiag and compared with ss in the namespace; fresh
 * sysctls and counters through the kept fds; a namespace that disappears mid-run; malformed
 * requests; a killed tide-nsdiag restarted; ESTABLISHED sockets counted per local address:port
 * (IPv4, IPv6, IPv4-mapped) the same as the ss fallback counts them, and what one dump costs with
 * 10,000 of them (printed, not asserted). Binary: TIDE_NSDIAG_BINARY or dataplane/build/tide-nsdiag
 * (`make -C dataplane build/tide-nsdiag`); missing = failure. TIDE_NSDIAG_EST_KEYS names the
 * binary's MAX_EST_KEYS when it was built smaller (make test-nsdiag's pruning pass).
 */
import { execFileSync, spawn, type ChildProcess } from "node:child_process";
import { accessSync, constants, readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { createInterface } from "node:readline";
import { NamespaceObservation } from "@tide/contracts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parseProcNetCounters } from "../kernel/counters";
import { parseSsListeners } from "../kernel/listeners";
import { NsdiagClient } from "../namespaces/nsdiag-client";
import { HostSampler } from "./namespace-sampler";

const BINARY =
  process.env.TIDE_NSDIAG_BINARY ?? path.resolve(__dirname, "../../../../dataplane/build/tide-nsdiag");
const NS = `tidensd${process.pid}-a`;
const GONE = `tidensd${process.pid}-b`;
/** Known ESTABLISHED connections (exact counts), and 5,000 of them (10,000 sockets) for the cost. */
const EST = `tidensd${process.pid}-e`;
const BULK = `tidensd${process.pid}-f`;
/** A listener and no connection: the established dump is skipped (sockstat inuse = listeners). */
const IDLE = `tidensd${process.pid}-g`;
const BULK_CONNECTIONS = 5_000;
/** Distinct local address:ports the binary counts exactly (tide_nsdiag.c MAX_EST_KEYS). */
const EST_KEYS = Number(process.env.TIDE_NSDIAG_EST_KEYS ?? 65_536);
const PORT = 18090;
const PORT6 = 18091;
const SOMAXCONN = 4;
const CLIENTS = 8;
let server: ChildProcess | null = null;
const holders: ChildProcess[] = [];
const TICKS_PER_S = Number(execFileSync("getconf", ["CLK_TCK"], { encoding: "utf8" }).trim());

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

/**
 * Hold established connections: for each [family, listen address, port, connect address, n], a
 * listener and n clients connected to it and accepted (both ends ESTABLISHED, in one namespace).
 */
const HOLDER = (groups: [string, string, number, string, number][]) => `
import socket,time,resource
resource.setrlimit(resource.RLIMIT_NOFILE,(resource.getrlimit(resource.RLIMIT_NOFILE)[1],)*2)
keep=[]
for fam,addr,port,to,n in ${JSON.stringify(groups)}:
    s=socket.socket(socket.AF_INET6 if fam=="6" else socket.AF_INET)
    if fam=="6": s.setsockopt(socket.IPPROTO_IPV6,socket.IPV6_V6ONLY,0)
    s.bind((addr,port)); s.listen(4096); keep.append(s)
    for i in range(n):
        c=socket.create_connection((to,port)); a,_=s.accept(); keep+=[c,a]
print("ready",flush=True)
time.sleep(600)`;

async function holdConnections(
  ns: string,
  groups: [string, string, number, string, number][],
): Promise<void> {
  const p = spawn("ip", ["netns", "exec", ns, "python3", "-c", HOLDER(groups)], {
    stdio: ["ignore", "pipe", "inherit"],
  });
  holders.push(p);
  await new Promise<void>((resolve, reject) => {
    p.stdout!.once("data", () => resolve());
    p.once("exit", (code) => reject(new Error(`connection holder in ${ns} exited ${code}`)));
  });
}

/** CPU seconds (user + system) a process has used. */
function cpuSeconds(pid: number): number {
  const f = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]!.split(" ");
  return (Number(f[11]) + Number(f[12])) / TICKS_PER_S;
}

beforeAll(async () => {
  accessSync(BINARY, constants.X_OK); // throws: build it first
  for (const n of [NS, GONE, EST, BULK, IDLE]) {
    ip("netns", "add", n);
    ip("-n", n, "link", "set", "lo", "up");
  }
  ip("-n", EST, "addr", "add", "10.77.0.1/32", "dev", "lo");
  ip("-n", EST, "addr", "add", "fd77::1/128", "dev", "lo", "nodad");
  ip("-n", BULK, "addr", "add", "10.78.0.1/32", "dev", "lo");
  await holdConnections(EST, [
    ["4", "10.77.0.1", 8080, "10.77.0.1", 50],
    ["6", "fd77::1", 8443, "fd77::1", 7],
    ["6", "::", 8082, "10.77.0.1", 3], // dual-stack: accepted as ::ffff:10.77.0.1
  ]);
  await holdConnections(BULK, [["4", "10.78.0.1", 8080, "10.78.0.1", BULK_CONNECTIONS]]);
  await holdConnections(IDLE, [["4", "127.0.0.1", 8080, "127.0.0.1", 0]]);
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
  for (const h of holders) h.kill("SIGKILL");
  for (const n of [NS, GONE, EST, BULK, IDLE]) {
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
      // tide-nsdiag keeps 11 fds per namespace (sock_diag, 6 sysctls, 3 /proc/net files and
      // sockstat6); other helpers' namespaces come and go meanwhile, so compare what is left after those.
      const baseFds = (namespaces: number): number => readdirSync(`/proc/${pid}/fd`).length - 11 * namespaces;
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

  it("counts ESTABLISHED sockets per local address:port, as the ss fallback does", async () => {
    const client = new NsdiagClient(BINARY);
    try {
      const [r, idle] = await client.request(
        [
          { inode: inodeOf(`/run/netns/${EST}`), path: `/run/netns/${EST}` },
          { inode: inodeOf(`/run/netns/${IDLE}`), path: `/run/netns/${IDLE}` },
        ],
        false,
      );
      if (r?.state !== "ok" || idle?.state !== "ok")
        throw new Error(`tide-nsdiag: ${JSON.stringify([r, idle])}`);
      // Server ends: 50 + 7 + 3 accepted sockets; client ends: one ephemeral port each.
      expect(r.established!.slice(0, 3)).toEqual([
        ["10.77.0.1", 8080, 50],
        ["fd77::1", 8443, 7],
        ["10.77.0.1", 8082, 3],
      ]);
      // Two clients may share an ephemeral port when their destinations differ (10.77.0.1:8080
      // and 10.77.0.1:8082), so a row can count 2: the rows add up to 60, at most 2 each.
      const clients = r.established!.slice(3);
      expect(clients.reduce((sum, [, , count]) => sum + count, 0)).toBe(60);
      expect(
        clients.every(([address, , count]) => count <= 2 && ["10.77.0.1", "fd77::1"].includes(address)),
      ).toBe(true);
      expect(r.establishedTotal).toBe(120);
      // A namespace whose only TCP socket is a listener: nothing, and a total of zero.
      expect(idle).toMatchObject({ ports: [[8080, 1]], established: [], establishedTotal: 0 });
    } finally {
      client.stop();
    }
    // Through HostSampler, both paths: the same observation fields, valid for the contract.
    const fromNsdiag = new HostSampler({ nsdiagBinary: BINARY, namespaces: [EST] });
    const fromSs = new HostSampler({ nsdiagBinary: "/nonexistent/tide-nsdiag", namespaces: [EST] });
    try {
      const [a, b] = [(await fromNsdiag.sample()).namespaces[0]!, (await fromSs.sample()).namespaces[0]!];
      expect(fromSs.collectorState().path).toBe("shell");
      expect(NamespaceObservation.parse(a)).toEqual(a);
      expect(a.establishedTotal).toBe(120);
      expect(a.established![0]).toEqual({ address: "10.77.0.1", port: 8080, count: 50 });
      expect(b.established).toEqual(a.established); // same counts, same order
      expect(b.establishedTotal).toBe(a.establishedTotal);
      // One ss for both states still reads the listeners (ss lists them in another order).
      const byPort = (l: { port: number }[]) => [...l].sort((x, y) => x.port - y.port);
      expect(byPort(b.listeners)).toEqual(byPort(a.listeners));
    } finally {
      fromNsdiag.close();
      fromSs.close();
    }
  });

  it("keeps the 256 busiest of 10,000 ESTABLISHED sockets, and prints what a dump costs", async () => {
    const client = new NsdiagClient(BINARY);
    const bulk = { inode: inodeOf(`/run/netns/${BULK}`), path: `/run/netns/${BULK}` };
    const idle = { inode: inodeOf(`/run/netns/${IDLE}`), path: `/run/netns/${IDLE}` };
    try {
      const [r] = await client.request([bulk], false);
      if (r?.state !== "ok") throw new Error(`tide-nsdiag: ${JSON.stringify(r)}`);
      const keys = BULK_CONNECTIONS + 1; // the server's address:port and one per client
      expect(r.establishedTotal).toBe(2 * BULK_CONNECTIONS); // exact either way
      expect(r.established!.slice(1).every(([, , count]) => count === 1)).toBe(true);
      if (keys <= EST_KEYS) {
        expect(r.established![0]).toEqual(["10.78.0.1", 8080, BULK_CONNECTIONS]);
        expect(r.established).toHaveLength(256);
      } else {
        // Pruned (lossy counting): the busy address:port stays first; it may have lost one count
        // per prune, and a prune happens at most once per EST_KEYS / 2 new address:ports.
        const [address, port, count] = r.established![0]!;
        expect([address, port]).toEqual(["10.78.0.1", 8080]);
        expect(count).toBeLessThanOrEqual(BULK_CONNECTIONS);
        expect(count).toBeGreaterThanOrEqual(BULK_CONNECTIONS - Math.ceil(keys / (EST_KEYS / 2)));
        expect(r.established!.length).toBeLessThanOrEqual(Math.min(256, EST_KEYS));
      }
      // CPU per request (user + system of tide-nsdiag; the kernel's dump is most of it).
      const perRequestMs = async (targets: (typeof bulk)[], n: number): Promise<number> => {
        const pid = client.pid!;
        const before = cpuSeconds(pid);
        for (let i = 0; i < n; i++) await client.request(targets, false);
        return ((cpuSeconds(pid) - before) * 1000) / n;
      };
      const busy = await perRequestMs([bulk], 100);
      const empty = await perRequestMs([idle], 200);
      const ssStart = process.hrtime.bigint();
      const ssLines = ip("netns", "exec", BULK, "ss", "-Htn", "state", "established").split("\n").length - 1;
      const ssMs = Number(process.hrtime.bigint() - ssStart) / 1e6;
      console.log(
        `tide-nsdiag ${path.basename(BINARY)}: ${2 * BULK_CONNECTIONS} ESTABLISHED sockets: ` +
          `${busy.toFixed(2)} ms CPU per request; a namespace with none: ${empty.toFixed(2)} ms; ` +
          `ss -Htn state established there: ${ssMs.toFixed(0)} ms wall (${ssLines} lines, fork included)`,
      );
    } finally {
      client.stop();
    }
  });
});
