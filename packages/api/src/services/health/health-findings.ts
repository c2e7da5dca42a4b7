import {
  Finding,
  findingFingerprint,
  findingIdOf,
  findingIncident,
  HealthFindingKind,
  REDIRECT_CONTROL_SOCKET_PATH,
  REDIRECT_DEFAULT_GUE_PORT,
  type Evidence,
  type HealthCheckOutcome,
  type PoolHealthCheck,
  type RemedyStep,
} from "@tide/contracts";
import type { Prisma } from "@tide/db";
import type { DirectorView } from "./proxy-health.plan";
import { OBSERVATIONS_CHANNEL } from "../../live/channels";

/**
 * Findings from the directors' health checks (issue 12): a proxy the checks took out of rotation
 * (`proxy_unhealthy`, warn, on the proxy's host) and a pool that fails open (`pool_fail_open`,
 * critical, on every host of a director serving it). The console opens them when health changes
 * and resolves them when it changes back; diagnostics never touches them (host-evaluation.ts
 * reads kernel kinds only). A proxy whose host has no agent gets no finding: its health, reason
 * and every director's view are on the pool page.
 */

type Tx = Prisma.TransactionClient;

/** Who opens and resolves them (finding events' `by`). */
const BY = "health checks";

export interface HealthFindingsInput {
  pool: { id: string; name: string; check: PoolHealthCheck };
  /** Every proxy of the pool after this change, with the serving directors' fresh views. */
  proxies: {
    id: string;
    address: string;
    hostname: string;
    healthy: boolean;
    pinned: boolean | null;
    views: readonly DirectorView[];
  }[];
  /** Host names of the directors serving the pool. */
  directors: readonly string[];
  failOpen: boolean;
  now: Date;
}

/** The subject target of a pool's health findings ends with "(<pool id>)": how they are found again. */
const poolTag = (poolId: string) => `(${poolId})`;

function subject(hostname: string, target: string) {
  return { hostId: hostname, netns: null, port: null, process: null, cpu: null, target };
}

function failingBy(views: readonly DirectorView[], kind: HealthCheckOutcome["kind"]) {
  return views.filter((v) => v.up === false && v.checks.some((c) => c.kind === kind && !c.ok));
}

