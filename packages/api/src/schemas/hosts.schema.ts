import { AgentSamplesDropped, safeText } from "@tide/contracts";
import {
  BccTool,
  FindingSeverity,
  HostId,
  HostRecordId,
  HostRole,
  HostTokenId,
  NetnsRef,
} from "@tide/contracts";
import { z } from "zod";

/** API shapes of hosts, host tokens and observation series (console and REST). */

/** A host is stale when its agent has not been heard from for this long, in ms. */
export const HOST_STALE_AFTER_MS = 30_000;

export const HostTokenSummary = z
  .object({
    id: HostTokenId,
    hostId: HostRecordId,
    hostname: HostId,
    prefix: z.string().describe("First characters of the token (tide_host_…), to recognise it"),
    createdBy: z.string().describe("Email of the admin who created it"),
    createdAt: z.iso.datetime(),
    lastUsedAt: z.iso.datetime().nullable(),
    revokedAt: z.iso.datetime().nullable(),
  })
  .describe("A host token, without its secret");
export type HostTokenSummary = z.infer<typeof HostTokenSummary>;

export const HostRef = safeText().min(1).max(253).describe("Host id (host_…) or host name (lb-fra-03)");

export const HostHealth = z
  .object({
    worstSeverity: FindingSeverity.nullable().describe("Worst severity among open/acknowledged findings"),
    openFindings: z.int().min(0).describe("Open and acknowledged findings"),
    stale: z.boolean().describe("No word from the agent for more than 30 s (or never)"),
  })
  .describe("Health of a host at a glance");

export const HostSummary = z
  .object({
    id: HostRecordId,
    name: HostId,
    roles: z.array(HostRole),
    agentVersion: z.string().nullable(),
    versionSkew: z
      .string()
      .nullable()
      .describe(
        "Why this agent's version cannot work with the console's (more than one minor version apart); null when it can",
      ),
    kernelRelease: z.string().nullable(),
    lastSeenAt: z.iso.datetime().nullable().describe("Last contact from the agent (console clock)"),
    desiredRevision: z.int().min(0),
    health: HostHealth,
  })
  .describe("A host running tide-agent");
export type HostSummary = z.infer<typeof HostSummary>;

export const NamespaceSummary = z
  .object({
    netns: NetnsRef,
    key: z.string().describe("Namespace key for series queries: root, name:<name> or inode:<n>"),
    pids: z.int().min(0).describe("Processes listed for the namespace"),
    counters: z.int().min(0).describe("Kernel counters reported"),
    sockstat: z
      .object({ tcpInuse: z.number(), tcpOrphan: z.number(), tcpTw: z.number() })
      .nullable()
      .describe("TCP sockets in use, orphaned, in TIME-WAIT"),
    somaxconn: z.int().nullable().describe("net.core.somaxconn of the namespace"),
    listeners: z.int().min(0).describe("LISTEN sockets reported"),
    listenPorts: z.int().min(0).describe("Ports with LISTEN sockets"),
  })
  .describe("One namespace of the latest sample, summarised");

/** The agent accepts the same characters (apps/agent/src/pmtu/prober.ts validTarget): never an option. */
export const PmtuTargetSpec = z
  .object({
    target: z
      .string()
      .min(1)
      .max(253)
      .regex(/^[A-Za-z0-9][A-Za-z0-9.:_-]*$/, "must be an IP address or a host name")
      .describe("Address or host name the agent checks (tracepath, ping -M do)"),
    sizes: z
      .array(z.int().min(68).max(9000))
      .max(8)
      .default([])
      .describe("ping -M do payload sizes in bytes, besides tracepath (empty: tracepath only)"),
  })
  .describe("A path MTU check target");
export type PmtuTargetSpec = z.infer<typeof PmtuTargetSpec>;

export const PmtuTargetsInput = z.object({
  hostId: HostRef,
  targets: z
    .array(PmtuTargetSpec)
    .max(32)
    .refine((a) => new Set(a.map((t) => t.target)).size === a.length, "each target only once")
    .describe("The whole list (replaces the previous one; empty stops the console's checks)"),
  reason: safeText().max(500).optional().describe("Why (kept in the audit log)"),
});

export const HostDetail = HostSummary.extend({
  pmtuTargets: z.array(PmtuTargetSpec).describe("Path MTU targets the console asks the agent to check"),
  bccTools: z
    .array(BccTool)
    .describe("bcc tools in the newest sample: on, or off and why (empty: not reported)"),
  probes: z.array(z.unknown()).describe("ProbeAvailability[] from the latest hello"),
  dataPlane: z.array(z.unknown()).describe("DataPlaneState[] from the latest hello or batch"),
  samplesDropped: AgentSamplesDropped.nullable().describe(
    "Samples the agent dropped without the console storing them, by reason (its totals, from its latest batch); null before an agent reported them",
  ),
  latestSample: z
    .object({
      sampledAt: z.iso.datetime(),
      samplesStored: z.int().min(0).describe("Samples kept for this host (bounded by retention)"),
      namespaces: z.array(NamespaceSummary),
    })
    .nullable()
    .describe("The newest observation, per namespace; null before the first batch"),
}).describe("A host with its probes, data plane and latest sample");
export type HostDetail = z.infer<typeof HostDetail>;

export const SeriesInput = z.object({
  hostId: HostRef,
  namespace: z
    .string()
    .min(1)
    .max(300)
    .default("root")
    .describe("Namespace key: root, name:<name> or inode:<n>"),
  counters: z
    .string()
    .min(1)
    .max(2000)
    .describe("Comma-separated nstat counter names, e.g. TcpExtListenOverflows,TcpExtListenDrops"),
  since: z.iso.datetime().optional().describe("First sample time (UTC); default: the last 5 minutes stored"),
});

export const SeriesPoint = z
  .object({
    at: z.iso.datetime().describe("sampledAt"),
    values: z
      .record(z.string(), z.number().nullable())
      .describe("Absolute counter values (null when the sample lacks the counter)"),
    rates: z
      .record(z.string(), z.number().nullable())
      .describe("Per-second rate since the previous point; null for the first point, a reset or a gap"),
  })
  .describe("One sample of the requested counters");

export const Series = z
  .object({
    hostId: HostRecordId,
    namespace: z.string(),
    counters: z.array(z.string()),
    points: z.array(SeriesPoint),
  })
  .describe("Counter values and rates over time");
export type Series = z.infer<typeof Series>;
