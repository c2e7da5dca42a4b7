/**
 * More than one console (issue 16): two real console processes (`next start` of apps/console's
 * production build) on the integration tier's throwaway PostgreSQL, a round-robin HTTP load
 * balancer in front of them (round-robin-proxy.ts), and simulated hosts speaking through the
 * agent's real console link. What the processes share, each checked where only sharing makes it
 * true:
 *
 *  - evaluation: both consoles get the same host's batch at once and both evaluate it at once;
 *    its finding is still opened once and resolved once (the per-host advisory lock);
 *  - live pages: a host page's stream on console B gets the updates for a sample ingested through
 *    console A and for the finding A opened (one LISTEN per process, NOTIFY crosses processes);
 *  - ingest: agents spread over both (half through the balancer, half given both URLs), console A
 *    is killed (SIGKILL) mid-run: agents fail over, every sample is stored exactly once, and each
 *    overflowing host's finding opens once and, once the overflow stops, resolves once.
 *
 * No time is asserted: every wait is for a condition, bounded, and says what it waited for.
 */
import { existsSync } from "node:fs";
import path from "node:path";
import type { AgentObservationsIn, Observation } from "@tide/contracts";
import { testHello } from "@tide/contracts/testing";
import { countSamples, createDb, samplesBetween, type Db } from "@tide/db";
import {
  CONSOLE_DIR,
  freePort,
  loadApiFixtures,
  startConsole,
  stopConsole,
  waitFor,
  type ApiFixtures,
  type ConsoleProcess,
} from "@tide/devstack";
import { everyStep } from "@tide/lab/testing";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { openLiveStream, type LiveEvent, type LiveStream } from "./live-stream";
import { startRoundRobinProxy, type RoundRobinProxy } from "./round-robin-proxy";
import { OVERFLOWS_PER_S, SimulatedAgent, simulatedObservation, type FleetClock } from "./simulated-agent";

declare module "vitest" {
  /** From packages/devstack's integration global setup: a fresh, migrated database. */
  interface ProvidedContext {
    databaseUrl: string;
  }
}

/**
 * At least packages/api/src/services/findings/evaluation-scheduler.ts's EVALUATION_INTERVAL_MS (5 s, the least
 * time between two evaluations of one host in one process): after this long without a batch, a
 * console evaluates a host's next batch at once.
 */
const EVALUATOR_INTERVAL_MS = 6_000;
/** Wall ms between two samples of a simulated agent (each dated 1 s after the one before: 5x). */
const TICK_MS = 200;
/** How far back the simulated hosts' first sample is dated: inside the 60 min retention. */
const HISTORY_START_MS = 50 * 60_000;
const FINDING_KIND = "accept_queue_overflow";

let db: Db;
let fixtures: ApiFixtures;
let api: ReturnType<ApiFixtures["callerFor"]>;
let consoleA: ConsoleProcess | undefined;
let consoleB: ConsoleProcess | undefined;
let urlA: string;
let urlB: string;
let proxy: RoundRobinProxy | undefined;
const agents: SimulatedAgent[] = [];
const streams: LiveStream[] = [];

