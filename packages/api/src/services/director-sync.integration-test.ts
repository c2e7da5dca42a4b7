import type { DataPlaneState } from "@tide/contracts";
import { createDb, type Db, type Prisma } from "@tide/db";
import { afterAll, beforeAll, beforeEach, describe, expect, inject, it } from "vitest";
import { createHostListener } from "../live/host-live";
import { callerFor, makePool, makeUser, truncateAll } from "../testing/fixtures";
import { desiredStateFor, waitForDesired } from "./desired-state.service";
import { fleetSync, poolSync, recordDirectorSync } from "./director-sync.service";
import { transitionProxy } from "./proxy-transition.service";

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
  it("tracks served vs desired per director and pool: in sync, behind since the change, not served, silent", async () => {
    const f = await fleet();
    const hash1 = f.v1.contentHash;
    await f.report("dir-a", director({ www: hash1 }), at(0));
    await f.report("dir-b", director({ www: hash1 }), at(0));
    let pool = await poolSync(db, f.pool.id, at(1));
    expect(pool).toMatchObject({ version: 1, servedBy: 2, directorCount: 2, done: true });
    expect((await fleetSync(db, at(1))).outOfSync).toBe(0);

    // A drain writes version 2: both directors are behind at once, since the version was written.
    const proxy = f.pool.proxies[0]!;
    const drained = await transitionProxy(db, f.admin, { proxyId: proxy.id, action: "drain" });
    pool = await poolSync(db, f.pool.id, at(1));
    expect(pool).toMatchObject({ version: 2, servedBy: 0, done: false });
    expect(pool.directors.map((d) => d.state)).toEqual(["behind", "behind"]);
    expect(pool.directors[0]!.served).toEqual({ version: 1, contentHash: hash1 });
    const v2 = await db.tableVersion.findFirstOrThrow({ where: { poolId: f.pool.id, version: 2 } });
    expect(pool.directors[0]!.since).toBe(v2.createdAt.toISOString());
    expect(drained.tableVersion.version).toBe(2);

    // dir-a picks it up; dir-b's director restarted and serves nothing.
    await f.report("dir-a", director({ www: v2.contentHash }), at(2));
    await f.report("dir-b", director({}), at(2));
    pool = await poolSync(db, f.pool.id, at(2));
    expect(pool).toMatchObject({ servedBy: 1, directorCount: 2, done: false });
    expect(pool.directors.map((d) => [d.hostname, d.state, d.since])).toEqual([
      ["dir-a", "in_sync", null],
      ["dir-b", "not_served", at(2).toISOString()],
    ]);
    const sync = await fleetSync(db, at(2));
    expect(sync.outOfSync).toBe(1);
    expect(sync.directors.find((d) => d.hostname === "dir-b")).toMatchObject({
      state: "out_of_sync",
      since: at(2).toISOString(),
      reachable: true,
    });

    // Still not served a second later: "since" keeps the first moment; then it is repaired.
    await f.report("dir-b", director({}), at(3));
    expect((await poolSync(db, f.pool.id, at(3))).directors[1]!.since).toBe(at(2).toISOString());
    await f.report("dir-b", director({ www: v2.contentHash, old: hash1 }), at(4));
    const repaired = await fleetSync(db, at(4));
    expect(repaired.outOfSync).toBe(0);
    expect(repaired.directors.find((d) => d.hostname === "dir-b")).toMatchObject({
      state: "in_sync",
      extraPools: ["old"],
    });

    // An agent that stops reporting makes its director silent, whatever it last said.
    const later = await fleetSync(db, at(30));
    expect(later.silent).toBe(2);
    expect(later.directors.map((d) => d.state)).toEqual(["silent", "silent"]);
    expect((await poolSync(db, f.pool.id, at(30))).done).toBe(false);
  });

  it("counts an unreachable director as serving nothing and drops rows of unassigned pools", async () => {
    const f = await fleet();
    await f.report("dir-a", director({ www: f.v1.contentHash }, false), at(0));
    expect((await fleetSync(db, at(0))).directors[0]).toMatchObject({
      state: "out_of_sync",
      reachable: false,
      error: "connect ENOENT",
    });
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
    expect(changed.directorTables[0]!.contentHash).toBe(drained.tableVersion.contentHash);
    expect(listener.size().subscribers).toBe(0);

    // Unassigning the pool is a change too (the assignment table's trigger).
    const waitingAgain = waitForDesired(db, host.id, changed.revision, 20_000, listener.subscribeDesired);
    await new Promise((r) => setTimeout(r, 200));
    await db.director.update({ where: { hostname: "dir-a" }, data: { pools: { set: [] } } });
    expect((await waitingAgain).directorTables).toEqual([]);
  });
});
