import { isTideError, type TideError } from "@tide/contracts";
import { createDb, type Db } from "@tide/db";
import { decodeGlbd, FLOW_SAMPLE_SIZE } from "@tide/forwarding";
import { TRPCError } from "@trpc/server";
import { afterAll, beforeAll, beforeEach, describe, expect, inject, it } from "vitest";
import { callerFor, makePool, makeUser, restCall, truncateAll } from "../testing/fixtures";

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

/** The TideError behind a caller's error (services throw them; the middleware wraps them). */
function tideError(e: unknown): TideError {
  const cause = e instanceof TRPCError ? e.cause : e;
  if (!isTideError(cause)) throw new Error(`expected a TideError, got ${String(e)}`);
  return cause;
}

async function fleetSnapshot() {
  const [pools, binds, proxies, versions, directors, links, audit] = await Promise.all([
    db.pool.findMany({
      select: { id: true, name: true, description: true, hashFields: true },
      orderBy: { id: "asc" },
    }),
    db.bind.findMany({
      select: { poolId: true, address: true, portStart: true, portEnd: true },
      orderBy: { id: "asc" },
    }),
    db.proxy.findMany({ select: { id: true, state: true }, orderBy: { id: "asc" } }),
    db.tableVersion.count(),
    db.director.findMany({ select: { id: true, hostname: true }, orderBy: { id: "asc" } }),
    db.$queryRaw<{ n: number }[]>`SELECT count(*)::int AS n FROM "_DirectorToPool"`,
    db.auditEvent.count({ where: { outcome: "done" } }), // a refused attempt is recorded, as refused
  ]);
  return { pools, binds, proxies, versions, directors, links, audit };
}

const web = { address: "203.0.113.10", proto: "tcp" as const, portStart: 443 };

