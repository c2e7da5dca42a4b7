import { z } from "zod";
import { jsonBoolean } from "./boolean";
import { HealthCheckJob } from "./proxy-health";
import { DirectorCounters } from "./director-control";
import { HostId, ObservationBatch, ProbeAvailability } from "./observations";
import {
  REDIRECT_MAX_FLOWS_REPLY,
  REDIRECT_MAX_VIPS,
  RedirectCounters,
  RedirectVip,
} from "./redirect-control";

/**
 * tide-agent <-> console. The agent authenticates with a host token (`Authorization: Bearer
 * tide_host_…`, issued by an admin for one host name, stored hashed, scope "agent"), over REST:
 *
 *   POST /api/v1/agent/hello         AgentHello            -> AgentHelloReply
 *   POST /api/v1/agent/observations  AgentObservationsIn   -> AgentObservationsReply
 *   GET  /api/v1/agent/desired       (no body)             -> DesiredState
 *
 * The host id is the token's host: an agent cannot speak for another host. Replies carry the
 * desired-state revision so an agent fetches /desired only when it changed.
 */
export const AGENT_PROTOCOL_VERSION = 1;
/** Host tokens start with this (API tokens with "tide_"): logs and scanners can tell them apart. */
export const HOST_TOKEN_PREFIX = "tide_host_";

export const HostRole = z.enum(["director", "proxy", "host"]).describe("What runs on the host");
export type HostRole = z.infer<typeof HostRole>;

/** Most flows one reading carries: what one tide-redirect `flows` reply lists. */
export const AGENT_MAX_REDIRECT_FLOWS = REDIRECT_MAX_FLOWS_REPLY;

const FlowKindSeen = z
  .strictObject({
    packets: z.number().int().min(0).describe("Packets of this kind since the flow's record was made"),
    lastSeenAt: z.iso.datetime().describe("Its last packet of this kind (RFC 3339, UTC)"),
  })
  .nullable()
  .describe("null: the flow never took this path");

export const AgentRedirectFlow = z
  .strictObject({
    clientAddress: z.union([z.ipv4(), z.ipv6()]).describe("Client address as the client sends"),
    clientPort: z.int().min(0).max(65535),
    address: z.union([z.ipv4(), z.ipv6()]).describe("The VIP (inner destination)"),
    port: z.int().min(0).max(65535),
    proto: z.enum(["tcp", "udp"]),
    firstSeenAt: z.iso.datetime().describe("When tide-redirect made the flow's record"),
    secondChance: FlowKindSeen,
    alternateHash: FlowKindSeen,
    lastResort: FlowKindSeen,
  })
  .describe("A flow tide-redirect recorded, its ages turned into times by the agent");
export type AgentRedirectFlow = z.infer<typeof AgentRedirectFlow>;

export const DataPlaneState = z
  .strictObject({
    component: z.enum(["director", "redirect"]).describe("tide-director or tide-redirect"),
    socket: z.string().describe("Control socket path the agent uses"),
    reachable: jsonBoolean().describe("Whether the last status call over the socket succeeded"),
    error: z.string().nullable().describe("Why it is unreachable (connect error, timeout, bad reply)"),
    version: z.string().nullable().describe("Component version from its status reply"),
    tableHashes: z
      .record(z.string(), z.string().regex(/^[0-9a-f]{64}$/))
      .describe("Director: content hash served per pool name (empty for tide-redirect)"),
    directorCounters: DirectorCounters.nullable().describe("Director totals (absolute), if a director"),
    redirectCounters: RedirectCounters.nullable().describe("tide-redirect counters (absolute), if a proxy"),
    redirectVips: z
      .array(RedirectVip)
      .max(REDIRECT_MAX_VIPS)
      .nullable()
      .optional()
      .describe(
        "tide-redirect counters per VIP (absolute), if a proxy whose tide-redirect reports them; " +
          "absent from older agents, null when not read",
      ),
    redirectFlows: z
      .array(AgentRedirectFlow)
      .max(AGENT_MAX_REDIRECT_FLOWS)
      .nullable()
      .optional()
      .describe(
        "tide-redirect's recent flows that took a second chance, the alternate hash or a last resort " +
          "(its `flows` command: newest first, capped), if a proxy whose tide-redirect has the command; " +
          "absent from older agents, null when not read",
      ),
    redirectFlowsMatched: z
      .int()
      .min(0)
      .optional()
      .describe("How many flows matched the `flows` reading (more than listed: the list was capped)"),
    countersReadAt: z.iso
      .datetime()
      .optional()
      .describe(
        "When the counters above were read (RFC 3339, UTC): rates are taken between two readings, not " +
          "between batches, which may carry the same reading twice; absent from older agents",
      ),
  })
  .describe("The local data plane as the agent sees it");
export type DataPlaneState = z.infer<typeof DataPlaneState>;

export const AgentHello = z
  .strictObject({
    protocolVersion: z.literal(AGENT_PROTOCOL_VERSION),
    agentVersion: z.string().min(1).max(64).describe("tide-agent version"),
    hostname: HostId.describe("The host name the agent runs on (must equal the token's host)"),
    kernelRelease: z.string().max(128).nullable().describe("uname -r"),
    roles: z.array(HostRole).min(1).describe("Roles from the agent's configuration"),
    probes: z.array(ProbeAvailability).describe("Which BPF probes are on, and why the others are off"),
    dataPlane: z.array(DataPlaneState).describe("Local data plane components"),
  })
  .describe("First call of an agent (and after every reconnect)");
