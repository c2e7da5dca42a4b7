import type { HealthCheckOutcome, ProxyHealthView } from "@tide/contracts";
import { createDb, type Db } from "@tide/db";
import { waitFor } from "@tide/devstack/wait";
import { afterAll, beforeAll, beforeEach, describe, expect, inject, it } from "vitest";
import type { HostCaller } from "../../auth/actor";
import { callerFor, makePool, makeUser, restCall, truncateAll } from "../../testing/fixtures";
import { desiredStateFor } from "../fleet/desired-state.service";
import { RECOVER_HOLD_MS } from "./proxy-health.plan";
import { sample } from "@tide/diagnostics/fixtures";
import { evaluateHost } from "../findings/host-evaluation";
import { HEALTH_ACTION, poolHealth, recordHealthReport, setHealthPin } from "./proxy-health.service";
import { createHostListener } from "../../live/host-live";

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

const gue = (ok: boolean): HealthCheckOutcome => ({
  kind: "gue",
  ok,
  latencyUs: ok ? 400 : null,
  detail: ok ? "echo reply" : "timeout after 1000 ms",
  at: new Date().toISOString(),
});
const gue_ = gue;
const http = (ok: boolean): HealthCheckOutcome => ({
  kind: "http",
  ok,
  latencyUs: 900,
  detail: ok ? "HTTP 200" : "HTTP 503 (expected 200)",
  at: new Date().toISOString(),
});

/** A pool of three active proxies served by two directors (dir-a, dir-b), health checks on. */
async function fleet() {
  const admin = await makeUser(db, "admin");
  const pool = await makePool(db, "www", 3);
  const callers: Record<string, HostCaller> = {};
  for (const hostname of ["dir-a", "dir-b"]) {
    await db.director.create({
      data: { id: `dir_${hostname.replace("-", "")}0000`, hostname, pools: { connect: { id: pool.id } } },
    });
    const host = await db.host.create({
      data: { id: `host_${hostname.replace("-", "")}0000`, name: hostname, roles: ["director"] },
    });
    callers[hostname] = { hostId: host.id, hostname, tokenId: "htk_test", label: `host ${hostname}` };
  }
  const api = callerFor(db, admin);
  await api.pools.setHealthCheck({
    poolId: pool.id,
    healthCheck: {
      enabled: true,
      intervalMs: 2000,
      timeoutMs: 1000,
      rise: 3,
      fall: 3,
      gue: true,
      service: { kind: "http", port: 80, path: "/health", expectStatus: 200 },
    },
  });
  const proxies = (await api.pools.get({ poolId: pool.id })).proxies;
  const view = (
    i: number,
    up: boolean | null,
    checks = [gue(up !== false), http(true)],
  ): ProxyHealthView => ({
    poolId: pool.id,
    proxyId: proxies[i]!.id,
    up,
    since: new Date().toISOString(),
    checks,
  });
  const report = (director: string, views: ProxyHealthView[], now = new Date()) =>
    recordHealthReport(db, callers[director]!, { views }, now);
  const health = async () =>
    (await api.pools.get({ poolId: pool.id })).proxies.map((p) => (p.health.healthy ? "up" : "down"));
  const latest = () =>
    db.tableVersion.findFirstOrThrow({ where: { poolId: pool.id }, orderBy: { version: "desc" } });
  return { admin, api, pool, proxies, view, report, health, latest, callers };
}

