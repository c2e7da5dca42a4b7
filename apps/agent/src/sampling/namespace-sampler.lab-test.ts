import { execFileSync, spawn, type ChildProcess } from "node:child_process";
import { readlinkSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { HostSampler } from "./namespace-sampler";

// Lab tier (root): a namespace this test creates and removes; never touches anything else.
const NS = `tideag${process.pid}-a`;
const PORT = 18080;
let server: ChildProcess | null = null;
const sampler = new HostSampler();

const ip = (...args: string[]): string =>
  execFileSync("ip", args, { encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] });
const inodeOf = (p: string): number => Number(execFileSync("stat", ["-Lc", "%i", p], { encoding: "utf8" }));

beforeAll(async () => {
  ip("netns", "add", NS);
  ip("-n", NS, "link", "set", "lo", "up");
  ip("netns", "exec", NS, "sysctl", "-q", "-w", "net.core.somaxconn=128");
  server = spawn(
    "ip",
    [
      "netns",
      "exec",
      NS,
      "python3",
      "-c",
      `import socket,sys,time\ns=socket.socket()\ns.bind(("127.0.0.1",${PORT}))\ns.listen(1024)\nprint("ready",flush=True)\ntime.sleep(600)`,
    ],
    { stdio: ["ignore", "pipe", "inherit"] },
  );
  await new Promise<void>((resolve, reject) => {
    server!.stdout!.once("data", () => resolve());
    server!.once("exit", (code) => reject(new Error(`listener exited ${code}`)));
  });
});

afterAll(() => {
  sampler.close();
  server?.kill("SIGKILL");
  try {
    ip("netns", "del", NS);
  } catch {
    // already gone
  }
});

describe("HostSampler in a real namespace", () => {
  it("sees the namespace, its somaxconn and the capped backlog (Send-Q 128)", async () => {
    const sample = await sampler.sample();
    expect(sample.errors).toEqual([]);
    expect(sample.namespaces[0]!.netns.root).toBe(true);
    const ns = sample.namespaces.find((n) => n.netns.name === NS);
    expect(ns).toBeDefined();
    expect(ns!.sysctls.somaxconn).toBe(128);
    expect(ns!.pids).toContain(server!.pid);
    const listener = ns!.listeners.find((l) => l.port === PORT);
    expect(listener).toMatchObject({ address: "127.0.0.1", recvQ: 0, sendQ: 128 });
    expect(ns!.listenPorts).toContainEqual({ port: PORT, sockets: 1 });
    expect(ns!.counters.TcpExtListenOverflows).toBe(0);
    expect(sample.cpus.length).toBeGreaterThan(0);
  });

  it("samples only the named namespaces when told to (lab hosts sharing one kernel)", async () => {
    const only = new HostSampler({ namespaces: [NS] });
    try {
      const sample = await only.sample();
      expect(sample.errors).toEqual([]);
      expect(sample.namespaces.map((n) => n.netns.name)).toEqual([NS]);
      expect(sample.namespaces[0]!.listeners.find((l) => l.port === PORT)).toBeDefined();
      const none = new HostSampler({ namespaces: [`${NS}-absent`] });
      expect((await none.sample()).namespaces).toEqual([]);
      none.close();
    } finally {
      only.close();
    }
  });

  it("reuses sysctls for 10 s (cache) and re-reads them when invalidated", async () => {
    ip("netns", "exec", NS, "sysctl", "-q", "-w", "net.core.somaxconn=256");
    const cachedSample = await sampler.sample();
    const ns = cachedSample.namespaces.find((n) => n.netns.name === NS)!;
    expect(ns.sysctls.somaxconn).toBe(128);
    expect(sampler.sysctlAges.get(ns.netns.inode)).toBeGreaterThan(0);
    expect(ns.listeners.find((l) => l.port === PORT)).toBeDefined(); // ss still runs every tick
    sampler.invalidateSysctls();
    const fresh = await sampler.sample();
    expect(fresh.namespaces.find((n) => n.netns.name === NS)!.sysctls.somaxconn).toBe(256);
    expect(sampler.sysctlAges.get(ns.netns.inode)).toBe(0);
  });

  it("drops the namespace and its helper once it is gone", async () => {
    // Other namespaces (parallel tests on this host) come and go: look for the helper in NS itself
    // rather than counting helpers.
    const inode = inodeOf(`/run/netns/${NS}`);
    const helpersIn = (ino: number): number[] =>
      [...sampler.helperPids()].filter((pid) => {
        try {
          return readlinkSync(`/proc/${pid}/ns/net`) === `net:[${ino}]`;
        } catch {
          return false;
        }
      });
    expect(helpersIn(inode)).toHaveLength(1);
    server!.kill("SIGKILL");
    await new Promise((r) => server!.once("exit", r));
    ip("netns", "del", NS);
    // A parallel test's sampler may hold a shell in it for a moment (keeping it alive, unnamed, in
    // /proc): sample a few times until nobody else does.
    let sample = await sampler.sample();
    for (let i = 0; i < 6 && sample.namespaces.some((n) => n.netns.inode === inode); i++) {
      await new Promise((r) => setTimeout(r, 500));
      sample = await sampler.sample();
    }
    expect(sample.namespaces.find((n) => n.netns.name === NS)).toBeUndefined();
    const lingering = sample.namespaces.find((n) => n.netns.inode === inode);
    if (lingering === undefined) {
      expect(helpersIn(inode)).toEqual([]);
    } else {
      // Another agent's helper shell on this host keeps it alive (its shell and ours each make the
      // namespace visible to the other agent: the shell fallback cannot tell them from workloads).
      expect(lingering.netns.name).toBeNull();
      for (const pid of helpersIn(inode)) expect(lingering.pids).not.toContain(pid);
    }
  });
});