describe("pools over the API", () => {
  it("brings up a pool created empty: proxies join active until a director serves it, then inactive", async () => {
    const admin = await makeUser(db, "admin");
    const api = callerFor(db, admin);
    const pool = await api.pools.create({ name: "web", description: "front end", binds: [web] });
    expect(pool.currentVersion).toBeNull();
    expect(pool.hashFields).toEqual(["src_addr"]);
    expect(await db.tableVersion.count({ where: { poolId: pool.id } })).toBe(0);

    const added = [];
    for (const i of [1, 2, 3]) {
      added.push(
        await api.proxies.create({ poolId: pool.id, address: `10.60.0.${i}`, hostname: `web-${i}` }),
      );
    }
    expect(added.map((p) => p.state)).toEqual(["active", "active", "active"]);
    expect(added.map((p) => p.tableVersion?.version)).toEqual([1, 2, 3]);
    const v3 = await db.tableVersion.findUniqueOrThrow({ where: { id: added[2]!.tableVersion!.id } });
    const [table] = decodeGlbd(v3.content);
    expect(new Set(table!.primary).size).toBe(3); // every proxy takes rows

    const director = await api.directors.register({ hostname: "director-01.test" });
    await api.directors.assignPool({ directorId: director.id, poolId: pool.id });
    const fourth = await api.proxies.create({ poolId: pool.id, address: "10.60.0.4", hostname: "web-4" });
    expect(fourth.state).toBe("inactive");
    await api.proxies.fill({ proxyId: fourth.id });
    const activated = await api.proxies.activate({ proxyId: fourth.id });
    expect(activated.tableVersion!.version).toBe(5);
    const actions = (await api.audit.list({ poolId: pool.id, limit: 50 })).items.map((a) => a.action);
    expect(actions).toEqual(
      expect.arrayContaining([
        "pool.create",
        "proxy.create",
        "director.assign_pool",
        "proxy.fill",
        "proxy.activate",
      ]),
    );
    const created = (await api.audit.list({ poolId: pool.id, limit: 50 })).items.find(
      (a) => a.action === "pool.create",
    )!;
    expect(created.after).toMatchObject({ name: "web", binds: ["tcp/203.0.113.10:443"] });
  });

  it("refuses bad input with field-level errors and changes nothing", async () => {
    const admin = await makeUser(db, "admin");
    const api = callerFor(db, admin);
    await api.pools.create({ name: "web", binds: [web] });
    const before = await fleetSnapshot();
    const cases: [() => Promise<unknown>, string, string][] = [
      [
        () =>
          api.pools.create({
            name: "api",
            binds: [web, { address: "203.0.113.300", proto: "tcp", portStart: 80 }],
          }),
        "bad_request",
        "binds[1].address",
      ],
      [
        () =>
          api.pools.create({
            name: "api",
            binds: [{ address: "203.0.113.0/33", proto: "tcp", portStart: 80 }],
          }),
        "bad_request",
        "binds[0].address",
      ],
      [
        () => api.pools.create({ name: "api", binds: [{ ...web, portStart: 500, portEnd: 400 }] }),
        "bad_request",
        "binds[0].portEnd",
      ],
      [
        () => api.pools.create({ name: "api", binds: [{ ...web, address: "203.0.113.0/24" }, web] }),
        "conflict",
        "binds[1]",
      ],
      [() => api.pools.create({ name: "web", binds: [{ ...web, portStart: 80 }] }), "conflict", "name"],
    ];
    for (const [call, code, field] of cases) {
      const e = tideError(await call().catch((x: unknown) => x));
      expect(e.code, field).toBe(code);
      expect(Object.keys((e.details?.fields ?? {}) as object), field).toEqual([field]);
    }
    expect(await fleetSnapshot()).toEqual(before);
  });

  it("replaces binds with a new version that moves no row, and hash fields with one that moves flows", async () => {
    const admin = await makeUser(db, "admin");
    const api = callerFor(db, admin);
    const pool = await makePool(db, "web", 4);
    const changed = await api.pools.setBinds({
      poolId: pool.id,
      binds: [web, { address: "2001:DB8::10", proto: "udp", portStart: 5000, portEnd: 5010 }],
      reason: "add QUIC",
    });
    expect(changed.tableVersion).toMatchObject({ version: 2, reason: "add QUIC", cause: "binds" });
    expect(changed.pool.binds.map((b) => `${b.proto}/${b.address}:${b.portStart}-${b.portEnd}`)).toEqual([
      "tcp/203.0.113.10:443-443",
      "udp/2001:db8::10:5000-5010",
    ]);
    const [v1, v2] = await Promise.all(
      [pool.currentVersion!.id, changed.tableVersion!.id].map(async (id) => {
        const row = await db.tableVersion.findUniqueOrThrow({ where: { id } });
        return decodeGlbd(row.content)[0]!;
      }),
    );
    expect(v2!.binds).toHaveLength(2);
    expect(Buffer.from(v2!.primary.buffer).equals(Buffer.from(v1!.primary.buffer))).toBe(true);

    const same = await api.pools.previewHashFields({ poolId: pool.id, hashFields: "src_addr" });
    expect(same).toMatchObject({ flowsMoved: 0, fractionMoved: 0, from: ["src_addr"], to: ["src_addr"] });
    const preview = await api.pools.previewHashFields({ poolId: pool.id, hashFields: "src_port,src_addr" });
    expect(preview.to).toEqual(["src_addr", "src_port"]);
    expect(preview.tableVersionId).toBe(changed.tableVersion!.id);
    // 4 equal proxies: a flow keeps its proxy with probability ~1/4.
    expect(preview.fractionMoved).toBeGreaterThan(0.65);
    expect(preview.fractionMoved).toBeLessThan(0.85);
    expect(await api.pools.previewHashFields({ poolId: pool.id, hashFields: "src_port,src_addr" })).toEqual(
      preview,
    );

    const hashed = await api.pools.setHashFields({ poolId: pool.id, hashFields: ["src_port", "src_addr"] });
    expect(hashed.pool.hashFields).toEqual(["src_addr", "src_port"]);
    expect(hashed.tableVersion!.version).toBe(3);
    const again = tideError(
      await api.pools
        .setHashFields({ poolId: pool.id, hashFields: ["src_addr", "src_port"] })
        .catch((e: unknown) => e),
    );
    expect(again.code).toBe("conflict");
    expect(await db.tableVersion.count({ where: { poolId: pool.id } })).toBe(3);
    const audit = (await api.audit.list({ poolId: pool.id, outcome: "done", limit: 10 })).items;
    expect(audit.find((a) => a.action === "pool.hash_fields")).toMatchObject({
      before: { hashFields: ["src_addr"] },
      after: { hashFields: ["src_addr", "src_port"], tableVersion: 3 },
    });
  });

  it("renames a pool without a version, and removes only a pool nothing serves", async () => {
    const admin = await makeUser(db, "admin");
    const api = callerFor(db, admin);
    const pool = await makePool(db, "web", 2);
    const renamed = await api.pools.update({ poolId: pool.id, name: "www", description: "renamed" });
    expect(renamed).toMatchObject({ name: "www", description: "renamed" });
    expect(await db.tableVersion.count({ where: { poolId: pool.id } })).toBe(1);

    const director = await api.directors.register({ hostname: "director-01.test" });
    await api.directors.assignPool({ directorId: director.id, poolId: pool.id });
    const before = await fleetSnapshot();
    const blocked = tideError(await api.pools.remove({ poolId: pool.id }).catch((e: unknown) => e));
    expect(blocked.code).toBe("conflict");
    expect(blocked.message).toContain("director-01.test");
    // The true next step, not "drain and deactivate" (which a served pool of 2 can never do).
    expect(blocked.message).toContain("tidectl director unassign director-01.test www");
    expect(blocked.message).not.toContain("deactivate");
    expect(blocked.details).toMatchObject({ directorIds: [director.id] });
    expect(await fleetSnapshot()).toEqual(before);

    // No director serves it: its two active proxies no longer hold it back, and go with it.
    await api.directors.unassignPool({ directorId: director.id, poolId: pool.id });
    const gone = await api.pools.remove({ poolId: pool.id, reason: "retired" });
    expect(gone.removed).toEqual({ id: pool.id, name: "www" });
    expect(await db.proxy.count({ where: { poolId: pool.id } })).toBe(0);
    const goneAudit = await api.audit.list({ targetId: pool.id, outcome: "done", limit: 10 });
    expect(goneAudit.items[0]).toMatchObject({ action: "pool.remove", reason: "retired" });

    const empty = await api.pools.create({ name: "spare", binds: [{ ...web, portStart: 8443 }] });
    const removed = await api.pools.remove({ poolId: empty.id, reason: "unused" });
    expect(removed.removed).toEqual({ id: empty.id, name: "spare" });
    expect(await db.pool.count({ where: { id: empty.id } })).toBe(0);
    const audit = await api.audit.list({ targetId: empty.id, outcome: "done", limit: 10 });
    expect(audit.items[0]).toMatchObject({ action: "pool.remove", reason: "unused" });
  });
});

