import { newId, type Observation } from "@tide/contracts";
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

const VIP = "203.0.113.10"; // makePool's bind: tcp 203.0.113.10:443

/** A proxy host's reading now, as ingest stores it: ESTABLISHED sockets per local address:port. */
async function report(hostname: string, established: { port: number; count: number }[]): Promise<void> {
  const host =
    (await db.host.findUnique({ where: { name: hostname }, select: { id: true, name: true } })) ??
    (await db.host.create({
      data: { id: `host_${hostname.replace(/\W/g, "").padEnd(12, "0")}`, name: hostname, roles: ["proxy"] },
      select: { id: true, name: true },
    }));
  const o = sample(0, { hostId: hostname });
  const observation = {
    ...o,
    sampledAt: new Date().toISOString(),
    namespaces: o.namespaces.map((ns) => ({
      ...ns,
      established: [
        ...established.map((e) => ({ address: VIP, port: e.port, count: e.count })),
        { address: "10.99.3.1", port: 5432, count: 900 }, // the proxy's own connections to a backend
      ],
    })),
  } as Observation;
  // Expected every 5 s: a slow test run must not make the reading late.
  await recordTraffic(db, { hostId: host.id, hostname: host.name }, observation, [], 5000);
}

function tideCode(e: unknown): string | undefined {
  if (!(e instanceof TRPCError)) return undefined;
  return (e.cause as { code?: string } | undefined)?.code ?? e.code;
}

const bind = (portStart: number) => ({ address: VIP, proto: "tcp" as const, portStart });

async function adminToken(): Promise<string> {
  const admin = callerFor(db, await makeUser(db, "admin"));
  return (await admin.tokens.create({ name: "ops", scopes: ["read", "operate", "admin"] })).token;
}

async function auditOf(action: string) {
  return db.auditEvent.findMany({
    where: { action },
    select: { reason: true, after: true },
    orderBy: { createdAt: "asc" },
  });
}