/** The finding of a proxy the checks took out of rotation (without its id and timestamps). */
export function proxyUnhealthyFinding(
  input: HealthFindingsInput,
  proxy: HealthFindingsInput["proxies"][number],
): Omit<Finding, "id" | "status" | "firstSeenAt" | "lastSeenAt" | "resolvedAt"> {
  const down = proxy.views.filter((v) => v.up === false);
  const gueFails = failingBy(proxy.views, "gue");
  const service = input.pool.check.service;
  const serviceKind = service?.kind ?? null;
  const serviceFails = serviceKind === null ? [] : failingBy(proxy.views, serviceKind);
  const directors = down.map((v) => v.director).join(", ");
  const evidence: Evidence[] = [];
  const count = (metric: string, value: number): Evidence => ({
    metric,
    value,
    unit: "count",
    ratePerSecond: null,
    threshold: null,
    window: null,
  });
  if (input.pool.check.gue) evidence.push(count("directors failing the gue check", gueFails.length));
  if (serviceKind !== null)
    evidence.push(count(`directors failing the ${serviceKind} check`, serviceFails.length));
  if (evidence.length === 0) evidence.push(count("directors reporting down", down.length));
  // The deciding fact first.
  evidence.sort((a, b) => b.value - a.value);
  const details = down
    .flatMap((v) => v.checks.filter((c) => !c.ok).map((c) => `${v.director} ${c.kind}: ${c.detail}`))
    .join("; ");
  const gueOnly = gueFails.length > 0 && serviceKind !== null && serviceFails.length === 0;
  const steps: RemedyStep[] = [];
  let title: string;
  let explanation: string;
  if (gueOnly) {
    title = `GUE path to ${proxy.hostname} broken: ${serviceKind?.toUpperCase()} answers, GUE does not`;
    explanation =
      `The directors (${directors}) reach ${proxy.hostname} (${proxy.address}) directly — its ${serviceKind} ` +
      `check passes — but not through GUE, the way client packets arrive: the GUE probe (an ICMP echo inside ` +
      `GUE on UDP ${REDIRECT_DEFAULT_GUE_PORT}) gets no answer. tide-redirect on the proxy decapsulates GUE; when it is stopped or ` +
      `detached, or UDP to the GUE port is filtered, every client packet sent to this proxy is lost. The ` +
      `proxy is out of rotation until the path works again. Checks: ${details}.`;
    steps.push(
      {
        scope: "host",
        action: `Check that tide-redirect runs and is attached on ${proxy.hostname}, and restart it if not.`,
        command: `echo '{"cmd":"status"}' | socat - UNIX-CONNECT:${REDIRECT_CONTROL_SOCKET_PATH}`,
      },
      {
        scope: "network",
        action: `Check that UDP to port ${REDIRECT_DEFAULT_GUE_PORT} reaches ${proxy.address} from the directors (firewalls, ACLs).`,
        command: null,
      },
    );
  } else {
    title = `Proxy ${proxy.hostname} fails its health checks`;
    explanation =
      `The directors (${directors}) find ${proxy.hostname} (${proxy.address}) failing its checks, so it is out of ` +
      `rotation: new connections go to the other proxies, established ones keep their second chance. ` +
      `Checks: ${details}.`;
    if (serviceKind !== null && serviceFails.length > 0)
      steps.push({
        scope: "application",
        action:
          service?.kind === "http"
            ? `The service on ${proxy.address}:${service.port} must answer GET ${service.path} with ${service.expectStatus}; check it on ${proxy.hostname}.`
            : `The service on ${proxy.address}:${service?.port ?? "?"} must accept TCP connections; check it on ${proxy.hostname}.`,
        command: null,
      });
    if (gueFails.length > 0)
      steps.push({
        scope: "host",
        action: `Check that tide-redirect runs and is attached on ${proxy.hostname}.`,
        command: `echo '{"cmd":"status"}' | socat - UNIX-CONNECT:${REDIRECT_CONTROL_SOCKET_PATH}`,
      });
    if (steps.length === 0)
      steps.push({ scope: "host", action: `Check ${proxy.hostname} and its network.`, command: null });
  }
  const kind: HealthFindingKind = "proxy_unhealthy";
  const s = subject(
    proxy.hostname,
    `proxy ${proxy.address} of pool ${input.pool.name} ${poolTag(input.pool.id)}`,
  );
  return {
    fingerprint: findingFingerprint(kind, s),
    kind,
    incident: findingIncident[kind],
    severity: "warn",
    title,
    subject: s,
    evidence,
    explanation: explanation.slice(0, 4000),
    remedy: {
      summary: gueOnly
        ? `Restore the GUE path to ${proxy.hostname} (tide-redirect, UDP ${REDIRECT_DEFAULT_GUE_PORT}).`
        : `Make ${proxy.hostname} pass its checks again; it returns to rotation by itself.`,
      steps,
    },
  };
}

/** The finding of a pool that fails open, on one director's host. */
export function poolFailOpenFinding(
  input: HealthFindingsInput,
  directorHost: string,
): Omit<Finding, "id" | "status" | "firstSeenAt" | "lastSeenAt" | "resolvedAt"> {
  const kind: HealthFindingKind = "pool_fail_open";
  const s = subject(directorHost, `pool ${input.pool.name} ${poolTag(input.pool.id)}`);
  const n = input.proxies.length;
  return {
    fingerprint: findingFingerprint(kind, s),
    kind,
    incident: findingIncident[kind],
    severity: "critical",
    title: `Pool ${input.pool.name} fails open: all ${n} proxies fail their health checks`,
    subject: s,
    evidence: [
      {
        metric: "proxies in rotation failing their checks",
        value: input.proxies.filter((p) => !p.healthy).length,
        unit: "count",
        ratePerSecond: null,
        threshold: null,
        window: null,
      },
    ],
    explanation:
      `Every proxy of pool ${input.pool.name} fails its health checks. So that health alone never empties a ` +
      `pool, its table is built as if all were healthy (GLB's fail open): traffic still reaches proxies that ` +
      `may be dead. When every proxy fails at once the cause is usually the check (a wrong port or path) or ` +
      `the directors' path to the proxies, not every proxy.`,
    remedy: {
      summary: "Find why every check fails: the check's settings, the directors' path, or the proxies.",
      steps: [
        {
          scope: "application",
          action: `Compare the pool's check (${input.pool.check.service?.kind ?? "gue only"}) with what the proxies serve; fix it with PUT /api/v1/pools/${input.pool.id}/health-check.`,
          command: null,
        },
        {
          scope: "network",
          action: `Check the directors' route to the proxies and that UDP ${REDIRECT_DEFAULT_GUE_PORT} reaches them.`,
          command: null,
        },
      ],
    },
  };
}

