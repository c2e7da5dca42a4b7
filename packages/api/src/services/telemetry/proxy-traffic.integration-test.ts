import {
  PoolTraffic,
  type DataPlaneState,
  type Observation,
  type RedirectCounters,
  type RedirectVip,
  type RedirectVipCounters,
} from "@tide/contracts";
import { createDb, type Db } from "@tide/db";
import { afterAll, beforeAll, beforeEach, describe, expect, inject, it } from "vitest";
import { sample } from "@tide/diagnostics/fixtures";
import { createHostListener } from "../../live/host-live";
import { systemActorRef } from "../../auth/actor";
import { callerFor, makePool, makeUser, truncateAll } from "../../testing/fixtures";
import { redirectCounters, vipCounters } from "../../testing/redirect-counters";
import { createPool } from "../tables/pool.service";
import { alternateHashActivity, fleetLive, poolTraffic, recordTraffic } from "./proxy-traffic.service";

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

const redirect = (c: Partial<RedirectCounters>): DataPlaneState[] => [
  {
    component: "redirect",
    socket: "/run/tide/redirect.sock",
    reachable: true,
    error: null,
    version: "0.1.0",
    tableHashes: {},
    directorCounters: null,
    redirectCounters: redirectCounters(c),
  },
];

/** A tide-redirect that reports per-VIP counters, read at `readAt`. */
const redirectWithVips = (
  readAt: Date,
  c: Partial<RedirectCounters>,
  vips: [string, number, Partial<RedirectVipCounters>][],
): DataPlaneState[] => [
  {
    ...redirect({ accepted_second_chance: 0, accepted_alternate_hash: 0, ...c })[0]!,
    redirectVips: vips.map(([address, port, v]): RedirectVip => ({
      address,
      port,
      proto: "tcp",
      counters: vipCounters(v),
    })),
    countersReadAt: readAt.toISOString(),
  },
];

/** A sample at `at` whose namespace holds `vip` connections to the pool's VIP and 900 others. */
function observation(hostname: string, at: Date, vip: number): Observation {
  const o = sample(0, { hostId: hostname });
  return {
    ...o,
    sampledAt: at.toISOString(),
    namespaces: o.namespaces.map((ns) => ({
      ...ns,
      established: [
        { address: "203.0.113.10", port: 443, count: vip },
        { address: "10.99.3.1", port: 5432, count: 900 }, // the proxy's own connections to a backend
      ],
    })),
  } as Observation;
}