describe("bind changes", () => {
  it("removing a bind with connections: 422 without a reason, applied with one (audit keeps it)", async () => {
    const api = callerFor(db, await makeUser(db, "admin"));
    const pool = await makePool(db, "lab", 2, { served: true });
    // Adding a bind breaks nothing: no reason needed, whatever the proxies hold.
    await report("lab-proxy-1", [{ port: 443, count: 30 }]);
    await api.pools.setBinds({ poolId: pool.id, binds: [bind(443), bind(8081)] });
    await report("lab-proxy-1", [
      { port: 443, count: 30 },
      { port: 8081, count: 7 },
    ]);
    await report("lab-proxy-2", [{ port: 8081, count: 5 }]);

    const preview = await api.pools.previewBinds({ poolId: pool.id, binds: `tcp/${VIP}:443` });
    expect(preview).toMatchObject({
      breaks: true,
      broken: 12,
      served: true,
      uncovered: [`tcp/${VIP}:8081`],
      proxies: [
        { hostname: "lab-proxy-1", broken: 7 },
        { hostname: "lab-proxy-2", broken: 5 },
      ],
      endpoints: [{ address: VIP, port: 8081, count: 12 }],
      unknown: [],
    });

    const refused = await api.pools
      .setBinds({ poolId: pool.id, binds: [bind(443)] })
      .catch((e: unknown) => e);
    expect(tideCode(refused)).toBe("unprocessable");
    expect((refused as Error).message).toContain(
      `would break 12 established connections (7 on lab-proxy-1, 5 on lab-proxy-2) to ${VIP}:8081`,
    );
    expect((refused as Error).message).toContain("Give a reason to apply it anyway");

    const token = await adminToken();
    const blank = await restCall(db, "PUT", `/pools/${pool.id}/binds`, {
      token,
      body: { binds: [bind(443)], reason: "  " },
    });
    expect(blank.status).toBe(422);
    expect(blank.body).toMatchObject({ data: { tideCode: "unprocessable", details: { broken: 12 } } });
    expect((await db.bind.count({ where: { poolId: pool.id } })).valueOf()).toBe(2);

    const done = await restCall(db, "PUT", `/pools/${pool.id}/binds`, {
      token,
      body: { binds: [bind(443)], reason: "8081 retired" },
    });
    expect(done.status, JSON.stringify(done.body)).toBe(200);
    expect(await db.bind.count({ where: { poolId: pool.id } })).toBe(1);
    const audit = await auditOf("pool.binds");
    expect(audit.at(-1)).toMatchObject({ reason: "8081 retired", after: { brokenPredicted: 12 } });
  });

  it("narrowing a range breaks the connections to the ports left out, and only those", async () => {
    const api = callerFor(db, await makeUser(db, "admin"));
    const pool = await makePool(db, "lab", 1, { served: true });
    await api.pools.setBinds({ poolId: pool.id, binds: [{ ...bind(8080), portEnd: 8089 }] });
    await report("lab-proxy-1", [
      { port: 8080, count: 40 },
      { port: 8088, count: 3 },
    ]);
    const p = await api.pools.previewBinds({ poolId: pool.id, binds: `tcp/${VIP}:8080-8085` });
    expect(p).toMatchObject({ breaks: true, broken: 3, endpoints: [{ port: 8088, count: 3 }] });
    // Keeping every port: nothing breaks, so no reason is asked.
    await expect(
      api.pools.setBinds({ poolId: pool.id, binds: [{ ...bind(8080), portEnd: 8099 }] }),
    ).resolves.toMatchObject({ pool: { binds: [{ portStart: 8080, portEnd: 8099 }] } });
  });

  it("unknown figures do not refuse: a proxy with no report is named, not counted", async () => {
    const api = callerFor(db, await makeUser(db, "admin"));
    const pool = await makePool(db, "lab", 2, { served: true });
    await api.pools.setBinds({ poolId: pool.id, binds: [bind(443), bind(8081)] });
    const p = await api.pools.previewBinds({ poolId: pool.id, binds: `tcp/${VIP}:443` });
    expect(p).toMatchObject({ breaks: null, broken: 0 });
    expect(p.unknown.map((u) => [u.hostname, u.reason])).toEqual([
      ["lab-proxy-1", "no agent reports for its host"],
      ["lab-proxy-2", "no agent reports for its host"],
    ]);
    await expect(api.pools.setBinds({ poolId: pool.id, binds: [bind(443)] })).resolves.toBeTruthy();
  });

  it("a pool no director serves breaks nothing", async () => {
    const api = callerFor(db, await makeUser(db, "admin"));
    const pool = await makePool(db, "lab", 1);
    await api.pools.setBinds({ poolId: pool.id, binds: [bind(443), bind(8081)] });
    await report("lab-proxy-1", [{ port: 8081, count: 9 }]);
    const p = await api.pools.previewBinds({ poolId: pool.id, binds: `tcp/${VIP}:443` });
    expect(p).toMatchObject({ breaks: false, served: false, uncovered: [`tcp/${VIP}:8081`] });
    await expect(api.pools.setBinds({ poolId: pool.id, binds: [bind(443)] })).resolves.toBeTruthy();
  });

  it("the REST preview reads comma-separated labels and names a malformed one", async () => {
    const pool = await makePool(db, "lab", 1, { served: true });
    const token = await adminToken();
    const q = encodeURIComponent(`tcp/${VIP}:443,udp/2001:db8::10:53`);
    const ok = await restCall(db, "GET", `/pools/${pool.id}/binds/preview?binds=${q}`, { token });
    expect(ok.status, JSON.stringify(ok.body)).toBe(200);
    expect(ok.body).toMatchObject({ poolId: pool.id, breaks: false, uncovered: [] });
    const bad = await restCall(db, "GET", `/pools/${pool.id}/binds/preview?binds=tcp/${VIP}:443,tcp/nope:1`, {
      token,
    });
    expect(bad.status).toBe(400);
    expect(bad.body).toMatchObject({
      data: { details: { fields: { "binds[1].address": expect.any(String) } } },
    });
  });
});

