import { z } from "zod";
import {
  KERNEL_FINDING_KINDS,
  kernelKindIncidents,
  kernelKindsDescription,
  LAST_KERNEL_INCIDENT,
} from "./incidents";
import { HostId, NetnsRef } from "./observations";

/**
 * Findings: what packages/diagnostics derives from a window of observations, one kind per kernel
 * problem Tide knows (packages/diagnostics/docs/kernel-signals.md). The console stores them with history,
 * tracks open -> acknowledged -> resolved by id, and shows the explanation and remedy to operators.
 */

/** Prefix of finding ids (dub habit; ids.ts has no finding kind yet). */
export const FINDING_ID_PREFIX = "fnd";

/**
 * What diagnostics finds in a host's kernel counters (packages/diagnostics, one rule per incident):
 * every kind of every incident in the registry (incidents.ts).
 */
export const KernelFindingKind = z.enum(KERNEL_FINDING_KINDS).describe(kernelKindsDescription());
export type KernelFindingKind = z.infer<typeof KernelFindingKind>;

/**
 * What the console finds in the directors' health checks of proxies (services/health/health-findings.ts),
 * not in kernel counters: opened and resolved as proxies' table health changes.
 */
export const HealthFindingKind = z
  .enum(["proxy_unhealthy", "pool_fail_open"])
  .describe(
    "proxy_unhealthy: the directors' checks of a proxy fail (which checks, from which directors); " +
      "pool_fail_open: every proxy of a pool fails its checks, so its table serves them all as if healthy",
  );
export type HealthFindingKind = z.infer<typeof HealthFindingKind>;

export const FindingKind = z
  .enum([...KernelFindingKind.options, ...HealthFindingKind.options])
  .describe(`${KernelFindingKind.description ?? ""}; ${HealthFindingKind.description ?? ""}`);
export type FindingKind = z.infer<typeof FindingKind>;

/** Incident number of findings that are not kernel incidents (proxy health). */
export const FLEET_HEALTH_INCIDENT = 0;

/** Which incident (kernel-signals.md, incidents.ts) each kind belongs to; 0 for health findings. */
export const findingIncident: Readonly<Record<FindingKind, number>> = {
  ...kernelKindIncidents(),
  proxy_unhealthy: FLEET_HEALTH_INCIDENT,
  pool_fail_open: FLEET_HEALTH_INCIDENT,
};

export const FindingSeverity = z
  .enum(["info", "warn", "critical"])
  .describe("info: worth knowing, no harm yet; warn: degrading service; critical: losing traffic now");
export type FindingSeverity = z.infer<typeof FindingSeverity>;

/** Order for sorting and comparisons (higher is worse). */
export const severityRank = { info: 0, warn: 1, critical: 2 } as const satisfies Record<
  FindingSeverity,
  number
>;

export const FindingStatus = z
  .enum(["open", "acknowledged", "resolved"])
  .describe("open: seen in the last evaluation; acknowledged: an operator took it; resolved: gone");
export type FindingStatus = z.infer<typeof FindingStatus>;

export const FindingId = z
  .string()
  .regex(/^fnd_[0-9a-z]{13}$/, "must be a finding id (fnd_…)")
  .describe('finding id, prefixed "fnd_": a hash of the fingerprint, so the same problem keeps its id');
export type FindingId = z.infer<typeof FindingId>;

export const FindingProcess = z
  .strictObject({
    pid: z.int().min(1).describe("Process id when the finding was made (not part of the fingerprint)"),
    comm: z.string().min(1).max(15).describe("Process command name (part of the fingerprint)"),
  })
  .describe("The process concerned");

export const FindingSubject = z
  .strictObject({
    hostId: HostId,
    netns: NetnsRef.nullable().describe("Network namespace concerned, or null for host-wide subjects"),
    port: z.int().min(0).max(65535).nullable().describe("TCP port concerned, or null"),
    process: FindingProcess.nullable().describe("Process concerned, or null"),
    cpu: z.int().min(0).nullable().describe("CPU concerned, or null"),
    target: z.string().min(1).max(255).nullable().describe("Path check target concerned, or null"),
  })
  .describe("What the finding is about; null fields do not apply to its kind");
export type FindingSubject = z.infer<typeof FindingSubject>;

export const EvidenceUnit = z
  .enum(["count", "per_second", "microseconds", "bytes", "sockets", "ports", "ratio", "mtu_bytes"])
  .describe("Unit of an evidence value");
export type EvidenceUnit = z.infer<typeof EvidenceUnit>;