describe("proxy health from the directors' checks", () => {
  it("sends each director host its checks: the pool's settings and its proxies in rotation", async () => {
    const f = await fleet();
    const desired = await desiredStateFor(db, f.callers["dir-a"]!.hostId);
    expect(desired.healthChecks).toEqual([
      expect.objectContaining({
        poolId: f.pool.id,
        pool: "www",
        guePort: 19523,
        check: expect.objectContaining({ enabled: true, service: expect.objectContaining({ kind: "http" }) }),
        proxies: f.proxies.map((p) => ({ proxyId: p.id, address: p.address, hostname: p.hostname })),
      }),
    ]);
    // Checks off: nothing to check.
    await f.api.pools.setHealthCheck({
      poolId: f.pool.id,
      healthCheck: { ...desired.healthChecks[0]!.check, enabled: false },
    });
    expect((await desiredStateFor(db, f.callers["dir-a"]!.hostId)).healthChecks).toEqual([]);
  });

  it("marks a proxy unhealthy when the directors agree, keeps it on a tie, and writes a version and an audit naming the checks", async () => {
    const f = await fleet();
    const v1 = (await f.latest()).version;

    const first = await f.report("dir-a", [f.view(0, false), f.view(1, true), f.view(2, true)]);
    const tie = await f.report("dir-b", [f.view(0, true), f.view(1, true), f.view(2, true)]);
    expect(first.accepted).toBe(3);
    // dir-a alone said down first (the only fresh view), then dir-b's "up" made it a tie: no flip back.
    expect(first.changed.map((c) => c.healthy)).toEqual([false]);
    expect(tie.changed).toEqual([]);
    expect(await f.health()).toEqual(["down", "up", "up"]);

    const version = await f.latest();
    expect(version.version).toBe(v1 + 1);
    expect(version.cause).toBe("health: www-proxy-1 down");
    expect(version.actorLabel).toBe("health checks");
    expect((version.backends as { healthy: boolean }[]).map((b) => b.healthy)).toEqual([false, true, true]);
    const audit = await db.auditEvent.findFirstOrThrow({
      where: { action: HEALTH_ACTION, targetId: f.proxies[0]!.id },
    });
    expect(audit.after).toMatchObject({ healthy: false, failing: ["dir-a gue: timeout after 1000 ms"] });
    expect(audit.reason).toContain("dir-a gue: timeout after 1000 ms");
  });

  it("fails open when every proxy in rotation is unhealthy, and recovers after the hold", async () => {
    const f = await fleet();
    const allDown = [0, 1, 2].map((i) => f.view(i, false));
    await f.report("dir-a", allDown);
    await f.report("dir-b", allDown);
    expect(await f.health()).toEqual(["down", "down", "down"]);
    const open = await f.latest();
    expect(open.cause).toMatch(/fail open: every proxy in rotation is unhealthy/);
    // The table is built as if all were healthy: health alone never empties a pool.
    expect((open.backends as { healthy: boolean }[]).map((b) => b.healthy)).toEqual([true, true, true]);

    const allUp = [0, 1, 2].map((i) => f.view(i, true));
    const soon = await f.report("dir-a", allUp);
    expect(soon.changed).toEqual([]); // held: it went down moments ago
    const later = new Date(Date.now() + 2 * RECOVER_HOLD_MS + 1_000);
    await f.report("dir-a", allUp, later);
    await f.report("dir-b", allUp, later);
    expect(await f.health()).toEqual(["up", "up", "up"]);
  });

  it("brings a held proxy back when its hold ends, without waiting for another report", async () => {
    const f = await fleet();
    await f.report("dir-a", [f.view(0, false)]);
    await f.report("dir-b", [f.view(0, false)]);
    expect(await f.health()).toEqual(["down", "up", "up"]);
    // One automatic flip: a 2 x RECOVER_HOLD_MS hold. Pretend most of it has passed.
    await db.proxy.update({
      where: { id: f.proxies[0]!.id },
      data: { healthChangedAt: new Date(Date.now() - 2 * RECOVER_HOLD_MS + 500) },
    });
    const held = await f.report("dir-a", [f.view(0, true)]);
    await f.report("dir-b", [f.view(0, true)]);
    expect(held.changed).toEqual([]);
    await waitFor("www-proxy-1 back up when its hold ends", async () => (await f.health())[0] === "up", {
      timeoutMs: 5_000,
    });
    expect(await f.health()).toEqual(["up", "up", "up"]);
    expect((await f.latest()).cause).toBe("health: www-proxy-1 up (hold released)");
  });

  it("answers, over tRPC and REST, which proxy is held, until when, after how many flips, and why", async () => {
    const f = await fleet();
    const t0 = new Date();
    const at = (ms: number) => new Date(t0.getTime() + ms);
    // Down (flip 1), back up after its 10 s hold (flip 2), down again (flip 3): the next hold is
    // RECOVER_HOLD_MS x 2^3 = 40 s from the last fall.
    await f.report("dir-a", [f.view(0, false)], t0);
    await f.report("dir-b", [f.view(0, false)], t0);
    const upAt = (ms: number) => ({ ...f.view(0, true), since: at(ms).toISOString() });
    await f.report("dir-a", [upAt(2 * RECOVER_HOLD_MS)], at(2 * RECOVER_HOLD_MS));
    await f.report("dir-b", [upAt(2 * RECOVER_HOLD_MS)], at(2 * RECOVER_HOLD_MS));
    expect(await f.health()).toEqual(["up", "up", "up"]);
    const fall = at(2 * RECOVER_HOLD_MS + 1_000);
    await f.report("dir-a", [f.view(0, false)], fall);
    await f.report("dir-b", [f.view(0, false)], fall);
    const rise = at(2 * RECOVER_HOLD_MS + 9_000);
    await f.report("dir-a", [upAt(2 * RECOVER_HOLD_MS + 8_000)], rise);
    await f.report("dir-b", [upAt(2 * RECOVER_HOLD_MS + 8_000)], rise);
    expect(await f.health()).toEqual(["down", "up", "up"]);

    const until = new Date(fall.getTime() + 8 * RECOVER_HOLD_MS);
    const clock = `${until.toISOString().slice(11, 19)}Z`;
    const h = await poolHealth(db, f.pool.id, rise);
    expect(h.proxies.map((p) => [p.hostname, p.healthy, p.held, p.recentFlips])).toEqual([
      ["www-proxy-1", false, true, 3],
      ["www-proxy-2", true, false, 0],
      ["www-proxy-3", true, false, 0],
    ]);
    expect(h.proxies[0]).toMatchObject({
      heldUntil: until.toISOString(),
      holdReason: `up on 2 of 2 directors (dir-a, dir-b), held until ${clock}: flapped 3 times in the last 10 min`,
    });
    expect(h.proxies[1]).toMatchObject({ held: false, heldUntil: null, holdReason: null });

    // The same answer through the routes the pool page and scripts use (now: a real clock, so the
    // hold, 40 s long from a fall a few seconds in the future, still runs).
    const trpc = (await f.api.pools.health({ poolId: f.pool.id })).proxies[0]!;
    expect(trpc).toMatchObject({ held: true, heldUntil: until.toISOString(), recentFlips: 3 });
    const token = (await f.api.tokens.create({ name: "reader", scopes: ["read"] })).token;
    const rest = await restCall(db, "GET", `/pools/${f.pool.id}/health`, { token });
    expect(rest.status).toBe(200);
    expect((rest.body?.["proxies"] as Record<string, unknown>[])[0]).toMatchObject({
      held: true,
      heldUntil: until.toISOString(),
      recentFlips: 3,
      holdReason: expect.stringContaining("flapped 3 times"),
    });

    // At the hold's end it returns, and the version and the audit say it was released from a hold.
    // (dir-b reports a moment before, so that both views are fresh at `until`; it is still held then.)
    const stillHeld = await f.report(
      "dir-b",
      [upAt(2 * RECOVER_HOLD_MS + 8_000)],
      at(-1 + until.getTime() - t0.getTime()),
    );
    expect(stillHeld.changed).toEqual([]);
    const released = await f.report("dir-a", [upAt(2 * RECOVER_HOLD_MS + 8_000)], until);
    expect(released.changed).toEqual([
      {
        proxyId: f.proxies[0]!.id,
        healthy: true,
        reason: `up on 2 of 2 directors (dir-a, dir-b); released from a hold until ${clock} (flapped 3 times in the last 10 min)`,
      },
    ]);
    expect((await f.latest()).cause).toBe("health: www-proxy-1 up (hold released)");
    const audit = await db.auditEvent.findFirstOrThrow({
      where: { action: HEALTH_ACTION, targetId: f.proxies[0]!.id },
      orderBy: { createdAt: "desc" },
    });
    expect(audit.after).toMatchObject({ healthy: true, releasedFromHold: until.toISOString() });
    expect((await poolHealth(db, f.pool.id, until)).proxies[0]).toMatchObject({
      healthy: true,
      held: false,
      heldUntil: null,
      recentFlips: 4,
    });
  });

  it("opens findings that say which path is broken, keeps them from diagnostics, and resolves them", async () => {
    const f = await fleet();
    const proxyHost = await db.host.create({
      data: { id: "host_wwwproxy1000", name: "www-proxy-1", roles: ["proxy"] },
    });
    const findings = (where: object = {}) =>
      db.finding.findMany({
        where: { kind: { in: ["proxy_unhealthy", "pool_fail_open"] }, ...where },
        orderBy: { kind: "asc" },
      });

    // GUE fails from both directors while HTTP answers: the finding says the GUE path is broken.
    await f.report("dir-a", [f.view(0, false)]);
    await f.report("dir-b", [f.view(0, false)]);
    const [gue] = await findings();
    expect(gue).toMatchObject({
      hostId: proxyHost.id,
      kind: "proxy_unhealthy",
      incident: 0,
      severity: "warn",
      status: "open",
      title: "GUE path to www-proxy-1 broken: HTTP answers, GUE does not",
    });
    expect(gue!.explanation).toContain("dir-a gue: timeout after 1000 ms");
    expect(JSON.stringify(gue!.remedy)).toContain("tide-redirect");
    expect(
      await db.findingEvent.count({ where: { findingId: gue!.id, type: "opened", by: "health checks" } }),
    ).toBe(1);

    // Diagnostics evaluates the proxy host's samples and leaves the health finding alone.
    await db.observationSample.create({
      data: {
        id: "obs_test00000001",
        hostId: proxyHost.id,
        sampledAt: new Date(),
        payload: { ...sample(0, { hostId: "www-proxy-1" }), sampledAt: new Date().toISOString() } as object,
      },
    });
    await evaluateHost(db, proxyHost.id);
    expect((await findings({ id: gue!.id }))[0]!.status).toBe("open");

    // Every proxy fails: the pool fails open, critical, on each director's host.
    const allDown = [0, 1, 2].map((i) => f.view(i, false, [gue_(false), http(false)]));
    await f.report("dir-a", allDown);
    await f.report("dir-b", allDown);
    const open = await findings({ status: "open" });
    expect(open.map((x) => [x.kind, x.severity, x.hostId]).sort()).toEqual(
      [
        ["pool_fail_open", "critical", f.callers["dir-a"]!.hostId],
        ["pool_fail_open", "critical", f.callers["dir-b"]!.hostId],
        ["proxy_unhealthy", "warn", proxyHost.id],
      ].sort(),
    );
    // Now HTTP fails too: the proxy's finding says its checks fail, not only the GUE path.
    expect(open.find((x) => x.kind === "proxy_unhealthy")!.title).toBe(
      "Proxy www-proxy-1 fails its health checks",
    );

    // All back (after the hold): every health finding resolves, by the health checks.
    const later = new Date(Date.now() + 60 * RECOVER_HOLD_MS);
    const allUp = [0, 1, 2].map((i) => f.view(i, true));
    await f.report("dir-a", allUp, later);
    await f.report("dir-b", allUp, later);
    expect((await findings()).map((x) => x.status)).toEqual(["resolved", "resolved", "resolved"]);
  });

  it("lets an operator pin health (audited) over the checks, and unpin it", async () => {
    const f = await fleet();
    const operator = await makeUser(db, "operator");
    const pinned = await setHealthPin(db, operator, {
      proxyId: f.proxies[1]!.id,
      pinned: false,
      reason: "kernel upgrade",
    });
    expect(pinned.proxy.health).toMatchObject({
      healthy: false,
      pinned: false,
      reason: "pinned unhealthy by an operator",
    });
    expect((await f.latest()).cause).toBe("health: www-proxy-2 down");
    const pinAudit = await db.auditEvent.findFirstOrThrow({ where: { action: "proxy.health_pin" } });
    expect(pinAudit).toMatchObject({ actorLabel: operator.email, reason: "kernel upgrade" });

    // The checks say up: the pin holds.
    await f.report("dir-a", [f.view(1, true)]);
    await f.report("dir-b", [f.view(1, true)]);
    expect(await f.health()).toEqual(["up", "down", "up"]);
    await expect(
      setHealthPin(db, operator, { proxyId: f.proxies[1]!.id, pinned: false, reason: "again" }),
    ).rejects.toThrow(/already pinned unhealthy/);

    // Unpinned, the checks decide again (after the recovery hold).
    await setHealthPin(db, operator, { proxyId: f.proxies[1]!.id, pinned: null, reason: "done" });
    const later = new Date(Date.now() + 2 * RECOVER_HOLD_MS + 1_000);
    await f.report("dir-a", [f.view(1, true)], later);
    await f.report("dir-b", [f.view(1, true)], later);
    expect(await f.health()).toEqual(["up", "up", "up"]);
  });

  it("shows every director's view per proxy, and tells pool pages when a verdict changes (not on heartbeats)", async () => {
    const f = await fleet();
    const listener = createHostListener(inject("databaseUrl"));
    let notified = 0;
    const off = await listener.subscribePool(f.pool.id, () => notified++);
    /** Notifications a report causes (LISTEN delivers in milliseconds; 300 ms is plenty). */
    const notifiesOf = async (views: ProxyHealthView[]) => {
      const n = notified;
      await f.report("dir-a", views);
      await new Promise((r) => setTimeout(r, 300));
      return notified - n;
    };
    try {
      const first = [f.view(0, false), f.view(1, true), f.view(2, true)];
      expect(await notifiesOf(first)).toBeGreaterThan(0);
      // The same views again (a heartbeat): no notification.
      expect(await notifiesOf(first)).toBe(0);
      // A check's outcome changes (http starts failing on proxy 2): pages are told.
      expect(await notifiesOf([f.view(1, true, [gue(true), http(false)])])).toBeGreaterThan(0);
    } finally {
      off();
    }
    const h = await poolHealth(db, f.pool.id);
    expect(h.check.enabled).toBe(true);
    expect(h.failOpen).toBe(false);
    expect(
      h.proxies.map((p) => [p.hostname, p.healthy, p.views.map((v) => [v.director, v.up, v.stale])]),
    ).toEqual([
      ["www-proxy-1", false, [["dir-a", false, false]]],
      ["www-proxy-2", true, [["dir-a", true, false]]],
      ["www-proxy-3", true, [["dir-a", true, false]]],
    ]);
    expect(h.proxies[1]!.views[0]!.checks.map((c) => [c.kind, c.ok, c.detail])).toEqual([
      ["gue", true, "echo reply"],
      ["http", false, "HTTP 503 (expected 200)"],
    ]);
  });

  it("takes reports only from directors, about proxies they serve", async () => {
    const f = await fleet();
    const other = await makePool(db, "api", 2);
    const otherProxy = (await f.api.pools.get({ poolId: other.id })).proxies[0]!;
    const r = await f.report("dir-a", [
      f.view(0, true),
      { ...f.view(0, true), poolId: other.id, proxyId: otherProxy.id },
      { ...f.view(0, true), proxyId: "prx_nosuchproxy00" },
    ]);
    expect(r.accepted).toBe(1);
    expect(r.ignored.map((i) => i.reason)).toEqual([
      `this director does not serve pool ${other.id}`,
      `no proxy prx_nosuchproxy00 in pool ${f.pool.id}`,
    ]);

    // Over REST with a host token: a host that is no director is refused with a reason.
    const { token } = await f.api.hostTokens.create({ hostname: "lb-web-1" });
    const refused = await restCall(db, "POST", "/agent/health", {
      token,
      body: { views: [f.view(0, false)] },
    });
    expect(refused.status).toBe(403);
    expect(refused.body?.["message"]).toMatch(/not a registered director/);
    const dirToken = (await f.api.hostTokens.create({ hostname: "dir-a" })).token;
    const ok = await restCall(db, "POST", "/agent/health", {
      token: dirToken,
      body: { views: [f.view(0, true)] },
    });
    expect(ok.status).toBe(200);
    expect(ok.body).toMatchObject({ accepted: 1, ignored: [], changed: [] });
  });
});