describe("directors over the API", () => {
  it("registers once (409 with the existing id), assigns idempotently, refuses overlapping binds", async () => {
    const admin = await makeUser(db, "admin");
    const api = callerFor(db, admin);
    const d = await api.directors.register({ hostname: "Director-01.test" });
    expect(d).toMatchObject({ hostname: "director-01.test", poolIds: [] });
    const dup = tideError(
      await api.directors.register({ hostname: "director-01.test" }).catch((e: unknown) => e),
    );
    expect(dup.code).toBe("conflict");
    expect(dup.details).toMatchObject({ directorId: d.id });

    const www = await makePool(db, "www", 2);
    const api2 = await api.pools.create({
      name: "api",
      binds: [{ address: "203.0.113.0/24", proto: "tcp", portStart: 400, portEnd: 500 }],
    });
    const dns = await api.pools.create({
      name: "dns",
      binds: [{ address: "203.0.113.10", proto: "udp", portStart: 53 }],
    });
    const first = await api.directors.assignPool({ directorId: d.id, poolId: www.id });
    expect(first.poolIds).toEqual([www.id]);
    expect(await api.directors.assignPool({ directorId: d.id, poolId: www.id })).toEqual(first);
    await api.directors.assignPool({ directorId: d.id, poolId: dns.id });

    const before = await fleetSnapshot();
    const overlap = tideError(
      await api.directors.assignPool({ directorId: d.id, poolId: api2.id }).catch((e: unknown) => e),
    );
    expect(overlap.code).toBe("conflict");
    expect(overlap.message).toContain('"api"');
    expect(overlap.message).toContain('"www"');
    expect(overlap.message).toContain("tcp/203.0.113.0/24:400-500");
    expect(overlap.message).toContain("tcp/203.0.113.10:443");
    // PUT binds is checked against every director serving the pool.
    const widened = tideError(
      await api.pools
        .setBinds({
          poolId: www.id,
          binds: [{ address: "203.0.113.10", proto: "udp", portStart: 1, portEnd: 100 }],
        })
        .catch((e: unknown) => e),
    );
    expect(widened.code).toBe("conflict");
    expect(widened.message).toMatch(/"www".*"dns"/);
    expect(await fleetSnapshot()).toEqual(before);

    // Another director may serve the overlapping pool.
    const d2 = await api.directors.register({ hostname: "director-02.test" });
    await api.directors.assignPool({ directorId: d2.id, poolId: api2.id });
    expect((await api.directors.get({ directorId: d2.id })).pools).toEqual([{ id: api2.id, name: "api" }]);

    const unassigned = await api.directors.unassignPool({ directorId: d.id, poolId: dns.id });
    expect(unassigned.poolIds).toEqual([www.id]);
    const notServed = tideError(
      await api.directors.unassignPool({ directorId: d.id, poolId: dns.id }).catch((e: unknown) => e),
    );
    expect(notServed.code).toBe("not_found");
    const removed = await api.directors.remove({ directorId: d.id });
    expect(removed.removed.pools.map((p) => p.name)).toEqual(["www"]);
    expect((await api.pools.get({ poolId: www.id })).directorIds).toEqual([]);
    const actions = (await api.audit.list({ targetId: d.id, outcome: "done", limit: 20 })).items.map(
      (a) => a.action,
    );
    expect(actions).toEqual([
      "director.remove",
      "director.unassign_pool",
      "director.assign_pool",
      "director.assign_pool",
      "director.register",
    ]);
  });

  it("lets only admins change the fleet", async () => {
    const operator = await makeUser(db, "operator");
    const pool = await makePool(db, "web", 2);
    const api = callerFor(db, operator);
    const before = await fleetSnapshot();
    for (const call of [
      () => api.pools.create({ name: "x", binds: [web] }),
      () => api.pools.update({ poolId: pool.id, name: "y" }),
      () => api.pools.setBinds({ poolId: pool.id, binds: [web] }),
      () => api.pools.setHashFields({ poolId: pool.id, hashFields: ["src_port"] }),
      () => api.pools.remove({ poolId: pool.id }),
      () => api.directors.register({ hostname: "d.test" }),
    ]) {
      const err = await call().catch((e: unknown) => e);
      expect((err as TRPCError).code).toBe("FORBIDDEN");
    }
    expect((await api.pools.previewHashFields({ poolId: pool.id, hashFields: "src_port" })).sampleFlows).toBe(
      FLOW_SAMPLE_SIZE,
    );
    expect(await fleetSnapshot()).toEqual(before);
  });
});

