import { newId, type HealthCheckOutcome, type ProxyHealthView } from "@tide/contracts";
import { createDb, type Db } from "@tide/db";
import { afterAll, beforeAll, beforeEach, describe, expect, inject, it } from "vitest";
import type { HostCaller } from "../../auth/actor";
import { makePool, truncateAll } from "../../testing/fixtures";
import { recordHealthReport } from "./proxy-health.service";

/**
 * Issue 27 item 8: a director's health report of 4,096 views (AgentHealthReport's limit) took
 * 54 s on the bench, one upsert per view. A report is stored in one statement: the statements it
 * asks of the database do not grow with its views. The time is printed, never asserted.
 */

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

/** The largest report an agent may send (contracts AgentHealthReport: views max 4096). */
const VIEWS = 4096;

/**
 * A client that counts the statements asked through it (model operations and raw SQL alike). A
 * pool's reconcile runs in its own interactive transaction, which is not counted: it is fixed per
 * pool, not per view. Before issue 27 a 4,096-view report counted 4,100 (an upsert per view).
 */
function counting(base: Db) {
  const counter = { statements: 0 };
  const client = base.$extends({
    query: {
      async $allOperations({ args, query }) {
        counter.statements++;
        return query(args);
      },
    },
  }) as unknown as Db;
  return { client, counter };
}

/** Proxies a table holds at most (forwarding MAX_BACKENDS): a pool's share of the report. */
const PROXIES_PER_POOL = 256;

/** A director serving VIEWS / PROXIES_PER_POOL full pools of active proxies, and views of them. */
async function bigFleet() {
  const pools: { id: string }[] = [];
  for (let n = 0; n < VIEWS / PROXIES_PER_POOL; n++) pools.push(await makePool(db, `big-${n}`, 0));
  const proxies = Array.from({ length: VIEWS }, (_, i) => ({
    id: newId("proxy"),
    poolId: pools[Math.floor(i / PROXIES_PER_POOL)]!.id,
    address: `10.${100 + (i >> 16)}.${(i >> 8) & 255}.${i & 255}`,
    hostname: `big-proxy-${i}`,
    state: "active" as const,
    slot: i % PROXIES_PER_POOL,
  }));
  await db.proxy.createMany({ data: proxies });
  const director = await db.director.create({
    data: {
      id: newId("director"),
      hostname: "dir-big",
      pools: { connect: pools.map((p) => ({ id: p.id })) },
    },
  });
  const host = await db.host.create({ data: { id: newId("host"), name: "dir-big", roles: ["director"] } });
  const caller: HostCaller = {
    hostId: host.id,
    hostname: "dir-big",
    tokenId: "htk_test",
    label: "host dir-big",
  };
  const check = (ok: boolean, i: number): HealthCheckOutcome => ({
    kind: "gue",
    ok,
    latencyUs: ok ? 300 + (i % 100) : null,
    detail: ok ? "echo reply" : "timeout after 1000 ms",
    at: new Date().toISOString(),
  });
  const views = (up: boolean, n = VIEWS): ProxyHealthView[] =>
    proxies.slice(0, n).map((p, i) => ({
      poolId: p.poolId,
      proxyId: p.id,
      up,
      since: new Date(Date.now() - 60_000).toISOString(),
      checks: [check(up, i)],
    }));
  return { director, caller, views };
}

describe("a director's health report", () => {
  it(`stores ${VIEWS} views in as many statements as one view per pool`, async () => {
    const f = await bigFleet();
    const { client, counter } = counting(db);

    // A first report inserts every view; the next one updates them all (the steady state).
    for (const phase of ["insert", "update"] as const) {
      counter.statements = 0;
      const started = performance.now();
      const r = await recordHealthReport(client, f.caller, { views: f.views(true) });
      const ms = performance.now() - started;
      console.log(`${VIEWS}-view report (${phase}): ${ms.toFixed(0)} ms, ${counter.statements} statements`);
      expect(r).toMatchObject({ accepted: VIEWS, ignored: [], changed: [] });
      expect(await db.proxyHealthView.count({ where: { directorId: f.director.id } })).toBe(VIEWS);
      expect(counter.statements).toBeLessThan(VIEWS / PROXIES_PER_POOL + 8); // a reconcile per pool
    }
    counter.statements = 0;
    // One view of each pool: the same pools to look at, 1/PROXIES_PER_POOL of the views.
    await recordHealthReport(client, f.caller, {
      views: f.views(true).filter((_, i) => i % PROXIES_PER_POOL === 0),
    });
    const one = counter.statements;
    counter.statements = 0;
    await recordHealthReport(client, f.caller, { views: f.views(true) });
    expect(counter.statements).toBe(one);

    // What was stored is what was sent (a view that changed is read back as sent).
    const sent = f.views(false, 2)[1]!;
    await recordHealthReport(client, f.caller, { views: [sent, sent] });
    const stored = await db.proxyHealthView.findUniqueOrThrow({
      where: { directorId_proxyId: { directorId: f.director.id, proxyId: sent.proxyId } },
    });
    expect({
      up: stored.up,
      since: stored.since?.toISOString(),
      checks: stored.checks,
    }).toEqual({ up: false, since: sent.since, checks: sent.checks });
    expect(Math.abs(stored.reportedAt.getTime() - Date.now())).toBeLessThan(60_000);
  }, 300_000);

  it("stores a view whose up and since are null", async () => {
    const f = await bigFleet();
    const view = { ...f.views(true, 1)[0]!, up: null, since: null, checks: [] };
    await recordHealthReport(db, f.caller, { views: [view] });
    const stored = await db.proxyHealthView.findUniqueOrThrow({
      where: { directorId_proxyId: { directorId: f.director.id, proxyId: view.proxyId } },
      select: { up: true, since: true, checks: true },
    });
    expect(stored).toEqual({ up: null, since: null, checks: [] });
  });
});
