import type { DataPlaneState } from "@tide/contracts";
import { createDb, touchUnchangedDirectorSync, type Db, type Prisma } from "@tide/db";
import { afterAll, beforeAll, beforeEach, describe, expect, inject, it } from "vitest";
import { createHostListener } from "../../live/host-live";
import { callerFor, makePool, makeUser, truncateAll } from "../../testing/fixtures";
import { desiredStateFor, waitForDesired } from "../fleet/desired-state.service";
import { syncThresholds } from "./director-sync.plan";
import { fleetSync, poolSync, recordDirectorSync } from "./director-sync.service";
import { transitionProxy } from "../transitions/proxy-transition.service";

let db: Db;

beforeAll(() => {
  db = createDb(inject("databaseUrl"), { max: 8 });
});
afterAll(async () => {
  await db.$disconnect();
});
beforeEach(async () => {
  await truncateAll(db);
});

const T0 = Date.parse("2026-11-23T12:00:00.000Z");
const at = (s: number) => new Date(T0 + s * 1000);

function director(tableHashes: Record<string, string>, reachable = true): DataPlaneState[] {
  return [
    {
      component: "director",
      socket: "/run/tide/director.sock",
      reachable,
      error: reachable ? null : "connect ENOENT",
      version: reachable ? "0.1.0" : null,
      tableHashes: reachable ? tableHashes : {},
      directorCounters: null,
      redirectCounters: null,
    },
  ];
}

/** A pool with four active proxies served by two directors whose agents have hosts. */
async function fleet() {
  const admin = await makeUser(db, "admin");
  const pool = await makePool(db, "www", 4);
  const ids = [];
  for (const hostname of ["dir-a", "dir-b"]) {
    const d = await db.director.create({
      data: { id: `dir_${hostname.replace("-", "")}0000`, hostname, pools: { connect: { id: pool.id } } },
    });
    await db.host.create({
      data: { id: `host_${hostname.replace("-", "")}0000`, name: hostname, roles: ["director"] },
    });
    ids.push(d.id);
  }
  /** What ingest does with a director host's batch: the host's data plane, then the sync rows. */
  const report = async (hostname: string, dataPlane: DataPlaneState[], when: Date) => {
    await db.host.update({
      where: { name: hostname },
      data: { lastSeenAt: when, dataPlane: dataPlane as unknown as Prisma.InputJsonValue },
    });
    await recordDirectorSync(db, hostname, dataPlane, when);
  };
  return { admin, pool, v1: pool.currentVersion!, ids, report };
}

