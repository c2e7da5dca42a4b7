/**
 * The lab as an operator's test bed (root; a lab of its own, prefix tide-ops), through the CLI where
 * an operator would use it:
 *
 *   - the lab's own client load recycles its streams, so a drained proxy's established
 *     connections to the VIP reach zero within the streams' lifetime while the load stays steady;
 *   - `lab restart <process>` restarts exactly one process (a running director, a crashed one, a
 *     crashed tide-redirect): the others keep their pids, status reports it alive with its new pid,
 *     the director serves the table again and the VIP still answers;
 *   - `lab vip add` routes a new VIP that carries HTTP and streams to the proxies end to end,
 *     follows the ECMP route, is idempotent and refuses a bad address; `vip remove` undoes it.
 *
 * Needs dataplane/build/tide-director and tide-redirect (make -C dataplane).
 */
import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import path from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { summarizeConnections } from "./client-driver";
import { labEnv, REPO_ROOT } from "./env";
import { listNamespaces, runCommand } from "./host-command";
import { type Lab } from "./lab";
import { attach, up } from "./lab-lifecycle";
import { type LabStatus } from "./lab-status";

const PREFIX = "tide-ops";
/** The load's streams live at most this long in the drain test, s. */
const LIFETIME_S = 8;
const STREAMS = 24;
/** After the lifetime: the graceful close (echo caught up, FINs) and the poll interval, s. */
const CLOSE_MARGIN_S = 3;
const ADDED_VIP = "10.200.1.0/28";
/** An address inside ADDED_VIP (a /28 on lo: the proxies answer for every address in it). */
const ADDED_ADDRESS = "10.200.1.5";
const log = (line: string) => console.log(`[lab-operations] ${line}`);