describe("fleet REST endpoints", () => {
  it("creates a pool, sets binds, previews and removes it over /api/v1 with field-level errors", async () => {
    const admin = await makeUser(db, "admin");
    const token = (
      await callerFor(db, admin).tokens.create({ name: "fleet", scopes: ["read", "operate", "admin"] })
    ).token;
    const rest = (method: string, path: string, body?: unknown) =>
      restCall(db, method, path, { token, body });

    const bad = await rest("POST", "/pools", { name: "Web!", binds: [{ ...web, portStart: 70000 }] });
    expect(bad.status).toBe(400);
    const fields = (bad.body as { data: { details: { fields: Record<string, string> } } }).data.details
      .fields;
    expect(Object.keys(fields).sort()).toEqual(["binds[0].portStart", "name"]);
    expect(await db.pool.count()).toBe(0);

    const created = await rest("POST", "/pools", {
      name: "web",
      hashFields: ["src_addr", "src_port"],
      binds: [web],
    });
    expect(created.status).toBe(200);
    const poolId = (created.body as { id: string }).id;
    expect(created.body).toMatchObject({
      name: "web",
      hashFields: ["src_addr", "src_port"],
      currentVersion: null,
    });

    const badBind = await rest("PUT", `/pools/${poolId}/binds`, { binds: [{ ...web, address: "nope" }] });
    expect(badBind.status).toBe(400);
    expect(badBind.body).toMatchObject({
      data: { tideCode: "bad_request", details: { fields: { "binds[0].address": expect.any(String) } } },
    });

    for (const i of [1, 2]) {
      const p = await rest("POST", `/pools/${poolId}/proxies`, {
        address: `10.61.0.${i}`,
        hostname: `web-${i}`,
      });
      expect(p.body).toMatchObject({ state: "active", tableVersion: { version: i } });
    }
    const binds = await rest("PUT", `/pools/${poolId}/binds`, {
      binds: [web, { ...web, portStart: 80 }],
      reason: "http",
    });
    expect(binds.status).toBe(200);
    expect(binds.body).toMatchObject({ tableVersion: { version: 3, reason: "http" } });
    const preview = await rest("GET", `/pools/${poolId}/hash-fields/preview?hashFields=src_addr`);
    expect(preview.status).toBe(200);
    expect((preview.body as { fractionMoved: number }).fractionMoved).toBeGreaterThan(0.3);
    const unknown = await rest("GET", `/pools/${poolId}/hash-fields/preview?hashFields=src_ip`);
    expect(unknown.status).toBe(400);
    expect(unknown.body).toMatchObject({
      data: { details: { fields: { hashFields: expect.stringContaining("src_ip") } } },
    });
    const renamed = await rest("PATCH", `/pools/${poolId}`, { description: "front end" });
    expect(renamed.body).toMatchObject({ name: "web", description: "front end" });

    const dir = await rest("POST", "/directors", { hostname: "director-01.test" });
    expect(dir.status).toBe(200);
    const directorId = (dir.body as { id: string }).id;
    const dup = await rest("POST", "/directors", { hostname: "director-01.test" });
    expect(dup.status).toBe(409);
    expect(dup.body).toMatchObject({ data: { tideCode: "conflict", details: { directorId } } });
    const assigned = await rest("PUT", `/directors/${directorId}/pools/${poolId}`, {});
    expect(assigned.status, JSON.stringify(assigned.body)).toBe(200);
    expect((await rest("GET", `/directors/${directorId}`)).body).toMatchObject({
      pools: [{ id: poolId, name: "web" }],
    });
    const blocked = await rest("DELETE", `/pools/${poolId}`);
    expect(blocked.status).toBe(409);
    expect(String(blocked.body?.message)).toContain("director-01.test");
    expect((await rest("DELETE", `/directors/${directorId}/pools/${poolId}`)).status).toBe(200);
    expect((await rest("DELETE", `/directors/${directorId}`)).status).toBe(200);
    expect(await db.director.count()).toBe(0);
  });
});
