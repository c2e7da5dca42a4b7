import { findingIdOf, newId, type Observation } from "@tide/contracts";
import { createDb, storeBatch, type Db, type Prisma } from "@tide/db";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, inject, it } from "vitest";
import { callerFor, makeUser, restCall, truncateAll } from "../../testing/fixtures";
import { evaluateHost } from "./host-evaluation";
import { findingEvaluatorFor } from "./evaluation-scheduler";

/**
 * Issue 11 item 8: one host's huge counter jump gave a rate of Infinity, JSON stored it as null, and
 * GET /findings answered 500 to everyone. Rates are finite by construction and a stored row that
 * does not parse never breaks a list.
 */

let db: Db;

beforeAll(() => {
  db = createDb(inject("databaseUrl"), { max: 4 });
});
afterAll(async () => {
  await db.$disconnect();
});
beforeEach(async () => {
  await truncateAll(db);
});
afterEach(async () => {
  await findingEvaluatorFor(db).flush();
});

const HOST = "lb-fra-07";
const T0 = Date.parse("2026-11-22T23:00:00.000Z");
const at = (t: number) => new Date(T0 + t * 1000).toISOString();

/** Sample at T0 + t s; the web namespace's absolute TcpExtListenOverflows is `overflows`. */
function sample(t: number, overflows: number): Observation {
  const ns = (inode: number, name: string | null, listenOverflows: number) => ({
    netns: { inode, name, root: name === null },
    pids: [1],
    counters: {
      TcpPassiveOpens: 92_117_004,
      TcpExtListenDrops: 1_051,
      TcpExtListenOverflows: listenOverflows,
    },
    sockstat: { tcpInuse: 812, tcpOrphan: 0, tcpTw: 2_310, tcpAlloc: 950, tcpMemPages: 412 },
    sysctls: {
      somaxconn: 4096,
      tcpMaxSynBacklog: 4096,
      tcpSyncookies: 1 as const,
      tcpRmem: [4096, 131072, 6291456] as [number, number, number],
      ipLocalPortRange: [32768, 60999] as [number, number],
      tcpMtuProbing: 0 as const,
    },
    listeners: [{ address: "0.0.0.0", port: 8080, recvQ: 0, sendQ: 4096, requestedBacklog: null }],
    listenPorts: [{ port: 8080, sockets: 1 }],
  });
  return {
    schemaVersion: 1,
    hostId: HOST,
    agentVersion: "0.1.0",
    kernelRelease: "6.12.48-tide",
    sampledAt: at(t),
    namespaces: [ns(4026531840, null, 1_043), ns(4026532511, "web", overflows)],
    cpus: [],
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

async function makeHost(): Promise<string> {
  const id = newId("host");
  await db.host.create({ data: { id, name: HOST, roles: ["proxy"] } });
  return id;
}

async function readToken(): Promise<string> {
  const admin = await makeUser(db, "admin");
  return (await callerFor(db, admin).tokens.create({ name: "ro", scopes: ["read"] })).token;
}

describe("findings with extreme counters", () => {
  it("stores only finite evidence when a counter jumps to 1.7e308, and GET /findings answers", async () => {
    const hostId = await makeHost();
    // Rising 10/s (critical), then one reading near the largest double, then rising again from there.
    const overflows = (t: number) => (t === 30 ? 1.7e308 : 5_000 + 10 * t);
    const samples = Array.from({ length: 60 }, (_, t) => ({
      id: newId("observation"),
      sampledAt: new Date(at(t)),
      payload: sample(t, overflows(t)) as unknown as Prisma.InputJsonValue,
    }));
    await storeBatch(db, hostId, samples, 60 * 60_000, {
      dataPlane: [],
      agentVersion: "0.1.0",
      kernelRelease: "6.12.48-tide",
    });
    await evaluateHost(db, hostId);

    const rows = await db.finding.findMany({ select: { kind: true, evidence: true } });
    expect(rows.map((r) => r.kind)).toContain("accept_queue_overflow");
    for (const r of rows) {
      for (const e of r.evidence as { value: unknown; ratePerSecond: unknown }[]) {
        expect(Number.isFinite(e.value), JSON.stringify(e)).toBe(true);
        expect(e.ratePerSecond === null || Number.isFinite(e.ratePerSecond), JSON.stringify(e)).toBe(true);
      }
    }
    const list = await restCall(db, "GET", "/findings", { token: await readToken() });
    expect(list.status).toBe(200);
  });

  it("a stored finding with a null evidence value does not break GET /findings", async () => {
    const hostId = await makeHost();
    const evidence = (value: number | null) => ({
      metric: "TcpExtListenOverflows",
      value,
      unit: "per_second",
      ratePerSecond: value,
      threshold: { warn: 1, critical: 5 },
      window: { from: at(0), to: at(59), seconds: 59 },
    });
    const finding = (port: number, value: number | null) => ({
      id: findingIdOf(`accept_queue_overflow|${HOST}|web|${port}`),
      fingerprint: `accept_queue_overflow|${HOST}|web|${port}`,
      hostId,
      kind: "accept_queue_overflow",
      incident: 1,
      severity: "critical" as const,
      status: "open" as const,
      title: "Accept queue overflowing",
      subject: { hostId: HOST, netns: null, port: null, process: null, cpu: null, target: null },
      evidence: [evidence(value), evidence(3)],
      explanation: "Connections are dropped because the accept queue is full.",
      remedy: {
        summary: "Raise the backlog.",
        steps: [{ scope: "application", action: "Raise the listen backlog.", command: null }],
      },
      firstSeenAt: new Date(at(59)),
      lastSeenAt: new Date(at(59)),
    });
    // Written as a pre-fix evaluator did: JSON.stringify had turned an Infinity into null.
    const broken = finding(80, null);
    const good = finding(443, 12.5);
    await db.finding.create({ data: broken as Prisma.FindingUncheckedCreateInput });
    await db.finding.create({ data: good as Prisma.FindingUncheckedCreateInput });

    const token = await readToken();
    const list = await restCall(db, "GET", "/findings", { token });
    expect(list.status, JSON.stringify(list.body)).toBe(200);
    const body = list.body as unknown as { id: string; evidence: { value: number }[] }[];
    expect(body.map((f) => f.id).sort()).toEqual([broken.id, good.id].sort());
    // The unreadable entry is left out, the rest of the finding is shown.
    expect(body.find((f) => f.id === broken.id)!.evidence.map((e) => e.value)).toEqual([3]);
    expect(body.find((f) => f.id === good.id)!.evidence.map((e) => e.value)).toEqual([12.5, 3]);

    const one = await restCall(db, "GET", `/findings/${broken.id}`, { token });
    expect(one.status).toBe(200);
    expect(JSON.stringify(one.body)).not.toMatch(/Invalid input|expected number/);
  });
});