export type AgentHello = z.infer<typeof AgentHello>;

/*
 * Replies to an agent (DesiredState, AgentHelloReply, AgentObservationsReply) are plain objects, not
 * strict ones: an agent strips the fields it does not know, so a console one minor version newer
 * can add some without breaking it (version-skew.ts). What agents send stays strict.
 */
export const DesiredDirectorTable = z
  .object({
    poolId: z.string().describe("Pool id"),
    poolName: z.string().describe("Pool name (the director's pool_names entry)"),
    tableVersionId: z.string().describe("Table version the director must serve"),
    contentHash: z
      .string()
      .regex(/^[0-9a-f]{64}$/)
      .describe("sha256 of the pool's GLBD table file"),
    downloadPath: z.string().describe("REST path of the GLBD bytes (GET with the host token)"),
  })
  .describe("One pool's table a director must serve");

export const DesiredState = z
  .object({
    revision: z.int().min(0).describe("Changes whenever anything below changes"),
    sampleIntervalMs: z.int().min(100).max(60_000).describe("Sampling interval"),
    batchMaxObservations: z.int().min(1).max(600).describe("Largest batch to send"),
    pmtuTargets: z
      .array(z.object({ target: z.string(), sizes: z.array(z.int().min(68).max(9000)) }))
      .describe("Paths to probe with tracepath / ping -M do"),
    directorTables: z.array(DesiredDirectorTable).describe("Tables this host's director must serve"),
    healthChecks: z
      .array(HealthCheckJob)
      .default([])
      .describe("Proxies this director host checks, per pool (empty on other hosts)"),
  })
  .describe("What the console wants this host to do");
export type DesiredState = z.infer<typeof DesiredState>;

export const AgentHelloReply = z
  .object({ hostId: HostId, desired: DesiredState })
  .describe("The console's answer to hello");
export type AgentHelloReply = z.infer<typeof AgentHelloReply>;

/**
 * Samples an agent dropped without the console storing them, by reason, counted since its spool was
 * made (they survive agent restarts; since the agent started when it keeps no spool). Sent with every
 * batch so the console can say a host's history has holes and why.
 */
export const AgentSamplesDropped = z
  .strictObject({
    buffer_full: z.int().min(0).describe("The offline buffer's bound (minutes or MiB) was reached"),
    refused: z.int().min(0).describe("The console refused the sample alone (4xx)"),
    in_future: z.int().min(0).describe("Refused as dated ahead of the console's clock"),
    too_old: z.int().min(0).describe("Refused as older than the console's retention"),
    spool_damaged: z.int().min(0).describe("Could not be read back from the spool after a restart"),
  })
  .describe("Samples dropped by the agent, by reason");
export type AgentSamplesDropped = z.infer<typeof AgentSamplesDropped>;

export const AgentObservationsIn = ObservationBatch.extend({
  dataPlane: z.array(DataPlaneState).describe("Data plane state at the time of the newest sample"),
  replayed: jsonBoolean().describe("True when these samples were buffered while the console was unreachable"),
  dropped: AgentSamplesDropped.optional().describe(
    "The agent's drop totals (agents older than this field omit it)",
  ),
}).describe("A batch of samples from one agent");
export type AgentObservationsIn = z.infer<typeof AgentObservationsIn>;

/**
 * How far ahead of the console's clock a sample may be dated, ms. An agent's clock a little ahead
 * (NTP not yet synced, a VM resumed) is tolerated; a sample dated further ahead is refused, since it
 * would sit at the head of the host's samples and shadow every correct one after it.
 */
export const SAMPLE_MAX_FUTURE_MS = 5 * 60_000;

/** Why the console did not store a sample of a batch (AgentObservationsReply.refused). */
export const SampleRefusal = z
  .enum(["duplicate", "too_old", "in_future"])
  .describe(
    "duplicate: a sample for that instant is already stored; too_old: older than the retention, counted back from the console's clock; in_future: dated more than SAMPLE_MAX_FUTURE_MS ahead of the console's clock",
  );
export type SampleRefusal = z.infer<typeof SampleRefusal>;

/** Longest batch interval a console may ask of its agents, ms (live pages trail by up to this). */
export const AGENT_BATCH_INTERVAL_MAX_MS = 30_000;

export const AgentObservationsReply = z
  .object({
    accepted: z.int().min(0).describe("Samples stored"),
    desiredRevision: z.int().min(0).describe("Fetch /agent/desired when this differs from yours"),
    refused: z
      .array(
        z.object({
          sampledAt: z.string().describe("The refused sample's sampledAt, as sent"),
          reason: SampleRefusal,
          detail: z.string().describe("The reason in words, with the console's clock"),
        }),
      )
      .optional()
      .describe(
        "Each sample of the batch that was not stored, and why (absent when every sample was stored; consoles before this field never sent it)",
      ),
    batchIntervalMs: z
      .int()
      .min(0)
      .max(AGENT_BATCH_INTERVAL_MAX_MS)
      .optional()
      .describe(
        "Hold new samples and send the next batch about this many ms after this one, so a console with many agents gets fewer, larger batches; 0 or absent: send each sample at once (consoles before this field never sent it, and agents before it ignore it)",
      ),
  })
  .describe("The console's answer to a batch");
export type AgentObservationsReply = z.infer<typeof AgentObservationsReply>;