describe("director sync", () => {
  const t = syncThresholds(1_000);
  const W = t.propagationExpectedMs;
  const plus = (d: Date, ms: number) => new Date(d.getTime() + ms);

  it("a change is propagating (1/2) within its expected time; behind only from a report made after it", async () => {
    const f = await fleet();
    const v1 = await db.tableVersion.findFirstOrThrow({ where: { poolId: f.pool.id, version: 1 } });
    const t1 = v1.createdAt;
    await f.report("dir-a", director({ www: v1.contentHash }), plus(t1, 1));
    await f.report("dir-b", director({ www: v1.contentHash }), plus(t1, 1));
    let pool = await poolSync(db, f.pool.id, plus(t1, 1_000));
    expect(pool).toMatchObject({ state: "in_sync", version: 1, servedBy: 2, directorCount: 2, done: true });
    expect(pool.thresholds).toEqual(t);
    expect(pool.directors[0]).toMatchObject({
      state: "in_sync",
      directorState: "in_sync",
      since: plus(t1, 1).toISOString(),
      lastReportAt: plus(t1, 1).toISOString(),
      reportAgeMs: 999,
    });

    // A drain writes v2 at tc. No report since: both are on their way, not behind, no alarm.
    const proxy = f.pool.proxies[0]!;
    const drained = await transitionProxy(db, f.admin, { proxyId: proxy.id, action: "drain" });
    expect(drained.tableVersion!.version).toBe(2);
    const v2 = await db.tableVersion.findFirstOrThrow({ where: { poolId: f.pool.id, version: 2 } });
    const tc = v2.createdAt;
    pool = await poolSync(db, f.pool.id, plus(tc, 500));
    expect(pool).toMatchObject({
      state: "propagating",
      version: 2,
      servedBy: 0,
      done: false,
      expectedBy: plus(tc, W).toISOString(),
    });
    expect(pool.directors.map((d) => [d.state, d.since, d.expectedBy])).toEqual([
      ["propagating", tc.toISOString(), plus(tc, W).toISOString()],
      ["propagating", tc.toISOString(), plus(tc, W).toISOString()],
    ]);
    expect(pool.directors[0]!.served).toEqual({ version: 1, contentHash: v1.contentHash });
    let fleetView = await fleetSync(db, plus(tc, 500));
    expect(fleetView).toMatchObject({ outOfSync: 0, silent: 0, propagating: 2, unknown: 0 });

    // dir-a serves v2; dir-b still says v1: "propagating (1/2)", counted from dir-b's first report
    // without v2.
    await f.report("dir-a", director({ www: v2.contentHash }), plus(tc, 1_000));
    await f.report("dir-b", director({ www: v1.contentHash }), plus(tc, 1_000));
    pool = await poolSync(db, f.pool.id, plus(tc, 1_500));
    expect(pool).toMatchObject({ state: "propagating", servedBy: 1, directorCount: 2 });
    expect(pool.directors.map((d) => [d.hostname, d.state, d.since])).toEqual([
      ["dir-a", "in_sync", plus(tc, 1_000).toISOString()],
      ["dir-b", "propagating", plus(tc, 1_000).toISOString()],
    ]);
    const bExpected = plus(tc, 1_000 + W);

    // dir-b's report 1 ms before the end of its time still says v1: propagating, no alarm. An
    // unchanged report moves the last report time (dir-a is not "unknown" while it reports).
    await f.report("dir-a", director({ www: v2.contentHash }), plus(bExpected, -1));
    await f.report("dir-b", director({ www: v1.contentHash }), plus(bExpected, -1));
    pool = await poolSync(db, f.pool.id, plus(bExpected, 500));
    expect(pool.directors.map((d) => d.state)).toEqual(["in_sync", "propagating"]);
    expect(pool.directors[0]!.lastReportAt).toBe(plus(bExpected, -1).toISOString());
    expect((await fleetSync(db, plus(bExpected, 500))).outOfSync).toBe(0);

    // A report made at the end of its time still says v1: behind, the fleet alarm counts it.
    await f.report("dir-b", director({ www: v1.contentHash }), bExpected);
    pool = await poolSync(db, f.pool.id, plus(bExpected, 500));
    expect(pool).toMatchObject({ state: "out_of_sync", servedBy: 1 });
    expect(pool.directors[1]).toMatchObject({
      state: "behind",
      served: { version: 1, contentHash: v1.contentHash },
      since: plus(tc, 1_000).toISOString(),
      expectedBy: bExpected.toISOString(),
    });
    fleetView = await fleetSync(db, plus(bExpected, 500));
    expect(fleetView).toMatchObject({ outOfSync: 1, propagating: 0 });
    expect(fleetView.directors.find((d) => d.hostname === "dir-b")).toMatchObject({
      state: "out_of_sync",
      since: plus(tc, 1_000).toISOString(),
    });

    // dir-b catches up; served since that report.
    await f.report("dir-b", director({ www: v2.contentHash, old: v1.contentHash }), plus(bExpected, 1_000));
    fleetView = await fleetSync(db, plus(bExpected, 1_000));
    expect(fleetView.outOfSync).toBe(0);
    expect(fleetView.directors.find((d) => d.hostname === "dir-b")).toMatchObject({
      state: "in_sync",
      extraPools: ["old"],
      pools: [{ state: "in_sync", since: plus(bExpected, 1_000).toISOString() }],
    });
  });

  it("late reports are unknown (no report for Xs), never behind; no contact at all is silent", async () => {
    const f = await fleet();
    const v1 = await db.tableVersion.findFirstOrThrow({ where: { poolId: f.pool.id, version: 1 } });
    // Their last reports before the change arrive just before it (console clock).
    const before = new Date();
    await f.report("dir-a", director({ www: v1.contentHash }), before);
    await f.report("dir-b", director({ www: v1.contentHash }), before);
    await transitionProxy(db, f.admin, { proxyId: f.pool.proxies[0]!.id, action: "drain" });
    const v2 = await db.tableVersion.findFirstOrThrow({ where: { poolId: f.pool.id, version: 2 } });
    const tc = v2.createdAt;
    // dir-a reports v2; dir-b's batches stop (the late reports), though its agent still
    // polls for desired state, so it is in contact.
    const seen = async (hostname: string, when: Date) =>
      db.host.update({ where: { name: hostname }, data: { lastSeenAt: when } });
    let propagating = 0;
    for (let s = 1; s <= 30; s++) {
      const now = plus(tc, s * 1_000);
      await f.report("dir-a", director({ www: v2.contentHash }), now);
      await seen("dir-b", now);
      const pool = await poolSync(db, f.pool.id, plus(now, 100));
      const b = pool.directors[1]!;
      expect(b.state).not.toBe("behind");
      expect(pool.directors[0]!.state).toBe("in_sync");
      if (b.reportAgeMs! > t.reportLateAfterMs) {
        expect(b).toMatchObject({ state: "unknown", since: before.toISOString() });
        expect(pool).toMatchObject({ state: "unknown", servedBy: 1 });
      } else {
        expect(b.state).toBe("propagating");
        propagating++;
      }
      const fleetView = await fleetSync(db, plus(now, 100));
      expect(fleetView).toMatchObject({ outOfSync: 0, silent: 0 });
    }
    expect(propagating).toBeGreaterThan(0);
    const unknown = (await fleetSync(db, plus(tc, 30_100))).directors.find((d) => d.hostname === "dir-b")!;
    expect(unknown).toMatchObject({ state: "unknown", lastCheckIn: plus(tc, 30_000).toISOString() });
    expect(unknown.pools[0]!.reportAgeMs).toBe(plus(tc, 30_100).getTime() - before.getTime());

    // The agent stops polling too: silent once silentAfterMs passes, and the alarm counts it.
    const last = plus(tc, 30_000);
    await f.report("dir-a", director({ www: v2.contentHash }), plus(last, t.silentAfterMs));
    expect((await fleetSync(db, plus(last, t.silentAfterMs))).silent).toBe(0);
    const silent = await fleetSync(db, plus(last, t.silentAfterMs + 1));
    expect(silent.silent).toBe(1);
    expect(silent.directors.find((d) => d.hostname === "dir-b")).toMatchObject({
      state: "silent",
      since: last.toISOString(),
      pools: [{ state: "unknown" }],
    });
    const pool = await poolSync(db, f.pool.id, plus(last, t.silentAfterMs + 1));
    expect(pool.directors[1]).toMatchObject({ state: "unknown", directorState: "silent" });
  });

  it("a director that lost its table gets the propagation time; an unreachable one is not served at once", async () => {
    const f = await fleet();
    const v1 = await db.tableVersion.findFirstOrThrow({ where: { poolId: f.pool.id, version: 1 } });
    const t0 = plus(v1.createdAt, 60_000);
    await f.report("dir-a", director({ www: v1.contentHash }), t0);
    await f.report("dir-b", director({ www: v1.contentHash }), t0);
    // dir-a's director restarted and serves nothing yet; its agent gives it the table again.
    await f.report("dir-a", director({}), plus(t0, 1_000));
    let pool = await poolSync(db, f.pool.id, plus(t0, 1_500));
    expect(pool.directors[0]).toMatchObject({ state: "propagating", since: plus(t0, 1_000).toISOString() });
    await f.report("dir-a", director({}), plus(t0, 1_000 + W));
    pool = await poolSync(db, f.pool.id, plus(t0, 1_500 + W));
    expect(pool.directors[0]).toMatchObject({ state: "not_served", since: plus(t0, 1_000).toISOString() });
    expect(pool.state).toBe("out_of_sync");

    // dir-b's director is unreachable: a fault the report states, not a change on its way.
    await f.report("dir-b", director({ www: v1.contentHash }, false), plus(t0, 2_000));
    const fleetView = await fleetSync(db, plus(t0, 2_000));
    expect(fleetView.directors[1]).toMatchObject({
      state: "out_of_sync",
      reachable: false,
      error: "connect ENOENT",
      pools: [{ state: "not_served", since: plus(t0, 2_000).toISOString(), expectedBy: null }],
    });
  });

  it("drops rows of unassigned pools", async () => {
    const f = await fleet();
    await f.report("dir-a", director({ www: f.v1.contentHash }), at(0));
    await db.director.update({ where: { hostname: "dir-a" }, data: { pools: { set: [] } } });
    await f.report("dir-a", director({}), at(1));
    expect(await db.directorPoolSync.count({ where: { directorId: f.ids[0]! } })).toBe(0);
    expect((await fleetSync(db, at(1))).directors[0]!.state).toBe("idle");
  });

  it("wakes a desired-state long poll when a change commits, and times out unchanged otherwise", async () => {
    const f = await fleet();
    const host = await db.host.findUniqueOrThrow({ where: { name: "dir-a" } });
    const first = await desiredStateFor(db, host.id);
    expect(first.directorTables.map((t) => t.contentHash)).toEqual([f.v1.contentHash]);
    const listener = createHostListener(inject("databaseUrl"));

    const quiet = Date.now();
    const unchanged = await waitForDesired(db, host.id, first.revision, 300, listener.subscribeDesired);
    expect(unchanged.revision).toBe(first.revision);
    expect(Date.now() - quiet).toBeGreaterThanOrEqual(290);

    const waiting = waitForDesired(db, host.id, first.revision, 20_000, listener.subscribeDesired);
    await new Promise((r) => setTimeout(r, 200));
    const drained = await callerFor(db, f.admin).proxies.drain({ proxyId: f.pool.proxies[1]!.id });
    const changed = await waiting;
    expect(changed.revision).toBeGreaterThan(first.revision);
    expect(changed.directorTables[0]!.contentHash).toBe(drained.tableVersion!.contentHash);
    expect(listener.size().subscribers).toBe(0);

    // Unassigning the pool is a change too (the assignment table's trigger).
    const waitingAgain = waitForDesired(db, host.id, changed.revision, 20_000, listener.subscribeDesired);
    await new Promise((r) => setTimeout(r, 200));
    await db.director.update({ where: { hostname: "dir-a" }, data: { pools: { set: [] } } });
    expect((await waitingAgain).directorTables).toEqual([]);
  });
});

