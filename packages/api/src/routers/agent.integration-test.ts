import type { AgentHello, NamespaceObservation, Observation } from "@tide/contracts";
import { countSamples, createDb, samplesBetween, type Db } from "@tide/db";
import { waitFor } from "@tide/devstack/wait";
import pg from "pg";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, inject, it } from "vitest";
import { hostFromToken } from "../auth/host-tokens.service";
import { handleTableDownload } from "../http/table-download";
import { OBSERVATIONS_CHANNEL } from "../live/channels";
import { openApiDocument } from "../openapi";
import { findingEvaluatorFor } from "../services/findings/evaluation-scheduler";
import { ingestObservations } from "../services/telemetry/ingest.service";
import { callerFor, makePool, makeUser, truncateAll, restCall } from "../testing/fixtures";

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
afterEach(async () => {
  await evaluated(); // no evaluation of this test may run into the next one's TRUNCATE
});

/**
 * Findings are evaluated after ingest replied (services/findings/evaluation-scheduler.ts): wait until the
 * evaluations the batches so far scheduled have finished, as a page that refetches would see.
 */
async function evaluated() {
  const evaluator = findingEvaluatorFor(db);
  await evaluator.flush(); // no need to wait for the per-host interval here
  expect(evaluator.failing()).toEqual([]);
}

const rest = (method: string, path: string, opts: { token?: string; body?: unknown } = {}) =>
  restCall(db, method, path, opts);

// ---------------------------------------------------------------------------------------------------
// Observations built by hand: a proxy host with the root namespace and a named "web" namespace.

const HOST = "lb-fra-03";
/**
 * Ten minutes ago, on a whole second: the console refuses samples older than the retention (60 min
 * by default) or more than 5 min ahead of its clock, so test samples are dated around "now".
 */
const T0 = Math.floor(Date.now() / 1000) * 1000 - 10 * 60_000;
const at = (t: number) => new Date(T0 + t * 1000).toISOString();

function ns(netns: NamespaceObservation["netns"], counters: Record<string, number>): NamespaceObservation {
  return {
    netns,
    pids: [1],
    counters: { TcpPassiveOpens: 92_117_004, TcpExtListenDrops: 1_051, ...counters },
    sockstat: { tcpInuse: 812, tcpOrphan: 0, tcpTw: 2_310, tcpAlloc: 950, tcpMemPages: 412 },
    sysctls: {
      somaxconn: 4096,
      tcpMaxSynBacklog: 4096,
      tcpSyncookies: 1,
      tcpRmem: [4096, 131072, 6291456],
      ipLocalPortRange: [32768, 60999],
      tcpMtuProbing: 0,
    },
    listeners: [{ address: "0.0.0.0", port: 8080, recvQ: 0, sendQ: 4096, requestedBacklog: null }],
    listenPorts: [{ port: 8080, sockets: 1 }],
  };
}

/** Sample at T0 + t s; `overflows(t)` is the web namespace's absolute TcpExtListenOverflows. */
function sample(t: number, overflows: (t: number) => number, hostId = HOST): Observation {
  return {
    schemaVersion: 1,
    hostId,
    agentVersion: "0.1.0",
    kernelRelease: "6.12.48-tide",
    sampledAt: at(t),
    namespaces: [
      ns({ inode: 4026531840, name: null, root: true }, { TcpExtListenOverflows: 1_043 }),
      ns({ inode: 4026532511, name: "web", root: false }, { TcpExtListenOverflows: overflows(t) }),
    ],
    cpus: [
      {
        cpu: 0,
        softnetProcessed: 9_000_000 + t,
        softnetDropped: 0,
        softnetTimeSqueeze: 140,
        netRxSoftirqs: 5_000_000,
      },
    ],
    probes: [],
    probeResults: {
      listenCapped: [],
      listenOverflow: [],
      connectLatency: [],
      netRxSoftirq: [],
      icmpFragNeeded: [],
    },
    paths: [],
  };
}

const rising = (t: number) => 5_000 + 10 * t; // 10 overflows a second: critical (> 5/s)
/** Rising until t = 59, flat afterwards. */
const risingThenFlat = (t: number) => rising(Math.min(t, 59));

