import { z } from "zod";
import {
  CONTROL_MAX_LINE_BYTES,
  ControlRequestId,
  controlFailure,
  controlReply,
  controlSuccess,
  Counter,
  Ipv4Address,
  requestIdField,
  Timestamp,
} from "./control-socket";
import { GUE_PORT } from "./gue-wire";

/**
 * The tide-redirect control protocol (v1): what the agent and tidectl say to the proxy-side
 * "second chance" daemon (dataplane/redirect) over its UNIX stream socket. Same framing and
 * conventions as the director's (director-control.ts): newline-delimited JSON, one request object
 * per line (at most 64 KiB), one reply per line in request order, many requests per connection; a
 * malformed line gets an error reply and the connection stays open.
 *
 * Field names are snake_case because they are the wire names. Every object is strict.
 * schemas/redirect-control.schema.json is generated from this file (`npm run schemas`).
 */
export const REDIRECT_CONTROL_PROTOCOL_VERSION = 1;

/** Where the daemon listens unless told otherwise with --socket (mode 0660). */
export const REDIRECT_CONTROL_SOCKET_PATH = "/run/tide/redirect.sock";

export const REDIRECT_CONTROL_MAX_LINE_BYTES = CONTROL_MAX_LINE_BYTES;

/** Most local IPv4 addresses the BPF program matches (TIDE_REDIRECT_MAX_LOCAL). */
export const REDIRECT_MAX_LOCAL_ADDRESSES = 16;

/** VIPs the BPF program counts one by one (TIDE_REDIRECT_MAX_VIPS); beyond, the least recent is evicted. */
export const REDIRECT_MAX_VIPS = 1024;

/**
 * Flows (inner TCP 5-tuples) the BPF program remembers for the change report (TIDE_REDIRECT_MAX_FLOWS):
 * only flows with a packet that took a second chance, the alternate hash or a last resort; beyond,
 * the least recently updated is evicted.
 */
export const REDIRECT_MAX_FLOWS = 8192;

/** Most flows one `flows` reply lists (REDIRECT_MAX_FLOWS_REPLY; about 250 bytes each, well under 1 MiB). */
export const REDIRECT_MAX_FLOWS_REPLY = 512;

/** `flows` looks this far back (ms) unless since_ms says otherwise. */
export const REDIRECT_FLOWS_DEFAULT_SINCE_MS = 10_000;

/** Longest since_ms a `flows` request may ask for (ms): ten minutes. */
export const REDIRECT_FLOWS_MAX_SINCE_MS = 600_000;

/** GUE UDP port unless configured otherwise (glb-director's). */
export const REDIRECT_DEFAULT_GUE_PORT = GUE_PORT;

// ---------------------------------------------------------------------------------------------------
// Wire primitives

const GuePort = z.int().min(1).max(65535).describe("GUE UDP destination port, 1..65535");

const LocalAddresses = z
  .array(Ipv4Address.describe("A local IPv4 address"))
  .min(1)
  .max(REDIRECT_MAX_LOCAL_ADDRESSES)
  .refine((a) => new Set(a).size === a.length, "addresses must not repeat")
  .describe(
    "This host's IPv4 addresses (1..16, no repeats): GUE packets addressed to one of them are " +
      "decided, others pass untouched; a next hop equal to one of them is forwarded_to_self",
  );

// ---------------------------------------------------------------------------------------------------
// Requests

export const RedirectControlCommand = z
  .enum(["status", "stats", "config", "flows"])
  .describe("A control command");
export type RedirectControlCommand = z.infer<typeof RedirectControlCommand>;

export const RedirectControlRequestId = ControlRequestId;
export type RedirectControlRequestId = ControlRequestId;
const requestId = requestIdField;

export const RedirectStatusRequest = z
  .strictObject({
    id: requestId,
    cmd: z.literal("status").describe("Report version, interface, attachment and configuration"),
  })
  .describe("status: what the daemon runs and where it is attached; no arguments");