/** A REST call as an agent makes it (host token); throws on anything but 2xx. */
async function post(consoleUrl: string, route: string, token: string, body: unknown): Promise<unknown> {
  const res = await fetch(`${consoleUrl}/api/v1${route}`, {
    method: "POST",
    headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  const text = await res.text();
  if (!res.ok) throw new Error(`POST ${consoleUrl}${route}: HTTP ${res.status} ${text}`);
  return JSON.parse(text) as unknown;
}

/** A host token, and the host's hello to each console (as the agent's first call). */
async function registerHost(hostname: string, consoleUrls: readonly string[]): Promise<string> {
  const { token } = await api.hostTokens.create({ hostname });
  for (const url of consoleUrls) await post(url, "/agent/hello", token, testHello(hostname));
  return token;
}

/** Samples t = from .. to-1 of a host, as one batch (`dropsAt`: its accept queue drops so far at t). */
function batch(
  hostname: string,
  from: number,
  to: number,
  startMs: number,
  dropsAt: (t: number) => number,
): AgentObservationsIn {
  const observations: Observation[] = [];
  for (let t = from; t < to; t++) observations.push(simulatedObservation(hostname, t, startMs, dropsAt(t)));
  return { observations, dataPlane: [], replayed: false };
}

/** Each host's findings with their history's event types. */
async function findingsOf(hostnames: readonly string[]) {
  const rows = await db.finding.findMany({
    where: { host: { name: { in: [...hostnames] } } },
    select: {
      kind: true,
      status: true,
      severity: true,
      host: { select: { name: true } },
      events: { select: { type: true } },
    },
  });
  return new Map(hostnames.map((h) => [h, rows.filter((r) => r.host.name === h)]));
}

/** Waits until every named host has a finding of FINDING_KIND in `status` (and `severity`). */
function untilFindings(
  hostnames: readonly string[],
  status: "open" | "resolved",
  timeoutMs: number,
  severity?: "warn" | "critical",
) {
  // What the last look found, for the message if the wait times out.
  let seen = "";
  return waitFor(
    `${status} ${severity ?? ""} ${FINDING_KIND} findings on ${hostnames.join(", ")}`,
    async () => {
      const byHost = await findingsOf(hostnames);
      seen = [...byHost]
        .map(
          ([h, fs]) =>
            `${h}: ${fs.map((f) => `${f.kind} ${f.status} ${f.severity} (${f.events.map((e) => e.type).join(", ")})`).join("; ") || "no findings"}`,
        )
        .join("\n");
      return [...byHost.values()].every((fs) =>
        fs.some(
          (f) =>
            f.kind === FINDING_KIND &&
            f.status === status &&
            (severity === undefined || f.severity === severity),
        ),
      );
    },
    {
      timeoutMs,
      intervalMs: 500,
      detail: () =>
        `findings:\n${seen}\nagents:\n${agents.map((a) => `${a.hostname}: ${a.logs.slice(-3).join(" | ")}`).join("\n")}` +
        `\nconsole A:\n${consoleA?.output()}\nconsole B:\n${consoleB?.output()}`,
    },
  );
}

/**
 * Waits until the consoles have finished evaluating: no batch for longer than the evaluator's
 * interval (nothing waits for it any more), then no transaction open on the database but ours,
 * twice in a row (an evaluation is one transaction). Only then is a second, racing write visible.
 */
async function evaluationsSettled(): Promise<void> {
  await new Promise((r) => setTimeout(r, EVALUATOR_INTERVAL_MS));
  let quiet = 0;
  await waitFor(
    "the consoles' evaluations to finish",
    async () => {
      const [{ open }] = await db.$queryRaw<[{ open: number }]>`
        SELECT count(*)::int AS open FROM pg_stat_activity
        WHERE datname = current_database() AND pid <> pg_backend_pid() AND xact_start IS NOT NULL`;
      quiet = open === 0 ? quiet + 1 : 0;
      return quiet >= 2;
    },
    { timeoutMs: 60_000, intervalMs: 500 },
  );
}

/**
 * Each host's findings as [kind, status, times opened, resolved, reopened]: an overflowing host
 * must show exactly [OPENED_AND_RESOLVED_ONCE], one that never overflowed none.
 */
function histories(found: Awaited<ReturnType<typeof findingsOf>>): Record<string, unknown[][]> {
  const times = (f: { events: { type: string }[] }, type: string) =>
    f.events.filter((e) => e.type === type).length;
  return Object.fromEntries(
    [...found].map(([h, fs]) => [
      h,
      fs.map((f) => [f.kind, f.status, times(f, "opened"), times(f, "resolved"), times(f, "reopened")]),
    ]),
  );
}

const OPENED_AND_RESOLVED_ONCE = [FINDING_KIND, "resolved", 1, 1, 0];

beforeAll(async () => {
  if (!existsSync(path.join(CONSOLE_DIR, ".next/BUILD_ID")))
    throw new Error(`${CONSOLE_DIR}/.next/BUILD_ID is missing: npm run build -w @tide/console`);
  const databaseUrl = inject("databaseUrl");
  db = createDb(databaseUrl, { max: 4 });
  fixtures = await loadApiFixtures();
  await fixtures.truncateAll(db);
  api = fixtures.callerFor(db, await fixtures.makeUser(db, "admin"));
  const [portA, portB] = [await freePort(), await freePort()];
  urlA = `http://127.0.0.1:${portA}`;
  urlB = `http://127.0.0.1:${portB}`;
  // One after the other: two Next.js servers starting at once on a busy 2-core machine time out.
  consoleA = await startConsole(portA, databaseUrl);
  consoleB = await startConsole(portB, databaseUrl);
  proxy = await startRoundRobinProxy([urlA, urlB]);
});

afterAll(async () => {
  await everyStep([
    ...streams.map((s) => () => s.close()),
    ...agents.map((a) => () => a.abort()),
    () => proxy?.close(),
    () => stopConsole(consoleA),
    () => stopConsole(consoleB),
    () => db?.$disconnect(),
  ]);
});

describe("two console processes on one database", () => {
  it("evaluate one host's findings one at a time: both get its batch at once, it resolves once", async () => {
    const hosts = ["mc-race-1", "mc-race-2", "mc-race-3", "mc-race-4"];
    const startMs = Math.floor(Date.now() / 1000) * 1000 - 10 * 60_000;
    // Hello to both: each console has served the agent routes before the batches that race.
    const tokens = await Promise.all(hosts.map((h) => registerHost(h, [urlA, urlB])));
    // Overflow (10/s) for 90 s, then none. Rates are 60 s averages (warn above 1/s).
    const OVERFLOW_S = 90;
    const drops = (t: number) => OVERFLOWS_PER_S * Math.min(t, OVERFLOW_S);
    const send = (url: string, i: number, from: number, to: number) =>
      post(url, "/agent/observations", tokens[i]!, batch(hosts[i]!, from, to, startMs, drops));
    // Through A: the overflow opens each finding (critical); 45 s more without overflow still show
    // 16 s of it in the last minute (~2.7/s: warn), so A evaluates them and the findings stay open.
    await Promise.all(hosts.map((_, i) => send(urlA, i, 0, OVERFLOW_S)));
    await untilFindings(hosts, "open", 60_000);
    await Promise.all(hosts.map((_, i) => send(urlA, i, OVERFLOW_S, OVERFLOW_S + 45)));
    await untilFindings(hosts, "open", 60_000, "warn");
    // Neither console has a reason to wait before its next evaluation of these hosts.
    await new Promise((r) => setTimeout(r, EVALUATOR_INTERVAL_MS));
    // The next 30 s, to A and B at the same time, one host after the other: one console stores
    // them, the other finds them stored; a small batch, so both evaluate the host at once, and
    // both see a clear minute. One of them resolves the finding; the other must find it resolved.
    for (const i of hosts.keys())
      await Promise.all([urlA, urlB].map((url) => send(url, i, OVERFLOW_S + 45, OVERFLOW_S + 75)));
    await untilFindings(hosts, "resolved", 60_000);
    await evaluationsSettled();
    expect(histories(await findingsOf(hosts))).toEqual(
      Object.fromEntries(hosts.map((h) => [h, [OPENED_AND_RESOLVED_ONCE]])),
    );
  });

  it("fan live updates out across processes: a page on B sees samples and findings from A", async () => {
    const host = "mc-live";
    const startMs = Math.floor(Date.now() / 1000) * 1000 - 5 * 60_000;
    const token = await registerHost(host, [urlA]);
    // Two quiet samples, then 90 s of overflow (10/s: a finding opens).
    const drops = (t: number) => OVERFLOWS_PER_S * Math.max(0, t - 2);
    const send = (from: number, to: number) =>
      post(urlA, "/agent/observations", token, batch(host, from, to, startMs, drops));
    const at = (t: number) => new Date(startMs + t * 1000).toISOString();
    const updateAt = (t: number) => (e: LiveEvent) =>
      e.event === "update" && (e.data as { sampledAt: string | null }).sampledAt === at(t);
    await send(0, 1);
    const { token: apiToken } = await api.tokens.create({
      name: "multi-console live page",
      scopes: ["read"],
    });
    const stream = await openLiveStream(urlB, host, apiToken);
    streams.push(stream);
    // The page's first update (on connect) shows the stored sample; then B listens.
    await stream.until("the first update on B", updateAt(0), 30_000);

    // Samples: ingested through A, B's page gets the new point.
    await send(1, 2);
    const samples = await stream.until("B's update for the sample ingested through A", updateAt(1), 30_000);
    const data = samples.data as { full: boolean; namespaces: { points: { at: string }[] }[] };
    expect(data.full).toBe(false);
    expect(data.namespaces.flatMap((n) => n.points.map((p) => p.at))).toContain(at(1));

    // Findings: A opens one after the overflow; B's page gets one more update for it (the page
    // reads the host's findings on every update) besides the one for the samples.
    await send(2, 92);
    const newest = await stream.until("B's update for the overflow's samples", updateAt(91), 30_000);
    await untilFindings([host], "open", 60_000);
    await stream.until("B's update for the finding A opened", (e) => e !== newest && updateAt(91)(e), 30_000);
  });

  it("share ingest: agents fail over when A is killed, every sample is stored once, findings open and resolve once", async () => {
    const clock: FleetClock = {
      startMs: Math.floor(Date.now() / 1000) * 1000 - HISTORY_START_MS,
      overflowing: true,
    };
    // Hosts 0-3 through the balancer (one URL); 4-7 given both consoles, two of them A first.
    const plan: { urls: string[]; overflows: boolean }[] = [
      { urls: [proxy!.url], overflows: true },
      { urls: [proxy!.url], overflows: false },
      { urls: [proxy!.url], overflows: true },
      { urls: [proxy!.url], overflows: false },
      { urls: [urlA, urlB], overflows: true },
      { urls: [urlA, urlB], overflows: false },
      { urls: [urlB, urlA], overflows: true },
      { urls: [urlB, urlA], overflows: false },
    ];
    for (const [i, p] of plan.entries()) {
      const hostname = `mc-host-${i}`;
      const { token } = await api.hostTokens.create({ hostname });
      agents.push(new SimulatedAgent(hostname, token, p.urls, p.overflows, clock));
    }
    const overflowing = agents.filter((a) => a.overflows).map((a) => a.hostname);
    const all = agents.map((a) => a.hostname);
    for (const a of agents) a.start(TICK_MS);

    // Both consoles at work: each overflowing host's finding open, every agent delivering, the
    // balancer sending to both.
    await untilFindings(overflowing, "open", 120_000);
    await waitFor(
      "every agent to deliver, and the balancer to use both consoles",
      () =>
        agents.every((a) => a.delivered.length > 0) &&
        (proxy!.answered.get(urlA) ?? 0) > 0 &&
        (proxy!.answered.get(urlB) ?? 0) > 0,
      { timeoutMs: 60_000 },
    );

    // Kill A: no shutdown, connections cut, whatever it held in memory gone.
    const killedAt = agents.map((a) => a.offered.length);
    const exited = new Promise((r) => consoleA!.child.once("exit", r));
    process.kill(-consoleA!.child.pid!, "SIGKILL");
    await exited;

    // Every agent delivers samples it took after the kill: the ones on A moved to B.
    await waitFor(
      "every agent to deliver a sample taken after A was killed",
      () => agents.every((a, i) => a.delivered.some((at) => at >= a.offered[killedAt[i]!]!)),
      {
        timeoutMs: 90_000,
        detail: () => agents.map((a) => `${a.hostname}: ${a.logs.slice(-3).join(" | ")}`).join("\n"),
      },
    );
    // The overflow stops; each finding resolves once the evaluation window is clear.
    clock.overflowing = false;
    await untilFindings(overflowing, "resolved", 120_000);
    await Promise.all(agents.map((a) => a.stop(TICK_MS, 60_000)));
    await evaluationsSettled();
    const newest = Math.max(...agents.map((a) => a.offered.length));
    expect(clock.startMs + newest * 1000).toBeLessThan(Date.now()); // every sample dated in the past

    // Agents failed over: those given A first now send to B, and said why; the balancer skipped A.
    for (const a of agents) {
      expect([a.hostname, a.link.buffer.size]).toEqual([a.hostname, 0]);
      expect([a.hostname, a.link.samplesDropped]).toEqual([
        a.hostname,
        Object.fromEntries(Object.keys(a.link.samplesDropped).map((k) => [k, 0])),
      ]);
      if (a.consoleUrls.length === 1) continue;
      expect([a.hostname, a.link.consoleUrl]).toEqual([a.hostname, urlB]);
      const movedOff = a.logs.some(
        (l) => l.startsWith(`console ${urlA} unreachable (`) && l.includes(`; trying ${urlB};`),
      );
      expect([a.hostname, movedOff]).toEqual([a.hostname, a.consoleUrls[0] === urlA]);
    }
    expect(proxy!.refused.get(urlA) ?? 0).toBeGreaterThan(0);
    expect(proxy!.refused.get(urlB) ?? 0).toBe(0);

    // Nothing lost, nothing twice: each host's stored samples are exactly the ones it took.
    for (const a of agents) {
      const host = await db.host.findFirstOrThrow({ where: { name: a.hostname }, select: { id: true } });
      const stored = await samplesBetween(db, host.id, new Date(clock.startMs));
      expect([a.hostname, stored.map((s) => s.sampledAt.toISOString())]).toEqual([a.hostname, a.offered]);
      expect([a.hostname, await countSamples(db, host.id)]).toEqual([a.hostname, a.offered.length]);
    }

    // Findings: each overflowing host's opened once and resolved once; the others have none.
    expect(histories(await findingsOf(all))).toEqual(
      Object.fromEntries(all.map((h) => [h, overflowing.includes(h) ? [OPENED_AND_RESOLVED_ONCE] : []])),
    );

    const perConsole = (m: Map<string, number>) => `A ${m.get(urlA) ?? 0}, B ${m.get(urlB) ?? 0}`;
    console.log(
      `[two consoles] ${agents.length} agents, ${agents.reduce((n, a) => n + a.offered.length, 0)} samples; ` +
        `balancer: answered ${perConsole(proxy!.answered)}, refused ${perConsole(proxy!.refused)}`,
    );
  }, 300_000);
});