/** `npm run lab -- <args> --prefix tide-ops`, as an operator runs it. */
function cli(...args: string[]): { code: number | null; stdout: string; stderr: string } {
  const r = spawnSync(
    process.execPath,
    ["--import", "tsx", path.join(REPO_ROOT, "packages/lab/src/cli.ts"), ...args, "--prefix", PREFIX],
    { cwd: REPO_ROOT, encoding: "utf8", timeout: 120_000 },
  );
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

function cliStatus(): LabStatus {
  const r = cli("status", "--json");
  return JSON.parse(r.stdout) as LabStatus;
}

const pids = (s: LabStatus) => Object.fromEntries(s.processes.map((p) => [p.key, p.pid]));

describe("the lab as a test bed: recycled load, restart, vip add", () => {
  let lab: Lab | undefined;

  beforeAll(async () => {
    if (process.getuid?.() !== 0) throw new Error("the lab needs root (network namespaces, BPF)");
    for (const bin of [labEnv.directorBin, labEnv.redirectBin]) {
      if (!existsSync(bin)) throw new Error(`${bin} is missing: make -C dataplane`);
    }
    if ((await listNamespaces()).some((n) => n.startsWith(`${PREFIX}-`))) {
      throw new Error(`namespaces ${PREFIX}-* exist: another run of this test is going on or crashed`);
    }
    lab = await up({ prefix: PREFIX, fresh: true, redirect: true, log });
  }, 120_000);

  afterAll(async () => {
    await lab?.down();
    expect((await listNamespaces()).filter((n) => n.startsWith(`${PREFIX}-`))).toEqual([]);
  }, 60_000);

  /**
   * A handle on the state file as it is now: the CLI (another process) records new pids and VIPs
   * there, and a handle's save() writes its whole state, so an older handle must not be used.
   */
  async function current(): Promise<Lab> {
    lab?.close();
    lab = (await attach({ prefix: PREFIX }))!;
    return lab;
  }

  /** Established TCP connections a proxy holds for the lab's VIP (its agent reports the same). */
  async function established(proxy: string): Promise<number> {
    const { stdout } = await lab!.exec(proxy, ["ss", "-Htn", "state", "established", "src", lab!.vip]);
    return stdout.split("\n").filter((l) => l.trim() !== "").length;
  }

  it("drains a proxy to zero established connections under the lab's own load, within the streams' lifetime", async () => {
    await lab!.startClientLoad({ streams: STREAMS, streamLifetimeS: LIFETIME_S });
    // Every stream open, and prx1 holding its share.
    const t0 = Date.now();
    let counts: Record<string, number> = {};
    for (;;) {
      counts = Object.fromEntries(
        await Promise.all(lab!.proxies.map(async (p) => [p, await established(p)])),
      );
      const total = Object.values(counts).reduce((a, b) => a + b, 0);
      if (total >= STREAMS && counts.prx1! >= 2) break;
      if (Date.now() - t0 > 30_000) throw new Error(`the load did not open: ${JSON.stringify(counts)}`);
      await sleep(250);
    }
    log(`before the drain: ${JSON.stringify(counts)}`);
    // Let one lifetime pass, so streams are being recycled when the drain starts (not all young).
    await sleep(LIFETIME_S * 1000);

    await lab!.pushTable({ prx1: "draining" });
    const drainedAt = Date.now();
    let last = -1;
    let zeroAfterMs: number | null = null;
    while (Date.now() - drainedAt < (LIFETIME_S + CLOSE_MARGIN_S + 10) * 1000) {
      const n = await established("prx1");
      if (n !== last) log(`prx1 established: ${n} at ${((Date.now() - drainedAt) / 1000).toFixed(1)} s`);
      last = n;
      if (n === 0) {
        zeroAfterMs = Date.now() - drainedAt;
        break;
      }
      await sleep(200);
    }
    log(`drain to zero: ${zeroAfterMs === null ? "never" : `${(zeroAfterMs / 1000).toFixed(1)} s`}`);
    expect(zeroAfterMs, "prx1 still holds connections").not.toBeNull();
    expect(zeroAfterMs!).toBeLessThanOrEqual((LIFETIME_S + CLOSE_MARGIN_S) * 1000);

    // The offered load stayed: the other proxies took every stream, and prx1 takes no new one.
    await sleep(2_000);
    const after = Object.fromEntries(
      await Promise.all(lab!.proxies.map(async (p) => [p, await established(p)])),
    );
    log(`after the drain: ${JSON.stringify(after)}`);
    expect(after.prx1).toBe(0);
    expect(after.prx2! + after.prx3!).toBeGreaterThanOrEqual(STREAMS - 2);

    await lab!.pushTable({});
    await lab!.stopClientLoad();
  }, 90_000);

  it("restarts one process, running or crashed; the others keep their pids and status tracks it", async () => {
    const before = cliStatus();
    expect(before.processes.every((p) => p.alive)).toBe(true);

    // A running director: new pid, everything else untouched, the table loaded again.
    const r1 = cli("restart", "dir1");
    expect(r1.code, r1.stderr).toBe(0);
    expect(r1.stderr).toMatch(/dir1 restarted: pid \d+ -> \d+/);
    log(r1.stderr.trim());
    const s1 = cliStatus();
    expect(s1.processes.every((p) => p.alive)).toBe(true);
    expect(pids(s1).dir1).not.toBe(pids(before).dir1);
    expect({ ...pids(s1), dir1: 0 }).toEqual({ ...pids(before), dir1: 0 });
    expect(s1.directors.find((d) => d.name === "dir1")).toMatchObject({
      running: true,
      tableHash: s1.tableHash,
    });

    // A crashed director (SIGKILL: its socket stays behind) and a crashed tide-redirect.
    process.kill(pids(s1).dir2!, "SIGKILL");
    process.kill(pids(s1)["prx2.redirect"]!, "SIGKILL");
    await sleep(300);
    const crashed = cliStatus();
    const dead = crashed.processes.filter((p) => !p.alive).map((p) => p.key);
    expect(dead.sort()).toEqual(["dir2", "prx2.redirect"]);
    expect(cli("status").stdout).toMatch(/DEAD \(npm run lab -- restart dir2\)/);
    for (const name of ["lab-director-2", "prx2.redirect"]) {
      const r = cli("restart", name);
      expect(r.code, r.stderr).toBe(0);
      log(r.stderr.trim());
    }
    const s2 = cliStatus();
    expect(s2.processes.every((p) => p.alive)).toBe(true);
    expect({ ...pids(s2), dir2: 0, "prx2.redirect": 0 }).toEqual({
      ...pids(s1),
      dir2: 0,
      "prx2.redirect": 0,
    });
    expect(s2.directors.every((d) => d.running && d.tableHash === s2.tableHash)).toBe(true);
    expect(s2.proxies.find((p) => p.name === "prx2")?.redirectCounters).not.toBeNull();

    // The VIP answers from every proxy again, through both directors.
    const driver = await (await current()).clientDriver();
    try {
      const flows = await driver.open(24);
      const summary = summarizeConnections(flows);
      expect(summary.byState).toEqual({ open: 24 });
      expect(Object.keys(summary.byProxy).sort()).toEqual(["prx1", "prx2", "prx3"]);
      expect(summarizeConnections(await driver.close()).errors).toEqual({});
    } finally {
      await driver.stop();
    }

    // An unknown name: usage error, naming the lab's processes.
    const bad = cli("restart", "dir9");
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/no lab process "dir9"; the lab's processes: .*dir1.*prx2\.redirect/);
    const several = cli("restart", "prx1");
    expect(several.code).toBe(2);
    expect(several.stderr).toMatch(/name one of prx1\.server, prx1\.redirect/);
  }, 180_000);

  it("routes a VIP added with vip add end to end, and vip remove undoes it", async () => {
    const hashBefore = lab!.table!.hash;
    const add = cli("vip", "add", ADDED_VIP);
    expect(add.code, add.stderr).toBe(0);
    expect(add.stderr).toMatch(/10\.200\.1\.0\/28 routed/);
    const routerRoute = async () =>
      (await runCommand(["ip", "-n", `${PREFIX}-router`, "route", "show", ADDED_VIP])).stdout.trim();
    expect(await routerRoute()).toMatch(
      /nexthop via 10\.100\.2\.2 dev dir1[\s\S]*nexthop via 10\.100\.3\.2 dev dir2/,
    );
    for (const p of lab!.proxies) {
      const { stdout } = await lab!.exec(p, ["ip", "-4", "-o", "addr", "show", "dev", "lo"]);
      expect(stdout, p).toContain(`inet ${ADDED_VIP} `);
    }

    // Again: a no-op; a bad address and an overlap: usage errors that say why.
    const again = cli("vip", "add", ADDED_VIP);
    expect(again.code, again.stderr).toBe(0);
    expect(again.stderr).toMatch(/was routed already/);
    expect(cli("vip", "add", "10.200.1.5/28")).toMatchObject({
      code: 2,
      stderr: expect.stringMatching(/host bits set \(did you mean 10\.200\.1\.0\/28\?\)/),
    });
    expect(cli("vip", "add", "10.200.1.4")).toMatchObject({
      code: 2,
      stderr: expect.stringMatching(/overlaps 10\.200\.1\.0\/28/),
    });
    expect(cli("vip", "add", "10.200.1.0/28", "--pool", "other")).toMatchObject({
      code: 2,
      stderr: expect.stringMatching(/one pool, web/),
    });
    expect(JSON.parse(cli("vip", "list", "--json").stdout)).toEqual([{ cidr: ADDED_VIP, pool: "web" }]);

    // The lab's table now binds it: HTTP and streams through the directors to every proxy.
    const table = (await current()).table!;
    expect(table.hash).not.toBe(hashBefore);
    expect(await lab!.tableHashes()).toEqual({ dir1: table.hash, dir2: table.hash });
    const driver = await lab!.clientDriver();
    try {
      const http = await driver.http(`http://${ADDED_ADDRESS}/`);
      expect(http).toMatchObject({ status: 200, error: null });
      const flows = await driver.open(24, { host: ADDED_ADDRESS });
      const summary = summarizeConnections(flows);
      expect(summary.byState).toEqual({ open: 24 });
      expect(Object.keys(summary.byProxy).sort()).toEqual(["prx1", "prx2", "prx3"]);
      await sleep(500);
      const reports = await driver.report(flows.map((f) => f.id));
      expect(reports.every((r) => r.state === "open" && r.echoed > 0)).toBe(true);
      expect(summarizeConnections(await driver.close()).errors).toEqual({});

      // It follows the lab's ECMP route.
      await lab!.setDirectorEcmp("dir2", false);
      expect(await routerRoute()).toMatch(/via 10\.100\.2\.2 dev dir1/);
      expect(await routerRoute()).not.toMatch(/dir2/);
      await lab!.setDirectorEcmp("dir2", true);
      expect(await routerRoute()).toMatch(/dir1[\s\S]*dir2/);

      // Removed: no route, no address, the table as before; the VIP no longer answers.
      const remove = cli("vip", "remove", ADDED_VIP);
      expect(remove.code, remove.stderr).toBe(0);
      expect(await routerRoute()).toBe("");
      for (const p of lab!.proxies) {
        const { stdout } = await lab!.exec(p, ["ip", "-4", "-o", "addr", "show", "dev", "lo"]);
        expect(stdout, p).not.toContain("10.200.1.0");
      }
      expect((await current()).table!.hash).toBe(hashBefore);
      expect(JSON.parse(cli("vip", "list", "--json").stdout)).toEqual([]);
      const gone = await driver.http(`http://${ADDED_ADDRESS}/`, { timeoutMs: 2_000 });
      expect(gone.status).toBe(0);
      expect(cli("vip", "remove", ADDED_VIP)).toMatchObject({
        code: 2,
        stderr: expect.stringMatching(/was not added/),
      });
    } finally {
      await driver.stop();
    }
  }, 180_000);
});
