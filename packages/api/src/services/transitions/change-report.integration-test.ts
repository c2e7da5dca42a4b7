import type { AgentRedirectFlow, DataPlaneState, RedirectVipCounters } from "@tide/contracts";
import { anyChangeReportPending, createDb, type Db } from "@tide/db";
import { afterAll, beforeAll, beforeEach, describe, expect, inject, it } from "vitest";
import { callerFor, makePool, makeUser, restCall, truncateAll } from "../../testing/fixtures";
import { redirectCounters, vipCounters } from "../../testing/redirect-counters";
import { advanceChangeReports, recordRedirectFlows } from "./change-report.service";
import { recordTraffic } from "../telemetry/proxy-traffic.service";
import { sample } from "@tide/diagnostics/fixtures";

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

const VIP = "203.0.113.10"; // makePool's bind, tcp 443

/** A tide-redirect reading at `readAt`: per-VIP counters on the pool's VIP and a noise VIP, and flows. */
function redirectState(
  readAt: Date,
  vip: Partial<RedirectVipCounters>,
  flows: AgentRedirectFlow[] | null,
): DataPlaneState[] {
  return [
    {
      component: "redirect",
      socket: "/run/tide/redirect.sock",
      reachable: true,
      error: null,
      version: "0.1.0",
      tableHashes: {},
      directorCounters: null,
      redirectCounters: redirectCounters({ accepted_second_chance: 0, accepted_alternate_hash: 0 }),
      redirectVips: [
        { address: VIP, port: 443, proto: "tcp", counters: vipCounters(vip) },
        {
          address: "198.51.100.1",
          port: 80,
          proto: "tcp",
          counters: vipCounters({ accepted_last_resort: 999 }),
        },
      ],
      countersReadAt: readAt.toISOString(),
      ...(flows === null ? {} : { redirectFlows: flows, redirectFlowsMatched: flows.length }),
    },
  ];
}

const seen = (at: Date, packets = 3) => ({ packets, lastSeenAt: at.toISOString() });
function flow(
  clientPort: number,
  kinds: Partial<Pick<AgentRedirectFlow, "secondChance" | "alternateHash" | "lastResort">>,
  address = VIP,
  firstSeenAt?: Date,
): AgentRedirectFlow {
  const times = Object.values(kinds).map((k) => Date.parse(k!.lastSeenAt));
  return {
    clientAddress: "192.0.2.50",
    clientPort,
    address,
    port: address === VIP ? 443 : 80,
    proto: "tcp",
    firstSeenAt: (firstSeenAt ?? new Date(Math.min(...times) - 1000)).toISOString(),
    secondChance: null,
    alternateHash: null,
    lastResort: null,
    ...kinds,
  };
}

/** Each proxy host reports a reading at `readAt` (its sample too, so traffic moves). */
async function report(
  hosts: { id: string; name: string }[],
  readAt: Date,
  vip: (name: string) => Partial<RedirectVipCounters>,
  flows: (name: string) => AgentRedirectFlow[] | null,
) {
  for (const h of hosts) {
    const o = { ...sample(0, { hostId: h.name }), sampledAt: readAt.toISOString() };
    const state = redirectState(readAt, vip(h.name), flows(h.name));
    await recordTraffic(db, { hostId: h.id, hostname: h.name }, o, state, 1000);
    await recordRedirectFlows(db, h.id, state);
  }
}

async function setup() {
  const admin = await makeUser(db, "admin");
  const api = callerFor(db, admin);
  const pool = await makePool(db, "web", 3, { served: true });
  const hosts = await Promise.all(
    [1, 2, 3].map((i) =>
      db.host.create({ data: { id: `host_webproxy${i}0000`, name: `web-proxy-${i}`, roles: ["proxy"] } }),
    ),
  );
  const director = (await db.director.findFirstOrThrow({ where: { pools: { some: { id: pool.id } } } }))!;
  return { api, admin, pool, hosts, director };
}