describe("proxy traffic", () => {
  it("turns a proxy host's batches into rates and VIP connections on its pool, and tells the pool page", async () => {
    const admin = await makeUser(db, "admin");
    const pool = await makePool(db, "www", 3); // binds 203.0.113.10 tcp 443; proxies www-proxy-1..3
    const proxies = (await callerFor(db, admin).pools.get({ poolId: pool.id })).proxies;
    const host = await db.host.create({
      data: { id: "host_wwwproxy1000", name: "www-proxy-1", roles: ["proxy"] },
    });
    await db.finding.create({
      data: {
        id: "fnd_0000000000001",
        fingerprint: "test-1",
        hostId: host.id,
        kind: "accept_queue_overflow",
        incident: 1,
        severity: "critical",
        status: "open",
        title: "accept queue overflow",
        subject: {},
        evidence: {},
        explanation: "",
        remedy: [],
        firstSeenAt: new Date(),
        lastSeenAt: new Date(),
      },
    });
    const listener = createHostListener(inject("databaseUrl"));
    const heard: string[] = [];
    const off = await listener.subscribePool(pool.id, (what) => heard.push(what));
    const caller = { hostId: host.id, hostname: host.name };
    const t0 = new Date(Date.now() - 3000);
    try {
      // Expected every 5 s: a slow test run must not make the second reading late.
      await recordTraffic(
        db,
        caller,
        observation(host.name, t0, 120),
        redirect({ accepted_syn: 1000, forwarded_to_alternate: 50, accepted_established: 10 }),
        5000,
      );
      await recordTraffic(
        db,
        caller,
        observation(host.name, new Date(t0.getTime() + 2000), 100),
        redirect({ accepted_syn: 1090, forwarded_to_alternate: 50, accepted_established: 70 }),
        5000,
      );
      await new Promise((r) => setTimeout(r, 300));
    } finally {
      off();
    }
    expect(heard).toContain("traffic");

    const t = await poolTraffic(db, pool.id);
    const p1 = t.proxies.find((p) => p.proxyId === proxies[0]!.id)!;
    expect(p1).toMatchObject({
      hostname: "www-proxy-1",
      hostId: host.id,
      stale: false,
      late: false,
      // An older tide-redirect (no VIP counters, no accepted_second_chance): the host's totals, and
      // no second chance figure rather than the established packets.
      scope: "host",
      newConnectionsPerS: 45,
      forwardedToAlternatePerS: 0,
      acceptedEstablishedPerS: 30,
      secondChancePerS: null,
      established: 100, // only the VIP's connections, not the backend ones
      establishedFallingPerS: 10,
      findings: { critical: 1, warn: 0, info: 0 },
    });
    // A proxy without an agent: no figures, not zeros.
    expect(t.proxies.find((p) => p.proxyId === proxies[1]!.id)).toMatchObject({
      hostId: null,
      stale: true,
      newConnectionsPerS: null,
      established: null,
    });
    expect(t.totals).toEqual({
      newConnectionsPerS: 45,
      established: 100,
      findings: { critical: 1, warn: 0, info: 0 },
    });
    const fleet = await fleetLive(db);
    expect(fleet.pools).toEqual([{ poolId: pool.id, ...t.totals }]);
    expect(fleet.findings).toEqual({ critical: 1, warn: 0, info: 0 });
  });

  it("gives a proxy in two pools each pool's own figures, and says when its reading is late", async () => {
    const www = await makePool(db, "www", 2); // 203.0.113.10 tcp 443; www-proxy-1, www-proxy-2
    const api = await createPool(db, systemActorRef("test"), {
      name: "api",
      binds: [{ address: "198.51.100.7", proto: "tcp", portStart: 8080 }],
      proxies: [
        { address: "10.99.9.1", hostname: "www-proxy-1" },
        { address: "10.99.9.2", hostname: "api-proxy-2" },
      ],
      directorIds: [],
    });
    const host = await db.host.create({
      data: { id: "host_wwwproxy1000", name: "www-proxy-1", roles: ["proxy"] },
    });
    const caller = { hostId: host.id, hostname: host.name };
    const t0 = new Date(Date.now() - 2000);
    const t1 = new Date(t0.getTime() + 1000);
    await recordTraffic(
      db,
      caller,
      observation(host.name, t0, 10),
      redirectWithVips(t0, {}, [["203.0.113.10", 443, { accepted_established: 5000 }]]),
      1000,
    );
    await recordTraffic(
      db,
      caller,
      observation(host.name, t1, 10),
      redirectWithVips(
        t1,
        { accepted_established: 5700, forwarded_to_alternate: 30, accepted_second_chance: 20 },
        [
          ["203.0.113.10", 443, { accepted_established: 5600, accepted_syn: 3 }],
          [
            "198.51.100.7",
            8080,
            { accepted_established: 100, forwarded_to_alternate: 30, accepted_second_chance: 20 },
          ],
        ],
      ),
      1000,
    );
    // Parsed as the router's output is: the rows must be what the contract says.
    const row = async (poolId: string, now: Date) =>
      PoolTraffic.parse(await poolTraffic(db, poolId, now)).proxies.find(
        (p) => p.hostname === "www-proxy-1",
      )!;
    const at = new Date(t1.getTime() + 500);
    expect(await row(www.id, at)).toMatchObject({
      scope: "pool",
      late: false,
      newConnectionsPerS: 3,
      acceptedEstablishedPerS: 600, // the flows this proxy owns: no second chance at all
      secondChancePerS: 0,
      forwardedToAlternatePerS: 0,
    });
    expect(await row(api.id, at)).toMatchObject({
      scope: "pool",
      late: false,
      newConnectionsPerS: 0,
      acceptedEstablishedPerS: 100,
      acceptedSecondChancePerS: 20,
      secondChancePerS: 50,
    });
    // No reading for 3.5 s (expected every second): late, not zeros, on both pools' pages.
    const silent = new Date(t1.getTime() + 3500);
    // (established is a count, not a rate: still shown, each pool its own VIPs' connections.)
    for (const [poolId, established] of [
      [www.id, 10],
      [api.id, 0],
    ] as const)
      expect(await row(poolId, silent)).toMatchObject({
        late: true,
        lateReason: "no reading for 4 s",
        stale: false,
        newConnectionsPerS: null,
        secondChancePerS: null,
        established,
      });
  });

  it("tells the pool service whether flows still take the alternate hash, and who reports it", async () => {
    const pool = await makePool(db, "www", 3); // www-proxy-1..3, all active
    const proxies = await db.proxy.findMany({ where: { poolId: pool.id }, orderBy: { slot: "asc" } });
    await db.proxy.update({ where: { id: proxies[2]!.id }, data: { state: "inactive" } });
    const hosts = await Promise.all(
      ["www-proxy-1", "www-proxy-2"].map((name, i) =>
        db.host.create({ data: { id: `host_wwwproxy${i}000`, name, roles: ["proxy"] } }),
      ),
    );
    const now = Date.now();
    const feed = async (h: (typeof hosts)[number], seconds: number[], alt: (s: number) => number) => {
      for (const s of seconds) {
        const t = new Date(now - (40 - s) * 1000);
        await recordTraffic(
          db,
          { hostId: h.id, hostname: h.name },
          observation(h.name, t, 1),
          redirectWithVips(t, {}, [["203.0.113.10", 443, { accepted_alternate_hash: alt(s) }]]),
          1000,
        );
      }
    };
    const seconds = Array.from({ length: 41 }, (_, s) => s); // 40 s ago .. now
    // Only www-proxy-1 reports so far: proxy 2 has no host data; proxy 3 is inactive (holds no flow).
    await feed(hosts[0]!, seconds, (s) => (s < 20 ? s * 4 : 80)); // 4/s, then nothing for 20 s
    expect(await alternateHashActivity(db, pool.id, 30_000, new Date(now))).toEqual({
      acceptedAlternateHashPerS: expect.closeTo((80 - 40) / 30, 1),
      reportingProxies: 1,
      proxies: 2,
    });
    expect(await alternateHashActivity(db, pool.id, 15_000, new Date(now))).toEqual({
      acceptedAlternateHashPerS: 0,
      reportingProxies: 1,
      proxies: 2,
    });
    await feed(hosts[1]!, seconds, () => 7);
    expect(await alternateHashActivity(db, pool.id, 15_000, new Date(now))).toEqual({
      acceptedAlternateHashPerS: 0,
      reportingProxies: 2,
      proxies: 2,
    });
    // Nobody reported over a window that starts before the readings: null, not 0.
    expect(await alternateHashActivity(db, pool.id, 60_000, new Date(now))).toEqual({
      acceptedAlternateHashPerS: null,
      reportingProxies: 0,
      proxies: 2,
    });
    await expect(alternateHashActivity(db, "pool_nope", 15_000)).rejects.toThrow(/does not exist/);
  });

  it("ignores hosts that report no redirect counters and no connections", async () => {
    const host = await db.host.create({ data: { id: "host_plainhost000", name: "plain", roles: ["host"] } });
    const o = sample(0, { hostId: "plain" });
    await recordTraffic(db, { hostId: host.id, hostname: "plain" }, o, []);
    expect((await db.host.findUniqueOrThrow({ where: { id: host.id } })).traffic).toBeNull();
  });
});