describe("directors unassigned and removed", () => {
  it("the last director: 422 without a reason, saying to assign another first; fine with one", async () => {
    const pool = await makePool(db, "lab", 2, { served: true });
    const [director] = await db.director.findMany({ select: { id: true } });
    await report("lab-proxy-1", [{ port: 443, count: 7 }]);
    await report("lab-proxy-2", [{ port: 443, count: 5 }]);

    const token = await adminToken();
    const preview = await restCall(
      db,
      "GET",
      `/directors/${director!.id}/pools/${pool.id}/unassign/preview`,
      {
        token,
      },
    );
    expect(preview.status, JSON.stringify(preview.body)).toBe(200);
    expect(preview.body).toMatchObject({ breaks: true, broken: 12, last: true, stillServedBy: [] });

    const refused = await restCall(db, "DELETE", `/directors/${director!.id}/pools/${pool.id}`, { token });
    expect(refused.status).toBe(422);
    const message = (refused.body as { message: string }).message;
    expect(message).toContain(
      `Unassigning lab-director would break 12 established connections (7 on lab-proxy-1, 5 on lab-proxy-2) to ${VIP}:443`,
    );
    expect(message).toContain("Assign another director to lab first");
    expect(await db.director.count({ where: { pools: { some: { id: pool.id } } } })).toBe(1);

    const done = await restCall(
      db,
      "DELETE",
      `/directors/${director!.id}/pools/${pool.id}?reason=${encodeURIComponent("site closes")}`,
      { token },
    );
    expect(done.status, JSON.stringify(done.body)).toBe(200);
    expect(await auditOf("director.unassign_pool")).toMatchObject([
      { reason: "site closes", after: { last: true, brokenPredicted: 12 } },
    ]);
  });

  it("with another director serving the pool, unassign needs no reason", async () => {
    const api = callerFor(db, await makeUser(db, "admin"));
    const pool = await makePool(db, "lab", 2, { served: true });
    const [first] = await db.director.findMany({ select: { id: true } });
    const second = await api.directors.register({ hostname: "lab-director-2" });
    await api.directors.assignPool({ directorId: second.id, poolId: pool.id });
    await report("lab-proxy-1", [{ port: 443, count: 7 }]);

    const p = await api.directors.previewUnassign({ directorId: first!.id, poolId: pool.id });
    expect(p).toMatchObject({
      breaks: false,
      last: false,
      stillServedBy: [{ id: second.id, hostname: "lab-director-2" }],
    });
    expect(p.message).toContain("Nothing breaks: lab-director-2 still serves lab");
    await expect(
      api.directors.unassignPool({ directorId: first!.id, poolId: pool.id }),
    ).resolves.toMatchObject({
      pools: [],
    });
    // Now lab-director-2 is the last: refused without a reason.
    const refused = await api.directors
      .unassignPool({ directorId: second.id, poolId: pool.id })
      .catch((e: unknown) => e);
    expect(tideCode(refused)).toBe("unprocessable");
  });

  it("removing the last director is refused without a reason; an unknown count is not", async () => {
    const api = callerFor(db, await makeUser(db, "admin"));
    const lab = await makePool(db, "lab", 1, { served: true });
    await makePool(db, "web", 1, { served: true });
    const labDirector = await db.director.findFirstOrThrow({ where: { hostname: "lab-director" } });
    const webDirector = await db.director.findFirstOrThrow({ where: { hostname: "web-director" } });
    await report("lab-proxy-1", [{ port: 443, count: 4 }]);

    const preview = await api.directors.previewRemove({ directorId: labDirector.id });
    expect(preview).toMatchObject({ breaks: true, broken: 4, pools: [{ poolId: lab.id, last: true }] });
    const refused = await api.directors.remove({ directorId: labDirector.id }).catch((e: unknown) => e);
    expect(tideCode(refused)).toBe("unprocessable");
    expect((refused as Error).message).toContain(
      "Removing lab-director would break 4 established connections",
    );
    await api.directors.remove({ directorId: labDirector.id, reason: "decommissioned" });
    expect(await auditOf("director.remove")).toMatchObject([
      { reason: "decommissioned", after: { lastOf: ["lab"], brokenPredicted: 4 } },
    ]);

    // web-proxy-1 never reported: unknown, so not refused.
    expect((await api.directors.previewRemove({ directorId: webDirector.id })).breaks).toBeNull();
    await expect(api.directors.remove({ directorId: webDirector.id })).resolves.toBeTruthy();
  });

  it("a director that does not serve the pool: 404, as before", async () => {
    const api = callerFor(db, await makeUser(db, "admin"));
    const pool = await makePool(db, "lab", 1);
    const d = await api.directors.register({ hostname: `d-${newId("pool").slice(5, 11)}` });
    const e = await api.directors
      .unassignPool({ directorId: d.id, poolId: pool.id })
      .catch((x: unknown) => x);
    expect(tideCode(e)).toBe("not_found");
    const p = await api.directors
      .previewUnassign({ directorId: d.id, poolId: pool.id })
      .catch((x: unknown) => x);
    expect(tideCode(p)).toBe("not_found");
  });
});
