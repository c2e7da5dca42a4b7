import { execFileSync, spawn, type ChildProcess } from "node:child_process";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { HostSampler } from "./namespace-sampler";

// Lab tier (root): a namespace this test creates and removes; never touches anything else.
const NS = `tideag${process.pid}-a`;
const PORT = 18080;
let server: ChildProcess | null = null;
const sampler = new HostSampler();

const ip = (...args: string[]): string =>
  execFileSync("ip", args, { encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] });

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
    const helpersBefore = sampler.helperCount;
    server!.kill("SIGKILL");
    await new Promise((r) => server!.once("exit", r));
    ip("netns", "del", NS);
    const sample = await sampler.sample();
    expect(sample.namespaces.find((n) => n.netns.name === NS)).toBeUndefined();
    expect(sampler.helperCount).toBe(helpersBefore - 1);
  });
});