export type RedirectStatusRequest = z.infer<typeof RedirectStatusRequest>;

export const RedirectStatsRequest = z
  .strictObject({
    id: requestId,
    cmd: z.literal("stats").describe("Report the packet counters, summed over CPUs"),
  })
  .describe("stats: decision counters of the BPF program; no arguments");
export type RedirectStatsRequest = z.infer<typeof RedirectStatsRequest>;

export const RedirectConfigRequest = z
  .strictObject({
    id: requestId,
    cmd: z.literal("config").describe("Read, and optionally change, the configuration in force"),
    local_addresses: LocalAddresses.optional().describe(
      "New local IPv4 addresses (1..16, no repeats); absent keeps the current ones",
    ),
    port: GuePort.optional().describe("New GUE UDP port, 1..65535; absent keeps the current one"),
  })
  .describe(
    "config: with no field, read the configuration; with fields, check them all, then change it at run time",
  );
export type RedirectConfigRequest = z.infer<typeof RedirectConfigRequest>;

export const RedirectFlowsRequest = z
  .strictObject({
    id: requestId,
    cmd: z
      .literal("flows")
      .describe("List the recent flows that took a second chance, the alternate hash or a last resort"),
    since_ms: z
      .int()
      .min(1)
      .max(REDIRECT_FLOWS_MAX_SINCE_MS)
      .optional()
      .describe(
        `Only flows whose newest such packet is at most this many ms old, 1..${REDIRECT_FLOWS_MAX_SINCE_MS}; ` +
          `absent means ${REDIRECT_FLOWS_DEFAULT_SINCE_MS}`,
      ),
  })
  .describe(
    "flows: the connections (not packets) that reached their proxy through a hop, the alternate " +
      "hash of a hash-field migration, or were taken by a last resort; older tide-redirect answers unknown_command",
  );
export type RedirectFlowsRequest = z.infer<typeof RedirectFlowsRequest>;

export const RedirectControlRequest = z
  .discriminatedUnion("cmd", [
    RedirectStatusRequest,
    RedirectStatsRequest,
    RedirectConfigRequest,
    RedirectFlowsRequest,
  ])
  .describe("One request line: a JSON object with cmd and that command's arguments, nothing else")
  .meta({ id: "RedirectControlRequest" });
export type RedirectControlRequest = z.infer<typeof RedirectControlRequest>;

// ---------------------------------------------------------------------------------------------------
// Errors

export const RedirectControlErrorCode = z
  .enum(["bad_request", "unknown_command", "line_too_long", "internal"])
  .describe(
    "bad_request: not JSON, not an object, or a missing, wrong-typed, invalid or unknown field; " +
      "unknown_command: cmd names no command; line_too_long: request line over 64 KiB; " +
      "internal: a map could not be read or written (a daemon or kernel problem)",
  );
export type RedirectControlErrorCode = z.infer<typeof RedirectControlErrorCode>;

export const RedirectControlError = z
  .strictObject({
    code: RedirectControlErrorCode,
    message: z.string().describe("What is wrong, for humans"),
  })
  .describe("Why a request failed: a code from a closed set and a message");
export type RedirectControlError = z.infer<typeof RedirectControlError>;

// ---------------------------------------------------------------------------------------------------
// Results

export const RedirectConfigResult = z
  .strictObject({
    port: GuePort.describe("GUE UDP port in force"),
    local_addresses: LocalAddresses.describe("Local IPv4 addresses in force"),
  })
  .describe("config result: the configuration now in force")
  .meta({ id: "RedirectConfigResult" });
export type RedirectConfigResult = z.infer<typeof RedirectConfigResult>;