/**
 * Make the pool's open health findings what its health says now: open the missing ones, refresh
 * the ones that changed, resolve the ones that no longer hold. Findings go on hosts that exist (a
 * proxy or director host without an agent has none).
 */
export async function syncHealthFindings(tx: Tx, input: HealthFindingsInput): Promise<void> {
  const names = [...new Set([...input.proxies.map((p) => p.hostname), ...input.directors])];
  const hosts = new Map(
    (await tx.host.findMany({ where: { name: { in: names } }, select: { id: true, name: true } })).map(
      (h) => [h.name, h.id],
    ),
  );
  const wanted = new Map<string, { hostId: string; f: ReturnType<typeof proxyUnhealthyFinding> }>();
  for (const p of input.proxies) {
    const hostId = hosts.get(p.hostname);
    if (hostId === undefined || p.healthy || p.pinned !== null || !p.views.some((v) => v.up === false))
      continue;
    const f = proxyUnhealthyFinding(input, p);
    wanted.set(f.fingerprint, { hostId, f });
  }
  if (input.failOpen)
    for (const d of input.directors) {
      const hostId = hosts.get(d);
      if (hostId === undefined) continue;
      const f = poolFailOpenFinding(input, d);
      wanted.set(f.fingerprint, { hostId, f });
    }
  const existing = await tx.finding.findMany({
    where: {
      kind: { in: HealthFindingKind.options },
      subject: { path: ["target"], string_ends_with: poolTag(input.pool.id) },
    },
    select: { id: true, fingerprint: true, status: true, hostId: true },
  });
  const at = input.now;
  const touched = new Set<string>();
  const events: Prisma.FindingEventCreateManyInput[] = [];
  for (const e of existing) {
    if (wanted.has(e.fingerprint) || e.status === "resolved") continue;
    await tx.finding.update({
      where: { id: e.id },
      data: { status: "resolved", resolvedAt: at, acknowledgedBy: null, acknowledgedAt: null },
    });
    events.push({ findingId: e.id, type: "resolved", at, by: BY, detail: "cleared" });
    touched.add(e.hostId);
  }
  const byFingerprint = new Map(existing.map((e) => [e.fingerprint, e]));
  for (const { hostId, f } of wanted.values()) {
    const id = findingIdOf(f.fingerprint);
    const content = {
      kind: f.kind,
      incident: f.incident,
      severity: f.severity,
      title: f.title,
      subject: f.subject as Prisma.InputJsonValue,
      evidence: f.evidence as Prisma.InputJsonValue,
      explanation: f.explanation,
      remedy: f.remedy as Prisma.InputJsonValue,
      lastSeenAt: at,
    };
    // The contract is the last line: a finding that does not match it is not stored.
    const check = Finding.safeParse({
      ...f,
      id,
      status: "open",
      firstSeenAt: at.toISOString(),
      lastSeenAt: at.toISOString(),
      resolvedAt: null,
    });
    if (!check.success) {
      console.error(`health finding ${id} not stored: ${check.error.message}`);
      continue;
    }
    const e = byFingerprint.get(f.fingerprint);
    if (e === undefined) {
      await tx.finding.create({
        data: { id, fingerprint: f.fingerprint, hostId, status: "open", firstSeenAt: at, ...content },
      });
      events.push({ findingId: id, type: "opened", at, by: BY, toSeverity: f.severity });
    } else if (e.status === "resolved") {
      await tx.finding.update({
        where: { id: e.id },
        data: { status: "open", resolvedAt: null, ...content },
      });
      events.push({ findingId: e.id, type: "reopened", at, by: BY, toSeverity: f.severity });
    } else {
      await tx.finding.update({ where: { id: e.id }, data: content });
    }
    touched.add(hostId);
  }
  if (events.length > 0) await tx.findingEvent.createMany({ data: events });
  // Host pages re-read their findings (delivered at commit).
  for (const hostId of touched)
    await tx.$executeRaw`SELECT pg_notify(${OBSERVATIONS_CHANNEL}, ${`${hostId} findings`})`;
}
