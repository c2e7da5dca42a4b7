/**
 * The glb lab end to end (root): up, one table hash on every director, 20 stream connections through
 * the VIP, idempotent up, and a down that leaves no namespace and no process behind. Needs
 * dataplane/build/tide-director and tide-redirect (make -C dataplane): a missing one fails the test.
 */
import { readdirSync, readFileSync } from "node:fs";
import { setTimeout as sleep } from "node:timers/promises";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { listNamespaces } from "./host-command";
import { type Lab } from "./lab";
import { down, up } from "./lab-lifecycle";
import { isAlive, type LabProcessRecord } from "./lab-process";
import { summarizeConnections } from "./client-driver";

const CONNECTIONS = 20;

/** Processes (not zombies) whose command line mentions the lab's namespaces or state directory. */
function labProcessesStillRunning(markers: string[]): string[] {
  const found: string[] = [];
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry) || Number(entry) === process.pid) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, "utf8");
      if (/\) [ZX] /.test(stat)) continue;
      const cmdline = readFileSync(`/proc/${entry}/cmdline`, "utf8").split("\0").join(" ");
      if (markers.some((m) => cmdline.includes(m))) found.push(`${entry}: ${cmdline}`);
    } catch {
      /* exited meanwhile */
    }
  }
  return found;
}

describe("glb lab", () => {
  let lab: Lab;

  beforeAll(async () => {
    if (process.getuid?.() !== 0) throw new Error("the lab needs root (network namespaces, BPF)");
    // tide-redirect is required, not "auto": a missing build is a failure, never a quieter test.
    lab = await up({ fresh: true, redirect: true });
  });

  afterAll(async () => {
    // Safety net when a test failed before the teardown test ran.
    await down();
  });

  it("serves the same table hash on every director", async () => {
    const hashes = await lab.tableHashes();
    expect(Object.keys(hashes).sort()).toEqual(["dir1", "dir2"]);
    expect(new Set(Object.values(hashes)).size).toBe(1);
    expect(hashes.dir1).toBe(lab.table?.hash);
    const status = await lab.status();
    expect(status.ready).toBe(true);
    expect(status.processes.every((p) => p.alive)).toBe(true);
  });

  it(`carries ${CONNECTIONS} connections through the VIP`, async () => {
    // up() was told to require tide-redirect: without it nothing decapsulates and no
    // connection could work, so this test must not find another way to pass.
    expect(lab.redirectEnabled).toBe(true);
    const before = await lab.directorTotals();
    const driver = await lab.clientDriver();
    try {
      const opened = await driver.open(CONNECTIONS);
      expect(summarizeConnections(opened).byState).toEqual({ open: CONNECTIONS });
      await sleep(1_000);
      const running = await driver.report();
      for (const c of running) {
        expect(c.state, JSON.stringify(c)).toBe("open");
        expect(c.echoed).toBeGreaterThan(0);
      }
      const closed = await driver.close();
      const summary = summarizeConnections(closed);
      expect(summary.byState).toEqual({ closed: CONNECTIONS });
      expect(summary.errors).toEqual({});
      expect(summary.echoed).toBe(summary.sent);
      // src_addr + src_port hashing spreads one client's connections over the proxies.
      expect(Object.keys(summary.byProxy).length).toBeGreaterThanOrEqual(2);
      const http = await driver.http("/");
      expect(http.status).toBe(200);
      expect(lab.proxies).toContain(http.proxy);
      let syns = 0;
      for (const p of lab.proxies) syns += (await lab.redirectControl(p).counters()).accepted_syn;
      expect(syns).toBeGreaterThanOrEqual(CONNECTIONS);
    } finally {
      await driver.stop();
    }
    const after = await lab.directorTotals();
    let forwarded = 0;
    for (const name of lab.directors) {
      forwarded += after[name]!.forwarded_packets - (before[name]?.forwarded_packets ?? 0);
      expect(after[name]!.dropped.too_big).toBe(0);
    }
    expect(forwarded).toBeGreaterThanOrEqual(CONNECTIONS);
  });

  it("answers ICMP echo to the VIP through the directors (the GUE health-probe path)", async () => {
    const before = await lab.directorTotals();
    const { stdout } = await lab.exec("client", ["ping", "-c", "3", "-i", "0.2", "-W", "2", lab.vip]);
    expect(stdout).toMatch(/3 packets transmitted, 3 received/);
    const after = await lab.directorTotals();
    const echoes = lab.directors.reduce(
      (n, d) => n + after[d]!.forwarded_icmp_echo - (before[d]?.forwarded_icmp_echo ?? 0),
      0,
    );
    expect(echoes).toBe(3);
    let accepted = 0;
    for (const p of lab.proxies) accepted += (await lab.redirectControl(p).counters()).accepted_icmp ?? 0;
    expect(accepted).toBeGreaterThanOrEqual(3);
  });

  it("reuses a healthy running lab on a second up", async () => {
    const again = await up({ redirect: true }); // the same options as beforeAll: a lab with others is rebuilt
    expect(again.stateSnapshot().createdAt).toBe(lab.stateSnapshot().createdAt);
    again.close();
  });

  it("down leaves no namespace and no process", async () => {
    const processes: LabProcessRecord[] = lab.stateSnapshot().processes;
    expect(processes.length).toBeGreaterThan(0);
    await lab.down();
    expect((await listNamespaces()).filter((n) => n.startsWith("tide-glb-"))).toEqual([]);
    expect(processes.filter((p) => isAlive(p)).map((p) => p.key)).toEqual([]);
    expect(labProcessesStillRunning(["tide-glb-", lab.paths.dir])).toEqual([]);
  });
});