export const RedirectStatusResult = z
  .strictObject({
    version: z
      .string()
      .regex(/^\d+\.\d+\.\d+(?:[-+][0-9A-Za-z.+-]+)?$/, "must be a semantic version")
      .describe("tide-redirect version (semver, e.g. 0.1.0)"),
    pid: z.int().min(1).describe("Daemon process id"),
    started_at: Timestamp.describe("When the daemon started (RFC 3339, UTC)"),
    uptime_s: z.number().nonnegative().describe("Seconds since the daemon started"),
    iface: z.string().min(1).max(15).describe("Interface the program is attached to"),
    ifindex: z.int().min(1).describe("Its interface index (in the daemon's network namespace)"),
    netns: z
      .string()
      .min(1)
      .nullable()
      .describe("Named network namespace the daemon entered (--netns), or null for its own"),
    attach: z.literal("tc-ingress").describe("Attach point: TC clsact ingress, direct action"),
    prog_id: z.int().min(1).describe("Kernel id of the attached BPF program (bpftool prog show id N)"),
    port: GuePort.describe("GUE UDP port in force"),
    local_addresses: LocalAddresses.describe("Local IPv4 addresses in force"),
  })
  .describe("status result")
  .meta({ id: "RedirectStatusResult" });
export type RedirectStatusResult = z.infer<typeof RedirectStatusResult>;

export const RedirectCounters = z
  .strictObject({
    total: Counter.describe("GUE packets seen (everything below except not_gue)"),
    accepted_syn: Counter.describe("Accepted: inner TCP SYN without ACK (new connections stay here)"),
    accepted_established: Counter.describe(
      "Accepted: a local TCP socket (established, SYN-RECV or TIME-WAIT) owns the inner flow",
    ),
    accepted_syn_cookie: Counter.describe("Accepted: pure ACK with a valid SYN cookie of a local listener"),
    accepted_last_resort: Counter.describe("Accepted: no owner and no hop left (next_hop >= hop_count)"),
    accepted_udp: Counter.describe("Accepted: inner UDP"),
    accepted_icmp: Counter.describe(
      "Accepted: inner ICMP other than frag-needed / packet-too-big (echo probes)",
    ),
    accepted_pmtu: Counter.describe("Accepted: ICMP frag-needed / packet-too-big about a local flow"),
    forwarded_to_self: Counter.describe("Accepted: the next hop is one of this host's addresses"),
    forwarded_to_alternate: Counter.describe("Sent on to the next hop with the outer header rewritten"),
    not_gue: Counter.describe("Not GUE for this host: passed through untouched (not part of total)"),
    dropped_malformed: Counter.describe("Dropped: invalid GUE or inner header fields"),
    dropped_truncated: Counter.describe("Dropped: shorter than its headers say"),
    forward_failed: Counter.describe("Dropped: no route to the next hop, or the rewrite failed"),
    decap_failed: Counter.describe("Dropped: the kernel refused to remove the outer headers"),
    // The "why" counters: on top of a packet's one decision above (not part of total's sum).
    // Optional: tide-redirect before them does not send them.
    accepted_second_chance: Counter.optional().describe(
      "Why, on top of the decision: accepted here because a local socket owns the flow " +
        "(accepted_established, accepted_syn_cookie or accepted_pmtu) though the packet arrived as a " +
        "hop (next_hop > 0), i.e. for a flow whose first hop is another proxy; absent from older tide-redirect",
    ),
    accepted_alternate_hash: Counter.optional().describe(
      "Why: of accepted_second_chance, the packets that came through the alternate pair of a " +
        "hash-field migration (hop_count 3, next_hop >= 2): flows still reaching their proxy by the " +
        "old hash fields; absent from older tide-redirect",
    ),
  })
  .describe(
    "Packet counters of the BPF program, summed over CPUs (u64; may exceed 2^53). Every GUE packet " +
      "counts in total and in exactly one decision counter; accepted_second_chance and " +
      "accepted_alternate_hash say why on top of that",
  )
  .meta({ id: "RedirectCounters" });
export type RedirectCounters = z.infer<typeof RedirectCounters>;