describe("touchUnchangedDirectorSync (a director's unchanged report in one statement)", () => {
  const rowsOf = (hostname: string) =>
    db.directorPoolSync.findMany({
      where: { director: { hostname } },
      orderBy: { poolId: "asc" },
      select: {
        poolId: true,
        servedHash: true,
        servedChangedAt: true,
        outOfSyncSince: true,
        checkedAt: true,
      },
    });

  it("moves checkedAt only when nothing else would change, and writes nothing otherwise", async () => {
    const f = await fleet();
    const v1 = f.v1.contentHash;
    expect(await touchUnchangedDirectorSync(db, "no-such-director", { www: v1 }, at(1))).toBe("no_director");
    // No row yet: a first report is a change.
    expect(await touchUnchangedDirectorSync(db, "dir-a", { www: v1 }, at(1))).toBe("changed");
    expect(await rowsOf("dir-a")).toEqual([]);

    await f.report("dir-a", director({ www: v1 }), at(1));
    const recorded = await rowsOf("dir-a");
    expect(recorded).toMatchObject([{ servedHash: v1, outOfSyncSince: null, checkedAt: at(1) }]);

    // The same report again: only checkedAt moves (and recordDirectorSync takes this path too).
    expect(await touchUnchangedDirectorSync(db, "dir-a", { www: v1 }, at(2))).toBe("touched");
    await f.report("dir-a", director({ www: v1 }), at(3));
    expect(await rowsOf("dir-a")).toEqual([{ ...recorded[0], checkedAt: at(3) }]);
    // dir-b's rows are its own: untouched.
    expect(await rowsOf("dir-b")).toEqual([]);

    // Each kind of difference is "changed" and leaves the rows as they were.
    const before = await rowsOf("dir-a");
    expect(await touchUnchangedDirectorSync(db, "dir-a", { www: "0".repeat(64) }, at(4))).toBe("changed");
    expect(await touchUnchangedDirectorSync(db, "dir-a", {}, at(4))).toBe("changed"); // unreachable
    const other = await makePool(db, "api", 2);
    await db.director.update({
      where: { hostname: "dir-a" },
      data: { pools: { connect: { id: other.id } } },
    });
    expect(await touchUnchangedDirectorSync(db, "dir-a", { www: v1 }, at(4))).toBe("changed"); // no row for api
    await db.director.update({ where: { hostname: "dir-a" }, data: { pools: { set: [{ id: other.id }] } } });
    expect(
      await touchUnchangedDirectorSync(db, "dir-a", { api: other.currentVersion!.contentHash }, at(4)),
    ).toBe(
      "changed", // a row for www, no longer assigned; none for api
    );
    expect(await rowsOf("dir-a")).toEqual(before);
  });

  it("says changed when a new version puts a served hash out of sync, then touched once recorded", async () => {
    const f = await fleet();
    const v1 = f.v1.contentHash;
    await f.report("dir-a", director({ www: v1 }), at(1));
    const drained = await transitionProxy(db, f.admin, { proxyId: f.pool.proxies[0]!.id, action: "drain" });
    expect(drained.tableVersion!.version).toBe(2);
    // Still serving v1, which is no longer the newest: in sync flips, so the service must record it.
    expect(await touchUnchangedDirectorSync(db, "dir-a", { www: v1 }, at(2))).toBe("changed");
    await f.report("dir-a", director({ www: v1 }), at(2));
    expect(await rowsOf("dir-a")).toMatchObject([
      { servedHash: v1, outOfSyncSince: at(2), checkedAt: at(2) },
    ]);
    // Behind and still behind: unchanged; outOfSyncSince keeps its first report.
    expect(await touchUnchangedDirectorSync(db, "dir-a", { www: v1 }, at(3))).toBe("touched");
    expect(await rowsOf("dir-a")).toMatchObject([{ outOfSyncSince: at(2), checkedAt: at(3) }]);
  });

  it("decides pools without a version, and pools named like Object members, as the full path does", async () => {
    await makeUser(db, "admin");
    // No table version at all: in sync means serving nothing.
    for (const name of ["bare", "constructor"]) {
      await db.pool.create({
        data: { id: `pool_${name}00000000`, name, hashKey: Buffer.alloc(16), seed: Buffer.alloc(8) },
      });
    }
    await db.director.create({
      data: {
        id: "dir_bare00000000",
        hostname: "dir-bare",
        pools: { connect: [{ id: "pool_bare00000000" }, { id: "pool_constructor00000000" }] },
      },
    });
    expect(await touchUnchangedDirectorSync(db, "dir-bare", {}, at(1))).toBe("changed"); // no rows yet
    await recordDirectorSync(db, "dir-bare", director({}), at(1));
    expect(await rowsOf("dir-bare")).toMatchObject([
      { poolId: "pool_bare00000000", servedHash: null, outOfSyncSince: null },
      { poolId: "pool_constructor00000000", servedHash: null, outOfSyncSince: null },
    ]);
    expect(await touchUnchangedDirectorSync(db, "dir-bare", {}, at(2))).toBe("touched");
    // Serving something for a pool that has no version is out of sync.
    expect(await touchUnchangedDirectorSync(db, "dir-bare", { bare: "f".repeat(64) }, at(3))).toBe("changed");
    await recordDirectorSync(db, "dir-bare", director({ bare: "f".repeat(64) }), at(3));
    expect(await rowsOf("dir-bare")).toMatchObject([
      { servedHash: "f".repeat(64), outOfSyncSince: at(3) },
      { servedHash: null, outOfSyncSince: null, checkedAt: at(3) },
    ]);
    expect(await touchUnchangedDirectorSync(db, "dir-bare", { bare: "f".repeat(64) }, at(4))).toBe("touched");
  });
});
