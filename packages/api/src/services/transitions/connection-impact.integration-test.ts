import type { Observation } from "@tide/contracts";
import { createDb, type Db } from "@tide/db";
import { sample } from "@tide/diagnostics/fixtures";
import { TRPCError } from "@trpc/server";
import { afterAll, beforeAll, beforeEach, describe, expect, inject, it } from "vitest";
import { callerFor, makePool, makeUser, restCall, truncateAll } from "../../testing/fixtures";
import { recordTraffic } from "../telemetry/proxy-traffic.service";

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

/** A sample at `at` with `vip` connections to the pool's VIP (203.0.113.10:443) and 900 others. */
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

/** Store a proxy host's reading of `vip` established connections now, as ingest does. */
async function report(hostname: string, vip: number): Promise<void> {
  const host =
    (await db.host.findUnique({ where: { name: hostname }, select: { id: true, name: true } })) ??
    (await db.host.create({
      data: { id: `host_${hostname.replace(/\W/g, "").padEnd(12, "0")}`, name: hostname, roles: ["proxy"] },
      select: { id: true, name: true },
    }));
  // Expected every 5 s: a slow test run must not make the reading late.
  await recordTraffic(
    db,
    { hostId: host.id, hostname: host.name },
    observation(hostname, new Date(), vip),
    [],
    5000,
  );
}

function tideCode(e: unknown): string | undefined {
  if (!(e instanceof TRPCError)) return undefined;
  return (e.cause as { code?: string } | undefined)?.code ?? e.code;
}

describe("connection impact in a transition preview", () => {
  it("drain sends the proxy's connections by second chance; deactivate with some left breaks them", async () => {
    const operator = await makeUser(db, "operator");
    const api = callerFor(db, operator);
    const pool = await makePool(db, "www", 3, { served: true }); // www-proxy-1..3 on 203.0.113.10:443
    const [, , p3] = (await api.pools.get({ poolId: pool.id })).proxies;
    await report("www-proxy-1", 120);
    await report("www-proxy-2", 80);
    await report("www-proxy-3", 37);

    const drain = await api.proxies.preview({ proxyId: p3!.id, action: "drain" });
    expect(drain.impact).toMatchObject({
      kept: { count: 200, exact: true },
      viaSecondChance: { count: 37, exact: true },
      broken: { count: 0, exact: true },
      unknown: [],
    });
    await api.proxies.drain({ proxyId: p3!.id, reason: "kernel upgrade" });

    // Deactivate with 37 left: exactly those break, and the API wants a reason for it.
    const deactivate = await api.proxies.preview({ proxyId: p3!.id, action: "deactivate" });
    expect(deactivate.impact?.broken).toEqual({ count: 37, exact: true });
    expect(deactivate.impact?.proxies.find((p) => p.proxyId === p3!.id)).toMatchObject({
      hostname: "www-proxy-3",
      established: 37,
      broken: 37,
    });
    const refused = await api.proxies.deactivate({ proxyId: p3!.id }).catch((e: unknown) => e);
    expect(tideCode(refused)).toBe("unprocessable");
    expect((refused as Error).message).toMatch(/break 37 established connections \(37 on www-proxy-3\)/);

    const admin = callerFor(db, await makeUser(db, "admin"));
    const token = (await admin.tokens.create({ name: "ops", scopes: ["read", "operate"] })).token;
    const rest = await restCall(db, "POST", `/proxies/${p3!.id}/deactivate`, { token, body: {} });
    expect(rest.status).toBe(422);
    expect(rest.body).toMatchObject({ data: { tideCode: "unprocessable", details: { broken: 37 } } });
    const blank = await restCall(db, "POST", `/proxies/${p3!.id}/deactivate`, {
      token,
      body: { reason: "  " },
    });
    expect(blank.status).toBe(422);
    expect((await db.proxy.findUnique({ where: { id: p3!.id } }))?.state).toBe("draining");

    const done = await restCall(db, "POST", `/proxies/${p3!.id}/deactivate`, {
      token,
      body: { reason: "host is being replaced" },
    });
    expect(done.status, JSON.stringify(done.body)).toBe(200);
    const audit = await db.auditEvent.findFirst({
      where: { targetId: p3!.id, action: "proxy.deactivate" },
      select: { reason: true },
    });
    expect(audit?.reason).toBe("host is being replaced");
  });

  it("a drained proxy deactivates without a reason; an unknown count is named, not 0", async () => {
    const operator = await makeUser(db, "operator");
    const api = callerFor(db, operator);
    const pool = await makePool(db, "www", 3, { served: true });
    const [, , p3] = (await api.pools.get({ poolId: pool.id })).proxies;
    await api.proxies.drain({ proxyId: p3!.id, reason: "kernel upgrade" });
    // No host reports for www-proxy-3: unknown, and the API does not claim a break it cannot see.
    const unknown = await api.proxies.preview({ proxyId: p3!.id, action: "deactivate" });
    expect(unknown.impact?.broken).toEqual({ count: null, exact: false });
    expect(unknown.impact?.unknown).toContainEqual({
      proxyId: p3!.id,
      hostname: "www-proxy-3",
      reason: "no agent reports for its host",
    });
    await report("www-proxy-3", 0);
    const drained = await api.proxies.preview({ proxyId: p3!.id, action: "deactivate" });
    expect(drained.impact?.broken).toEqual({ count: 0, exact: true });
    await expect(api.proxies.deactivate({ proxyId: p3!.id })).resolves.toMatchObject({
      proxy: { state: "inactive" },
    });
  });
});