export const RedirectVipCounters = z
  .strictObject({
    forwarded_to_alternate: Counter.describe("Packets of this VIP's flows sent on to the next hop"),
    accepted_second_chance: Counter.describe(
      "Packets of this VIP's flows accepted here as a hop (a local socket owns the flow)",
    ),
    accepted_alternate_hash: Counter.describe(
      "Of those, the packets that came through the alternate pair of a hash-field migration",
    ),
    accepted_last_resort: Counter.describe("Packets of this VIP accepted with no owner and no hop left"),
    accepted_established: Counter.describe("Packets of this VIP's flows a local socket owns"),
    accepted_syn: Counter.describe("SYNs to this VIP (new connections landing here)"),
  })
  .describe(
    "One VIP's packet counters, summed over CPUs: each counts the packets of the global counter of " +
      "the same name that were for this VIP (inner TCP only)",
  )
  .meta({ id: "RedirectVipCounters" });
export type RedirectVipCounters = z.infer<typeof RedirectVipCounters>;

export const RedirectVip = z
  .strictObject({
    address: z.union([z.ipv4(), z.ipv6()]).describe("The inner packets' destination address (the VIP)"),
    port: z.int().min(0).max(65535).describe("Their destination port"),
    proto: z.enum(["tcp", "udp"]).describe("Their protocol"),
    counters: RedirectVipCounters.describe("Its counters"),
  })
  .describe("One VIP (inner destination address, port, protocol) the program saw packets for")
  .meta({ id: "RedirectVip" });
export type RedirectVip = z.infer<typeof RedirectVip>;

export const RedirectStatsResult = z
  .strictObject({
    counters: RedirectCounters.describe("Every counter, summed over all CPUs"),
    vips: z
      .array(RedirectVip)
      .max(REDIRECT_MAX_VIPS)
      .optional()
      .describe(
        `Counters per VIP (at most ${REDIRECT_MAX_VIPS}, least recently used evicted), in no order; ` +
          "absent from older tide-redirect",
      ),
  })
  .describe("stats result")
  .meta({ id: "RedirectStatsResult" });
export type RedirectStatsResult = z.infer<typeof RedirectStatsResult>;

export const RedirectFlowKind = z
  .strictObject({
    packets: Counter.describe(
      "Packets of this flow that went this way since the daemon first recorded the flow (not only " +
        "within since_ms; a 5-tuple reused by a later connection adds to the same count)",
    ),
    last_seen_ms_ago: z
      .number()
      .nonnegative()
      .describe("Whole ms between the last of them and the reply (the daemon's monotonic clock)"),
  })
  .nullable()
  .describe(
    "How often and how recently a flow went one way; null when it never did. Reported even when " +
      "older than since_ms (the flow is listed for another kind): compare last_seen_ms_ago with the " +
      "window, so a 5-tuple reused by a later connection does not inherit an earlier one's last resort",
  )
  .meta({ id: "RedirectFlowKind" });
export type RedirectFlowKind = z.infer<typeof RedirectFlowKind>;

const FlowAddress = z.union([z.ipv4(), z.ipv6()]);
const FlowPort = z.int().min(0).max(65535);

export const RedirectFlow = z
  .strictObject({
    client_address: FlowAddress.describe("The inner packets' source address (the client)"),
    client_port: FlowPort.describe("Their source port"),
    address: FlowAddress.describe("Their destination address (the VIP), same family as client_address"),
    port: FlowPort.describe("Their destination port"),
    proto: z.literal("tcp").describe("Their protocol: only inner TCP flows are recorded"),
    first_seen_ms_ago: z
      .number()
      .nonnegative()
      .describe("Whole ms between the flow's first recorded packet and the reply (may be before since_ms)"),
    second_chance: RedirectFlowKind.describe(
      "Packets accepted here as a hop (next_hop > 0) because a local socket owns the flow " +
        "(they count in accepted_second_chance), or null",
    ),
    alternate_hash: RedirectFlowKind.describe(
      "Of second_chance, the packets that came through the alternate pair of a hash-field migration " +
        "(they count in accepted_alternate_hash), or null",
    ),
    last_resort: RedirectFlowKind.describe(
      "Packets accepted with no owner and no hop left (accepted_last_resort): the kernel answers " +
        "them with a reset, so the connection is broken; or null",
    ),
  })
  .describe(
    "One inner TCP flow as the client sends it, with what its packets took; a flow whose packets " +
      "all reached their first proxy is never listed",
  )
  .meta({ id: "RedirectFlow" });
