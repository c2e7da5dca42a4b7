import type { DataPlaneState, Observation, RedirectCounters } from "@tide/contracts";
import { createDb, type Db } from "@tide/db";
import { afterAll, beforeAll, beforeEach, describe, expect, inject, it } from "vitest";
import { sample } from "@tide/diagnostics/fixtures";
import { createHostListener } from "../live/host-live";
import { callerFor, makePool, makeUser, truncateAll } from "../testing/fixtures";
import { redirectCounters } from "../testing/redirect-counters";
import { fleetLive, poolTraffic, recordTraffic } from "./proxy-traffic.service";

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
      await recordTraffic(
        db,
        caller,
        observation(host.name, t0, 120),
        redirect({ accepted_syn: 1000, forwarded_to_alternate: 50, accepted_established: 10 }),
      );
      await recordTraffic(
        db,
        caller,
        observation(host.name, new Date(t0.getTime() + 2000), 100),
        redirect({ accepted_syn: 1090, forwarded_to_alternate: 50, accepted_established: 70 }),
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
      newConnectionsPerS: 45,
      forwardedToAlternatePerS: 0,
      acceptedEstablishedPerS: 30,
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

  it("ignores hosts that report no redirect counters and no connections", async () => {
    const host = await db.host.create({ data: { id: "host_plainhost000", name: "plain", roles: ["host"] } });
    const o = sample(0, { hostId: "plain" });
    await recordTraffic(db, { hostId: host.id, hostname: "plain" }, o, []);
    expect((await db.host.findUniqueOrThrow({ where: { id: host.id } })).traffic).toBeNull();
  });
});