/** Move a report's window back in time, as if the change was made `s` seconds ago. */
async function agoS(tableVersionId: string, s: number) {
  const openedAt = new Date(Date.now() - s * 1000);
  await db.changeReport.update({ where: { tableVersionId }, data: { openedAt } });
  return openedAt;
}

async function served(directorId: string, poolId: string, contentHash: string, at: Date) {
  await db.directorPoolSync.upsert({
    where: { directorId_poolId: { directorId, poolId } },
    create: { directorId, poolId, servedHash: contentHash, servedChangedAt: at, checkedAt: at },
    update: { servedHash: contentHash, servedChangedAt: at, checkedAt: at },
  });
}

describe("change reports", () => {
  it("measures a drain: directors serving it, the flows that took a second chance, 0 broken", async () => {
    const { api, pool, hosts, director } = await setup();
    const before = new Date(Date.now() - 70_000);
    await report(
      hosts,
      before,
      () => ({ accepted_second_chance: 100, accepted_last_resort: 7 }),
      () => [],
    );

    const drained = await api.proxies.drain({ proxyId: pool.proxies[0]!.id, reason: "kernel upgrade" });
    const v = drained.tableVersion!;
    const opened = await api.tables.report({ versionId: v.id });
    expect(opened).toMatchObject({ status: "measuring", version: v.version, report: null });
    expect(opened.predicted).not.toBeNull();

    const openedAt = await agoS(v.id, 60);
    await served(director.id, pool.id, v.contentHash, new Date(openedAt.getTime() + 2000));
    // The drained proxy's flows now come to it as hops: two flows, one of them seen twice over.
    const now = new Date();
    const inWindow = new Date(openedAt.getTime() + 10_000);
    await report(
      hosts,
      now,
      (n) =>
        n === "web-proxy-1"
          ? { accepted_second_chance: 160, accepted_last_resort: 7 }
          : { accepted_second_chance: 100, accepted_last_resort: 7 },
      (n) =>
        n === "web-proxy-1"
          ? [
              flow(40001, { secondChance: seen(new Date(openedAt.getTime() + 5000)) }),
              // Still taking its second chance after the window: it counts (its record began in it).
              flow(40002, { secondChance: seen(now) }, VIP, new Date(openedAt.getTime() + 3000)),
              // Began after the window ended (the next change's): not this report's.
              flow(40004, { secondChance: seen(now) }),
              flow(40003, { lastResort: seen(inWindow) }, "198.51.100.1"),
            ]
          : [],
    );
    // This one and the pool's first version's (from its creation, replaced by the drain).
    expect(await anyChangeReportPending(db)).toBe(true);
    expect(await advanceChangeReports(db)).toEqual({ ended: 2, written: 2 });
    // Every report is written: the reporter's timer has nothing to read until the next version.
    expect(await anyChangeReportPending(db)).toBe(false);

    const done = await api.tables.report({ versionId: v.id });
    expect(done.status).toBe("done");
    expect(done.report).toMatchObject({
      verdict: "none_broken",
      broken: 0,
      flows: { secondChance: 2, alternateHash: 0, lastResort: 0 }, // the other VIP's reset is not this pool's
      directors: [{ directorId: director.id, servedAt: new Date(openedAt.getTime() + 2000).toISOString() }],
    });
    expect(done.report!.ended).toContain("served by 1/1 director");
    expect(done.report!.proxies.find((p) => p.hostname === "web-proxy-1")).toMatchObject({
      reported: true,
      packets: { secondChance: 60, alternateHash: 0, lastResort: 0 },
      flows: { secondChance: 2, alternateHash: 0, lastResort: 0 },
    });
    expect(done.report!.listed.secondChance.map((f) => f.clientPort).sort()).toEqual([40001, 40002]);

    // Over REST with a read token, as a runbook reads it.
    const token = (await api.tokens.create({ name: "read", scopes: ["read"] })).token;
    const rest = await restCall(db, "GET", `/tables/${v.id}/report`, { token });
    expect(rest.status).toBe(200);
    expect(rest.body).toMatchObject({ status: "done", report: { verdict: "none_broken" } });
    expect((await restCall(db, "GET", `/tables/tv_doesnotexist00/report`, { token })).status).toBe(404);
  });

  it("counts the connections a deactivate broke, beside its prediction", async () => {
    const { api, pool, hosts, director } = await setup();
    const p3 = pool.proxies[2]!;
    await api.proxies.drain({ proxyId: p3.id });
    const before = new Date(Date.now() - 70_000);
    await report(
      hosts,
      before,
      () => ({ accepted_last_resort: 0 }),
      () => [],
    );
    const off = await api.proxies.deactivate({ proxyId: p3.id, reason: "its host is dead anyway" });
    const v = off.tableVersion!;
    const openedAt = await agoS(v.id, 60);
    await served(director.id, pool.id, v.contentHash, openedAt);
    const now = new Date();
    const inWindow = new Date(openedAt.getTime() + 10_000);
    // Three clients' connections reset on the proxies that now own their rows (many packets each).
    await report(
      hosts,
      now,
      (n) => (n === "web-proxy-3" ? { accepted_last_resort: 0 } : { accepted_last_resort: 5 }),
      (n) =>
        n === "web-proxy-1"
          ? [
              flow(41001, { lastResort: seen(inWindow, 3) }),
              flow(41002, { lastResort: seen(inWindow, 2) }),
              // Reset after the window ended: the next change's, not this one's.
              flow(41004, { lastResort: seen(now, 1) }),
            ]
          : n === "web-proxy-2"
            ? [flow(41003, { lastResort: seen(inWindow, 5) })]
            : [],
    );
    await advanceChangeReports(db);
    const done = await api.tables.report({ versionId: v.id });
    expect(done.report).toMatchObject({ verdict: "broken", broken: 3 });
    expect(done.report!.proxies.find((p) => p.hostname === "web-proxy-1")!.packets!.lastResort).toBe(5);
    // The list names the reset flows, most recent first, with their proxies.
    expect(done.report!.listed.lastResort.map((f) => `${f.hostname}:${f.clientPort}`).sort()).toEqual([
      "web-proxy-1:41001",
      "web-proxy-1:41002",
      "web-proxy-2:41003",
    ]);
  });

  it("ends a window a newer version replaced, and says unknown when a proxy never reported flows", async () => {
    const { api, pool, hosts } = await setup();
    await report(
      hosts,
      new Date(Date.now() - 70_000),
      () => ({}),
      (n) => (n === "web-proxy-2" ? null : []),
    );
    const first = (await api.proxies.drain({ proxyId: pool.proxies[0]!.id })).tableVersion!;
    const second = (await api.proxies.abort({ proxyId: pool.proxies[0]!.id })).tableVersion!;
    await report(
      hosts,
      new Date(),
      () => ({}),
      (n) => (n === "web-proxy-2" ? null : []),
    );
    // The readings catch up at once, but web-proxy-2's agent never reports flows: the report
    // waits for it (CATCH_UP_MS), then says what it does not know.
    await advanceChangeReports(db);
    expect((await api.tables.report({ versionId: first.id })).status).toBe("closing");
    expect(await anyChangeReportPending(db)).toBe(true); // closing: ended, not written
    await advanceChangeReports(db, new Date(Date.now() + 60_000));
    const r = await api.tables.report({ versionId: first.id });
    expect(r.report).toMatchObject({
      ended: `v${second.version} replaced it`,
      verdict: "unknown",
      broken: null,
    });
    expect(r.report!.proxies.find((p) => p.hostname === "web-proxy-2")!.reason).toContain(
      "does not report flows",
    );
    // The newer one still measures (its director has not served it).
    expect((await api.tables.report({ versionId: second.id })).status).toBe("measuring");
    const listed = await api.tables.reports({ versionIds: [first.id, second.id] });
    expect(listed.map((x) => x.version).sort()).toEqual([first.version, second.version].sort());
  });
});