export type RedirectFlow = z.infer<typeof RedirectFlow>;

export const RedirectFlowsResult = z
  .strictObject({
    flows: z
      .array(RedirectFlow)
      .max(REDIRECT_MAX_FLOWS_REPLY)
      .describe(
        `The flows whose newest second-chance, alternate-hash or last-resort packet is at most since_ms ` +
          `old, newest first, at most ${REDIRECT_MAX_FLOWS_REPLY}`,
      ),
    matched: z
      .int()
      .min(0)
      .describe("How many flows are within since_ms; more than flows lists when the list is capped"),
    capacity: z
      .int()
      .min(1)
      .describe(
        `Flows the BPF map holds (${REDIRECT_MAX_FLOWS} by default); when full, the least recently ` +
          "updated is evicted, so a report over a busy window may miss flows",
      ),
  })
  .describe("flows result")
  .meta({ id: "RedirectFlowsResult" });
export type RedirectFlowsResult = z.infer<typeof RedirectFlowsResult>;

/** Each command's result schema. */
export const redirectControlResults = {
  status: RedirectStatusResult,
  stats: RedirectStatsResult,
  config: RedirectConfigResult,
  flows: RedirectFlowsResult,
} as const satisfies Record<RedirectControlCommand, z.ZodType>;

export type RedirectControlResultFor<C extends RedirectControlCommand> = z.infer<
  (typeof redirectControlResults)[C]
>;

// ---------------------------------------------------------------------------------------------------
// Replies

export const RedirectControlFailure = controlFailure(RedirectControlError);
export type RedirectControlFailure = z.infer<typeof RedirectControlFailure>;

export const RedirectControlSuccess = controlSuccess(
  z
    .union([RedirectStatusResult, RedirectStatsResult, RedirectConfigResult, RedirectFlowsResult])
    .describe("The result of the request's command"),
);
export type RedirectControlSuccess = z.infer<typeof RedirectControlSuccess>;

export const RedirectControlReply = z
  .discriminatedUnion("ok", [RedirectControlSuccess, RedirectControlFailure])
  .describe("One reply line, in request order: ok with a result, or not ok with an error")
  .meta({ id: "RedirectControlReply" });
export type RedirectControlReply = z.infer<typeof RedirectControlReply>;

/** Each command's reply schema: its own result, or an error. */
export const redirectControlReplies = {
  status: controlReply(RedirectStatusResult, RedirectControlFailure),
  stats: controlReply(RedirectStatsResult, RedirectControlFailure),
  config: controlReply(RedirectConfigResult, RedirectControlFailure),
  flows: controlReply(RedirectFlowsResult, RedirectControlFailure),
} as const satisfies Record<RedirectControlCommand, z.ZodType>;

export type RedirectControlReplyFor<C extends RedirectControlCommand> = z.infer<
  (typeof redirectControlReplies)[C]
>;

/** JSON Schema (draft 2020-12) of the protocol: a line is a request or a reply; $defs name each part. */
export function redirectControlJsonSchema() {
  return z.toJSONSchema(
    z.union([RedirectControlRequest, RedirectControlReply]).meta({
      title: `tide-redirect control protocol v${REDIRECT_CONTROL_PROTOCOL_VERSION}`,
      description:
        `Newline-delimited JSON over the UNIX socket ${REDIRECT_CONTROL_SOCKET_PATH}: each line is one ` +
        "request or one reply. Generated from packages/contracts/src/redirect-control.ts; do not edit.",
    }),
  );
}