function batch(from: number, to: number, overflows: (t: number) => number, hostId = HOST) {
  const observations = [];
  for (let t = from; t < to; t++) observations.push(sample(t, overflows, hostId));
  return { observations, dataPlane: [], replayed: false };
}

function hello(hostname = HOST): AgentHello {
  return {
    protocolVersion: 1,
    agentVersion: "0.1.0",
    hostname,
    kernelRelease: "6.12.48-tide",
    roles: ["proxy"],
    probes: [{ probe: "listen_overflow", state: "off", reason: "missing_privilege", detail: "no CAP_BPF" }],
    dataPlane: [],
  };
}

async function setup(hostname = HOST) {
  const admin = await makeUser(db, "admin");
  const operator = await makeUser(db, "operator");
  const api = callerFor(db, admin);
  const created = await api.hostTokens.create({ hostname });
  const apiToken = (await api.tokens.create({ name: "all", scopes: ["read", "operate", "admin"] })).token;
  const readToken = (await api.tokens.create({ name: "ro", scopes: ["read"] })).token;
  return { admin, operator, api, hostToken: created.token, summary: created.summary, apiToken, readToken };
}

/**
 * Samples stored for every host, in both tiers of the 1 s store: ingest starts the telemetry
 * compactor, which moves minutes older than ~90 s out of observation_samples into chunks.
 */
async function storedCount(): Promise<number> {
  const hosts = await db.host.findMany({ select: { id: true } });
  let n = 0;
  for (const h of hosts) n += await countSamples(db, h.id);
  return n;
}

/** The host's stored sample times, oldest first, from both tiers. */
async function storedTimes(hostId: string): Promise<string[]> {
  return (await samplesBetween(db, hostId, new Date(0))).map((x) => x.sampledAt.toISOString());
}

describe("host tokens", () => {
  it("are shown once, stored hashed, audited, and stop working once revoked", async () => {
    const s = await setup();
    expect(s.hostToken).toMatch(/^tide_host_/);
    expect(s.summary.hostname).toBe(HOST);
    expect(s.summary.hostId).toMatch(/^host_/);
    expect(s.summary.id).toMatch(/^htk_/);
    const row = await db.hostToken.findUniqueOrThrow({ where: { id: s.summary.id } });
    expect(row.tokenHash).toMatch(/^[0-9a-f]{64}$/);
    expect(row.tokenHash).not.toContain(s.hostToken);
    expect(JSON.stringify(await s.api.hostTokens.list({}))).not.toContain(s.hostToken);
    const audit = await db.auditEvent.findMany({ where: { targetId: s.summary.id } });
    expect(audit.map((a) => a.action)).toEqual(["host_token.create"]);

    expect((await hostFromToken(db, s.hostToken))?.hostname).toBe(HOST);
    expect((await rest("POST", "/agent/hello", { token: s.hostToken, body: hello() })).status).toBe(200);

    const revoked = await s.api.hostTokens.revoke({ tokenId: s.summary.id });
    expect(revoked.revokedAt).not.toBeNull();
    await expect(s.api.hostTokens.revoke({ tokenId: s.summary.id })).rejects.toThrow(/already revoked/);
    expect((await rest("POST", "/agent/hello", { token: s.hostToken, body: hello() })).status).toBe(401);
    expect(
      (
        await db.auditEvent.findMany({ where: { targetId: s.summary.id }, orderBy: { createdAt: "asc" } })
      ).map((a) => `${a.action} ${a.outcome}`),
    ).toEqual(["host_token.create done", "host_token.revoke done", "host_token.revoke refused"]);
    // Only admins issue host tokens.
    await expect(callerFor(db, s.operator).hostTokens.create({ hostname: "x" })).rejects.toThrow(/admin/);
  });

  it("enforce the auth matrix on agent and non-agent routes", async () => {
    const s = await setup();
    const other = (await s.api.hostTokens.create({ hostname: "lb-ams-01" })).token;
    expect((await rest("GET", "/agent/desired")).status).toBe(401);
    expect((await rest("GET", "/agent/desired", { token: "tide_host_bogus" })).status).toBe(401);
    const apiOnAgent = await rest("GET", "/agent/desired", { token: s.apiToken });
    expect(apiOnAgent.status).toBe(403);
    expect(String(apiOnAgent.body?.message)).toMatch(/host token/);
    expect(
      (await callerFor(db, s.admin)
        .agent.desired({})
        .catch((e: Error) => e.message)) as string,
    ).toMatch(/host token/);
    for (const path of ["/hosts", "/findings", "/pools", "/me"]) {
      const r = await rest("GET", path, { token: s.hostToken });
      expect(r.status, path).toBeGreaterThanOrEqual(401);
      expect(r.status, path).toBeLessThanOrEqual(403);
    }
    const hostOnRead = await rest("GET", "/hosts", { token: s.hostToken });
    expect(hostOnRead.status).toBe(403);
    expect(String(hostOnRead.body?.message)).toMatch(/only call the agent endpoints/);

    const mismatch = await rest("POST", "/agent/hello", { token: other, body: hello(HOST) });
    expect(mismatch.status).toBe(403);
    const foreignBatch = await rest("POST", "/agent/observations", {
      token: other,
      body: batch(0, 5, rising),
    });
    expect(foreignBatch.status).toBe(403);
    expect(await storedCount()).toBe(0);

    const bad = await rest("POST", "/agent/observations", {
      token: s.hostToken,
      body: { ...batch(0, 3, rising), observations: [sample(2, rising), sample(1, rising)] },
    });
    expect(bad.status).toBe(400);
    expect(JSON.stringify(bad.body)).toMatch(/increasing time order/);

    const desired = await rest("GET", "/agent/desired", { token: s.hostToken });
    expect(desired.status).toBe(200);
    expect(desired.body).toMatchObject({
      sampleIntervalMs: 1000,
      batchMaxObservations: 60,
      directorTables: [],
    });
  });
});

