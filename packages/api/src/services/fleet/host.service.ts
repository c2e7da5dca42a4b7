import {
  AgentSamplesDropped,
  netnsKey,
  severityRank,
  TideError,
  versionSkew,
  type FindingSeverity,
  type HostRole,
  type Observation,
} from "@tide/contracts";
import {
  countSamples,
  hostSummarySelect,
  latestSample,
  samplesBetween,
  type Db,
  type HostSummaryRow,
} from "@tide/db";
import {
  HOST_STALE_AFTER_MS,
  type HostDetail,
  type HostSummary,
  type PmtuTargetSpec,
  type Series,
} from "../../schemas/hosts.schema";
import { TIDE_VERSION } from "../../version";

/** Open and acknowledged findings count against a host's health; resolved ones do not. */
const LIVE = { in: ["open", "acknowledged"] as ("open" | "acknowledged")[] };

function toSummary(h: HostSummaryRow, live: { severity: FindingSeverity }[], now: number): HostSummary {
  let worst: FindingSeverity | null = null;
  for (const f of live)
    if (worst === null || severityRank[f.severity] > severityRank[worst]) worst = f.severity;
  return {
    id: h.id,
    name: h.name,
    roles: h.roles as HostRole[],
    agentVersion: h.agentVersion,
    versionSkew: h.agentVersion === null ? null : versionSkew(TIDE_VERSION, h.agentVersion).reason,
    kernelRelease: h.kernelRelease,
    lastSeenAt: h.lastSeenAt?.toISOString() ?? null,
    desiredRevision: h.desiredRevision,
    health: {
      worstSeverity: worst,
      openFindings: live.length,
      stale: h.lastSeenAt === null || now - h.lastSeenAt.getTime() > HOST_STALE_AFTER_MS,
    },
  };
}

/** A host by id (host_…) or name. */
export async function findHost(db: Db, ref: string) {
  const host = await db.host.findFirst({
    where: ref.startsWith("host_") ? { OR: [{ id: ref }, { name: ref }] } : { name: ref },
    select: { ...hostSummarySelect, probes: true, dataPlane: true, pmtuTargets: true, samplesDropped: true },
  });
  if (!host) throw new TideError("not_found", `Host ${ref} does not exist.`);
  return host;
}

export async function listHosts(db: Db, now = Date.now()): Promise<HostSummary[]> {
  const [hosts, live] = await Promise.all([
    db.host.findMany({ select: hostSummarySelect, orderBy: { name: "asc" } }),
    db.finding.findMany({ where: { status: LIVE }, select: { hostId: true, severity: true } }),
  ]);
  return hosts.map((h) =>
    toSummary(
      h,
      live.filter((f) => f.hostId === h.id),
      now,
    ),
  );
}

export async function getHost(db: Db, ref: string, now = Date.now()): Promise<HostDetail> {
  const host = await findHost(db, ref);
  const [live, latest, stored] = await Promise.all([
    db.finding.findMany({ where: { hostId: host.id, status: LIVE }, select: { severity: true } }),
    latestSample(db, host.id),
    countSamples(db, host.id),
  ]);
  const obs = latest?.payload as unknown as Observation | undefined;
  return {
    ...toSummary(host, live, now),
    probes: host.probes as unknown[],
    dataPlane: host.dataPlane as unknown[],
    // A row an older console or a damaged write left behind shows as "not reported", never a 500.
    samplesDropped: AgentSamplesDropped.safeParse(host.samplesDropped).data ?? null,
    pmtuTargets: host.pmtuTargets as PmtuTargetSpec[],
    bccTools: obs?.bcc?.tools ?? [],
    latestSample:
      latest && obs
        ? {
            sampledAt: latest.sampledAt.toISOString(),
            samplesStored: stored,
            namespaces: obs.namespaces.map((n) => ({
              netns: n.netns,
              key: netnsKey(n.netns),
              pids: n.pids.length,
              counters: Object.keys(n.counters).length,
              sockstat: n.sockstat
                ? { tcpInuse: n.sockstat.tcpInuse, tcpOrphan: n.sockstat.tcpOrphan, tcpTw: n.sockstat.tcpTw }
                : null,
              somaxconn: n.sysctls.somaxconn,
              listeners: n.listeners.length,
              listenPorts: n.listenPorts.length,
            })),
          }
        : null,
  };
}

/** Default look-back of a series without `since`, in ms. */
const SERIES_DEFAULT_MS = 5 * 60_000;

/**
 * Counter values of one namespace over time, with per-second rates between consecutive points.
 * A counter that went down (reset) or is missing on either side has no rate at that point.
 */
export async function counterSeries(
  db: Db,
  input: { hostId: string; namespace: string; counters: string; since?: string | undefined },
): Promise<Series> {
  const host = await findHost(db, input.hostId);
  const names = [
    ...new Set(
      input.counters
        .split(",")
        .map((c) => c.trim())
        .filter(Boolean),
    ),
  ];
  if (names.length === 0 || names.length > 32) {
    throw new TideError("bad_request", "Ask for 1 to 32 counters, comma-separated.");
  }
  const bad = names.find((n) => !/^[A-Za-z][A-Za-z0-9_]{0,63}$/.test(n));
  if (bad) throw new TideError("bad_request", `"${bad}" is not a kernel counter name.`);
  const newest = (await latestSample(db, host.id))?.sampledAt.getTime() ?? Date.now();
  const since = input.since ? new Date(input.since) : new Date(newest - SERIES_DEFAULT_MS);
  const rows = await samplesBetween(db, host.id, since);
  const points: Series["points"] = [];
  let prev: { at: number; values: Record<string, number | null> } | null = null;
  for (const row of rows) {
    const obs = row.payload as unknown as Observation;
    const ns = obs.namespaces.find((n) => netnsKey(n.netns) === input.namespace);
    if (!ns) {
      prev = null;
      continue;
    }
    const at = row.sampledAt.getTime();
    const values: Record<string, number | null> = {};
    const rates: Record<string, number | null> = {};
    for (const name of names) {
      const v = ns.counters[name] ?? null;
      values[name] = v;
      const p = prev?.values[name] ?? null;
      const dt = prev ? (at - prev.at) / 1000 : 0;
      rates[name] = v !== null && p !== null && dt > 0 && v >= p ? (v - p) / dt : null;
    }
    points.push({ at: row.sampledAt.toISOString(), values, rates });
    prev = { at, values };
  }
  return { hostId: host.id, namespace: input.namespace, counters: names, points };
}