export const Evidence = z
  .strictObject({
    metric: z
      .string()
      .min(1)
      .max(128)
      .describe("Where the value comes from: a kernel counter (TcpExtListenOverflows), sysctl or probe"),
    value: z.number().describe("The value the rule compared (a rate, a quantile, a count...)"),
    unit: EvidenceUnit,
    ratePerSecond: z
      .number()
      .nullable()
      .describe("Average rate over the window, per second, for counters; null for gauges"),
    threshold: z
      .strictObject({
        warn: z.number().nullable().describe("Value above which the finding is warn, or null"),
        critical: z.number().nullable().describe("Value above which the finding is critical, or null"),
      })
      .nullable()
      .describe("Thresholds the value was compared with, or null for context-only evidence"),
    window: z
      .strictObject({
        from: z.iso.datetime().describe("First sample used (UTC)"),
        to: z.iso.datetime().describe("Last sample used (UTC)"),
        seconds: z.number().nonnegative().describe("Seconds the value covers"),
      })
      .nullable()
      .describe("Samples the value was computed from, or null for a single reading"),
  })
  .describe("One measured fact behind a finding");
export type Evidence = z.infer<typeof Evidence>;

export const RemedyScope = z
  .enum(["namespace", "host", "application", "network"])
  .describe(
    "namespace: a sysctl of one network namespace; host: host-wide setting; application: code or " +
      "configuration of the service; network: routers, firewalls, links",
  );

export const RemedyStep = z
  .strictObject({
    scope: RemedyScope,
    action: z.string().min(1).max(1000).describe("What to change and why, in plain language"),
    command: z
      .string()
      .max(1000)
      .nullable()
      .describe("Exact command to run (e.g. ip netns exec web sysctl -w net.core.somaxconn=4096), or null"),
  })
  .describe("One concrete change");
export type RemedyStep = z.infer<typeof RemedyStep>;

export const Remedy = z
  .strictObject({
    summary: z.string().min(1).max(500).describe("The fix in one sentence"),
    steps: z.array(RemedyStep).min(1).describe("Concrete changes, most effective first"),
  })
  .describe("How to make the finding go away");
export type Remedy = z.infer<typeof Remedy>;

export const Finding = z
  .strictObject({
    id: FindingId,
    fingerprint: z
      .string()
      .min(1)
      .max(600)
      .describe("Canonical key of kind + subject (see findingFingerprint); equal problems, equal keys"),
    kind: FindingKind,
    incident: z
      .int()
      .min(0)
      .max(LAST_KERNEL_INCIDENT)
      .describe(
        "Seed incident number in kernel-signals.md; 0 for proxy health findings (not a kernel incident)",
      ),
    severity: FindingSeverity,
    status: FindingStatus,
    title: z.string().min(1).max(200).describe("One line for lists, e.g. 'Accept queue overflow on :8080'"),
    subject: FindingSubject,
    evidence: z.array(Evidence).min(1).describe("Measured facts, the deciding one first"),
    explanation: z.string().min(1).max(4000).describe("What is happening and why, in plain language"),
    remedy: Remedy,
    firstSeenAt: z.iso.datetime().describe("First evaluation that found it (UTC)"),
    lastSeenAt: z.iso.datetime().describe("Latest evaluation that found it (UTC)"),
    resolvedAt: z.iso.datetime().nullable().describe("When it was found resolved, or null"),
  })
  .describe("A problem found on a host, with evidence, explanation and remedy")
  .meta({ id: "Finding" });
export type Finding = z.infer<typeof Finding>;

// ---------------------------------------------------------------------------------------------------
// Fingerprints

/**
 * How a namespace is named in fingerprints: "root", its /run/netns name, or its inode. A named
 * namespace that is recreated keeps its findings; an unnamed one (a container) gets new ones.
 */
export function netnsKey(netns: NetnsRef): string {
  if (netns.root) return "root";
  return netns.name !== null ? `name:${netns.name}` : `inode:${netns.inode}`;
}

/**
 * Canonical fingerprint of a problem: kind and the subject fields that identify it. The pid is left
 * out (a restarted service has the same problem), the comm is kept.
 */
export function findingFingerprint(kind: FindingKind, subject: FindingSubject): string {
  const parts: string[] = [kind, `host=${subject.hostId}`];
  if (subject.netns !== null) parts.push(`netns=${netnsKey(subject.netns)}`);
  if (subject.port !== null) parts.push(`port=${subject.port}`);
  if (subject.process !== null) parts.push(`comm=${subject.process.comm}`);
  if (subject.cpu !== null) parts.push(`cpu=${subject.cpu}`);
  if (subject.target !== null) parts.push(`target=${subject.target}`);
  return parts.join("|");
}

const ALPHABET = "0123456789abcdefghjkmnpqrstvwxyz"; // Crockford base32, lower case (as ids.ts)
const FNV64_OFFSET = 0xcbf29ce484222325n;
const FNV64_PRIME = 0x100000001b3n;
const U64 = (1n << 64n) - 1n;

/** Finding id of a fingerprint: "fnd_" + FNV-1a 64 of its UTF-8 bytes in 13 base32 digits. */
export function findingIdOf(fingerprint: string): FindingId {
  let h = FNV64_OFFSET;
  for (const b of new TextEncoder().encode(fingerprint)) {
    h ^= BigInt(b);
    h = (h * FNV64_PRIME) & U64;
  }
  let out = "";
  for (let i = 0; i < 13; i++) {
    out = ALPHABET[Number(h & 31n)]! + out;
    h >>= 5n;
  }
  return `${FINDING_ID_PREFIX}_${out}`;
}