describe("desired state", () => {
  it("lists a director host's pool tables, bumps the revision on a new version, and serves the bytes", async () => {
    const s = await setup("director-01.test");
    const proxyToken = (await s.api.hostTokens.create({ hostname: HOST })).token;
    const director = await db.director.create({ data: { id: "dir_test0001", hostname: "director-01.test" } });
    const pool = await makePool(db, "web", 3);
    await db.pool.update({ where: { id: pool.id }, data: { directors: { connect: [{ id: director.id }] } } });

    const hi = await rest("POST", "/agent/hello", {
      token: s.hostToken,
      body: { ...hello("director-01.test"), roles: ["director"] },
    });
    expect(hi.status).toBe(200);
    const desired = (hi.body as { desired: { revision: number; directorTables: { downloadPath: string }[] } })
      .desired;
    expect(desired.directorTables).toEqual([
      {
        poolId: pool.id,
        poolName: "web",
        tableVersionId: pool.currentVersion!.id,
        contentHash: pool.currentVersion!.contentHash,
        downloadPath: `/api/v1/pools/${pool.id}/tables/1/glbd`,
      },
    ]);
    // Unchanged state, same revision.
    expect((await rest("GET", "/agent/desired", { token: s.hostToken })).body).toMatchObject({
      revision: desired.revision,
    });
    // A drain makes version 2: the revision moves and the new table is listed.
    await callerFor(db, s.operator).proxies.transition({ proxyId: pool.proxies[0]!.id, action: "drain" });
    const next = await rest("GET", "/agent/desired", { token: s.hostToken });
    expect(next.body).toMatchObject({
      revision: desired.revision + 1,
      directorTables: [{ downloadPath: `/api/v1/pools/${pool.id}/tables/2/glbd` }],
    });

    const download = (token: string) =>
      handleTableDownload({
        headers: new Headers({ authorization: `Bearer ${token}` }),
        poolId: pool.id,
        version: "2",
        db,
      });
    const ok = await download(s.hostToken);
    expect(ok.status).toBe(200);
    expect((await ok.arrayBuffer()).byteLength).toBeGreaterThan(0);
    expect((await download(proxyToken)).status).toBe(403); // not a director of this pool
    expect((await download("tide_host_bogus")).status).toBe(401);
    expect((await download(s.readToken)).status).toBe(200);
  });
});

describe("ingest and findings", () => {
  it("opens a critical accept_queue_overflow, resolves it when the counter goes flat, reopens it", async () => {
    const s = await setup();
    const hi = await rest("POST", "/agent/hello", { token: s.hostToken, body: hello() });
    expect(hi.status).toBe(200);
    expect(hi.body).toMatchObject({ hostId: HOST, desired: { revision: 1, pmtuTargets: [] } });

    const started = performance.now();
    const first = await rest("POST", "/agent/observations", {
      token: s.hostToken,
      body: batch(0, 60, rising),
    });
    const ms = performance.now() - started;
    console.info(
      `ingest: ${ms.toFixed(1)} ms for a REST batch of 60 samples (2 namespaces), evaluation not included`,
    );
    expect(first.status).toBe(200);
    expect(first.body).toEqual({ accepted: 60, desiredRevision: 1 });
    await evaluated();

    let open = await s.api.findings.list({ status: "open", limit: 100 });
    expect(open.map((f) => [f.kind, f.severity, f.subject.netns?.name])).toEqual([
      ["accept_queue_overflow", "critical", "web"],
    ]);
    const id = open[0]!.id;
    expect(id).toMatch(/^fnd_/);

    // The same batch again: duplicates are ignored, nothing changes.
    const dup = await rest("POST", "/agent/observations", { token: s.hostToken, body: batch(0, 60, rising) });
    expect(dup.status).toBe(200);
    expect(dup.body).toMatchObject({ accepted: 0, desiredRevision: 1 });
    expect(
      (dup.body!.refused as { sampledAt: string; reason: string }[]).map((r) => [r.sampledAt, r.reason]),
    ).toEqual(batch(0, 60, rising).observations.map((o) => [o.sampledAt, "duplicate"]));
    await evaluated();
    expect(await storedCount()).toBe(60);
    expect(await db.findingEvent.count()).toBe(1);

    // Read APIs.
    const hosts = await rest("GET", "/hosts", { token: s.readToken });
    expect(hosts.status).toBe(200);
    expect(hosts.body).toMatchObject([
      { name: HOST, roles: ["proxy"], health: { worstSeverity: "critical", openFindings: 1, stale: false } },
    ]);
    const hostId = (hosts.body as unknown as { id: string }[])[0]!.id;
    const detail = await rest("GET", `/hosts/${hostId}`, { token: s.readToken });
    expect(detail.status).toBe(200);
    expect(detail.body).toMatchObject({
      name: HOST,
      latestSample: { sampledAt: at(59), samplesStored: 60 },
    });
    expect(
      (detail.body as { latestSample: { namespaces: { key: string }[] } }).latestSample.namespaces.map(
        (n) => n.key,
      ),
    ).toEqual(["root", "name:web"]);
    const series = await rest(
      "GET",
      `/hosts/${HOST}/observations?namespace=name:web&counters=TcpExtListenOverflows&since=${encodeURIComponent(at(50))}`,
      { token: s.readToken },
    );
    expect(series.status).toBe(200);
    const points = (series.body as { points: { rates: Record<string, number | null> }[] }).points;
    expect(points).toHaveLength(10);
    expect(points[0]!.rates.TcpExtListenOverflows).toBeNull();
    expect(points[9]!.rates.TcpExtListenOverflows).toBe(10);
    const badSeries = await rest("GET", `/hosts/${HOST}/observations?counters=not-a-counter!`, {
      token: s.readToken,
    });
    expect(badSeries.status).toBe(400);

    // Filters.
    expect(await s.api.findings.list({ kind: "accept_queue_overflow", limit: 10 })).toHaveLength(1);
    expect(await s.api.findings.list({ kind: "pmtu_blackhole", limit: 10 })).toHaveLength(0);
    expect(await s.api.findings.list({ severity: "warn", limit: 10 })).toHaveLength(0);
    expect(await s.api.findings.list({ hostId: HOST, limit: 10 })).toHaveLength(1);
    expect(await s.api.findings.list({ hostId, status: "resolved", limit: 10 })).toHaveLength(0);
    const listed = await rest("GET", "/findings?status=open&severity=critical", { token: s.readToken });
    expect((listed.body as unknown as { id: string }[]).map((f) => f.id)).toEqual([id]);
    expect((await rest("GET", "/findings?status=bogus", { token: s.readToken })).status).toBe(400);
    expect((await rest("GET", "/findings/fnd_0000000000000", { token: s.readToken })).status).toBe(404);

    // Acknowledge: operate scope, audited, shown in history.
    expect((await rest("POST", `/findings/${id}/acknowledge`, { token: s.readToken, body: {} })).status).toBe(
      403,
    );
    const ack = await rest("POST", `/findings/${id}/acknowledge`, {
      token: s.apiToken,
      body: { note: "on it" },
    });
    expect(ack.status).toBe(200);
    expect(ack.body).toMatchObject({
      status: "acknowledged",
      acknowledgedBy: expect.stringMatching(/^token all/),
    });
    expect((await rest("POST", `/findings/${id}/acknowledge`, { token: s.apiToken, body: {} })).status).toBe(
      409,
    );
    expect(
      await db.auditEvent.count({ where: { action: "finding.acknowledge", targetId: id, outcome: "done" } }),
    ).toBe(1);

    // Still overflowing: stays acknowledged; then flat: resolves.
    await rest("POST", "/agent/observations", { token: s.hostToken, body: batch(60, 120, risingThenFlat) });
    await evaluated();
    await rest("POST", "/agent/observations", { token: s.hostToken, body: batch(120, 180, risingThenFlat) });
    await evaluated();
    let got = await rest("GET", `/findings/${id}`, { token: s.readToken });
    expect(got.status).toBe(200);
    expect(got.body).toMatchObject({ status: "resolved", resolvedAt: expect.any(String) });
    const history = (got.body as { history: { type: string; by: string; detail: string }[] }).history;
    expect(history.map((h) => h.type)).toEqual(["opened", "acknowledged", "resolved"]);
    expect(history[2]).toMatchObject({ by: "diagnostics", detail: "cleared" });
    expect((await s.api.hosts.list())[0]!.health).toMatchObject({ worstSeverity: null, openFindings: 0 });

    // Overflowing again: the same finding (same id) reopens.
    const again = (t: number) => risingThenFlat(t) + 10 * Math.max(0, t - 180);
    await rest("POST", "/agent/observations", { token: s.hostToken, body: batch(180, 240, again) });
    await evaluated();
    got = await rest("GET", `/findings/${id}`, { token: s.readToken });
    expect(got.body).toMatchObject({ status: "open", resolvedAt: null, acknowledgedBy: null });
    expect((got.body as { history: { type: string }[] }).history.map((h) => h.type)).toEqual([
      "opened",
      "acknowledged",
      "resolved",
      "reopened",
    ]);
    open = await s.api.findings.list({ status: "open", limit: 100 });
    expect(open.map((f) => f.id)).toEqual([id]);
  });

  it("tells live pages of each batch that stored samples, in its own statement, not of duplicates", async () => {
    const s = await setup();
    expect((await rest("POST", "/agent/hello", { token: s.hostToken, body: hello() })).status).toBe(200);
    const hostId = (await db.host.findFirstOrThrow({ where: { name: HOST } })).id;
    const listener = new pg.Client({ connectionString: inject("databaseUrl") });
    await listener.connect();
    const got: string[] = [];
    listener.on("notification", (n) => {
      if (n.channel === OBSERVATIONS_CHANNEL && !n.payload?.endsWith(" findings")) got.push(n.payload ?? "");
    });
    try {
      await listener.query(`LISTEN ${OBSERVATIONS_CHANNEL}`);
      const post = (from: number, to: number) =>
        rest("POST", "/agent/observations", { token: s.hostToken, body: batch(from, to, rising) });
      expect((await post(0, 5)).body).toMatchObject({ accepted: 5 });
      expect((await post(0, 5)).body).toMatchObject({ accepted: 0 });
      expect((await post(5, 6)).body).toMatchObject({ accepted: 1 });
      await waitFor("two notifications", () => got.length >= 2, { timeoutMs: 10_000, intervalMs: 20 });
      expect(got).toEqual([hostId, hostId]);
    } finally {
      await listener.end();
    }
  });

  it("keeps only the retention window of samples per host, pruning per batch", async () => {
    const s = await setup();
    const host = (await hostFromToken(db, s.hostToken))!;
    const timings: number[] = [];
    // The console's clock right after the fifth batch's newest sample: retention counts back from it.
    const now = new Date(T0 + 300_000);
    for (let b = 0; b < 5; b++) {
      const started = performance.now();
      await ingestObservations(db, host, batch(b * 60, (b + 1) * 60, rising), { retentionMinutes: 2, now });
      timings.push(performance.now() - started);
    }
    console.info(
      `ingest: ${timings.map((t) => t.toFixed(1)).join(", ")} ms per 60-sample batch (service call)`,
    );
    const times = await storedTimes(host.hostId);
    expect(times).toHaveLength(120); // t = 180 .. 299: the two minutes before the console's clock
    expect(times[0]).toBe(at(180));
    // A replayed batch older than the horizon is not stored, and each sample says why.
    const old = await ingestObservations(db, host, batch(0, 60, rising), { retentionMinutes: 2, now });
    expect(old.accepted).toBe(0);
    expect(old.refused?.map((r) => r.reason)).toEqual(Array<string>(60).fill("too_old"));
    expect(await storedCount()).toBe(120);
  });

  it("refuses a sample dated 2099: it neither deletes the host's samples nor blocks later ones", async () => {
    const s = await setup();
    const send = (body: unknown) => rest("POST", "/agent/observations", { token: s.hostToken, body });
    const current = await send(batch(0, 30, rising));
    expect(current.body).toEqual({ accepted: 30, desiredRevision: 1 });

    const future = sample(30, rising);
    future.sampledAt = "2099-01-01T00:00:00.000Z";
    const refused = await send({
      observations: [sample(30, rising), future],
      dataPlane: [],
      replayed: false,
    });
    expect(refused.status).toBe(200);
    expect(await storedCount()).toBe(31); // the 30 current ones are still there
    expect(refused.body).toMatchObject({
      accepted: 1,
      refused: [{ sampledAt: "2099-01-01T00:00:00.000Z", reason: "in_future" }],
    });

    const later = await send(batch(31, 60, rising));
    expect(later.body).toEqual({ accepted: 29, desiredRevision: 1 });
    expect(await storedCount()).toBe(60);
    expect((await storedTimes(s.summary.hostId)).at(-1)).toBe(at(59));
  });

  it("deletes a future-dated sample stored before the window existed, so it shadows nothing", async () => {
    const s = await setup();
    const host = (await hostFromToken(db, s.hostToken))!;
    await db.observationSample.create({
      data: {
        id: "obs_from2099",
        hostId: host.hostId,
        sampledAt: new Date("2099-01-01T00:00:00.000Z"),
        payload: {},
      },
    });
    const r = await ingestObservations(db, host, batch(0, 10, rising), { retentionMinutes: 60 });
    expect(r).toMatchObject({ accepted: 10, pruned: 1 });
    expect(await storedCount()).toBe(10);
  });

  it("publishes the agent, host and finding endpoints in OpenAPI", () => {
    const paths = Object.keys(openApiDocument().paths ?? {});
    for (const p of [
      "/agent/hello",
      "/agent/observations",
      "/agent/desired",
      "/hosts",
      "/hosts/{hostId}",
      "/hosts/{hostId}/observations",
      "/findings",
      "/findings/{findingId}",
      "/findings/{findingId}/acknowledge",
      "/host-tokens",
    ]) {
      expect(paths, p).toContain(p);
    }
  });
});
