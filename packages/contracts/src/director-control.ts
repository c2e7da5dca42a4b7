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
import { HashField } from "./fleet";

/**
 * The tide-director control protocol (v1): what tidectl and the agent say to a running director over
 * its UNIX stream socket. Newline-delimited JSON: one request object per line (at most 64 KiB), one
 * reply object per line, replies in request order, many requests per connection. A malformed line
 * gets an error reply and the connection stays open.
 *
 * Field names are snake_case because they are the wire names. Every object is strict: the director
 * rejects unknown request fields (bad_request), and these schemas reject unknown reply fields too, so
 * a director that drifts from this file fails the contract tests instead of being half-understood.
 * schemas/director-control.schema.json is generated from this file (`npm run schemas`).
 */
export const DIRECTOR_CONTROL_PROTOCOL_VERSION = 1;

/** Where the director listens unless configured otherwise (mode 0660). */
export const DIRECTOR_CONTROL_SOCKET_PATH = "/run/tide/director.sock";

export const DIRECTOR_CONTROL_MAX_LINE_BYTES = CONTROL_MAX_LINE_BYTES;

// ---------------------------------------------------------------------------------------------------
// Wire primitives. JSON Schema keeps a regex's source but not its flags, so patterns spell out both
// cases instead of using /i.

const MacAddress = z
  .string()
  .regex(/^[0-9a-fA-F]{2}(?::[0-9a-fA-F]{2}){5}$/, "must be a MAC address like aa:bb:cc:dd:ee:ff")
  .describe("Ethernet MAC address, six colon-separated hex octets (aa:bb:cc:dd:ee:ff)");

const IpAddress = z.union([z.ipv4(), z.ipv6()]).describe("IPv4 (dotted quad) or IPv6 address");

/** TCP/UDP port, DPDK port id and queue ids are all 16-bit. */
const U16 = z.int().min(0).max(65535);

const ContentHash = z
  .string()
  .regex(/^[0-9a-f]{64}$/, "must be 64 lower-case hex digits")
  .describe("sha256 of the pool's table written as a 1-table GLBD v2 file, 64 lower-case hex digits");

const PoolName = z
  .string()
  .describe("Pool name (from load_table's pool_names, the config, or the table index)");

const TableIndex = z.int().min(0).describe("Index of the pool's table in the loaded GLBD file (0-based)");

/** Rows per table: the flow digest's low 16 bits pick one. */
const TableRow = z.int().min(0).max(65535);

// ---------------------------------------------------------------------------------------------------
// Requests

export const DirectorControlCommand = z
  .enum(["status", "load_table", "stats", "explain", "set_gateway"])
  .describe("A control command");
export type DirectorControlCommand = z.infer<typeof DirectorControlCommand>;

export const DirectorControlRequestId = ControlRequestId;
export type DirectorControlRequestId = ControlRequestId;
const requestId = requestIdField;

export const DirectorStatusRequest = z
  .strictObject({
    id: requestId,
    cmd: z.literal("status").describe("Report version, gateway, ports, lcores and the loaded table"),
  })
  .describe("status: what the director runs and serves; no arguments");
export type DirectorStatusRequest = z.infer<typeof DirectorStatusRequest>;

export const DirectorLoadTableRequest = z
  .strictObject({
    id: requestId,
    cmd: z
      .literal("load_table")
      .describe("Validate a GLBD v2 file completely, then swap it in atomically (RCU, no packet dropped)"),
    path: z.string().describe("Path of the GLBD v2 file on the director host"),
    pool_names: z
      .array(z.string().describe("Name of the table at this index"))
      .optional()
      .describe(
        "Names of the file's tables, in order. Default: the config file's names if their count matches, " +
          'else "0", "1", …; a wrong count, an empty or a duplicate name fails with invalid_table (pool_names)',
      ),
  })
  .describe("load_table: replace the forwarding tables; on any error the old tables keep serving");
export type DirectorLoadTableRequest = z.infer<typeof DirectorLoadTableRequest>;

export const DirectorStatsRequest = z
  .strictObject({
    id: requestId,
    cmd: z.literal("stats").describe("Report packet counters"),
  })
  .describe("stats: counters in total, per port and per lcore; no arguments");
export type DirectorStatsRequest = z.infer<typeof DirectorStatsRequest>;

export const DirectorExplainRequest = z
  .strictObject({
    id: requestId,
    cmd: z.literal("explain").describe("Show where the director would send a flow"),
    src_addr: IpAddress.describe("Client (source) address, IPv4 or IPv6"),
    dst_addr: IpAddress.describe("Destination (VIP) address, IPv4 or IPv6; picks the pool by its binds"),
    protocol: z.enum(["tcp", "udp", "icmp"]).describe("IP protocol of the flow"),
    src_port: U16.optional().describe("Client source port, 0..65535 (default 0)"),
    dst_port: U16.optional().describe("Destination port, 0..65535 (default 0)"),
  })
  .describe("explain: the pool, row, primary and secondary a flow hashes to, using the loaded table");
export type DirectorExplainRequest = z.infer<typeof DirectorExplainRequest>;

export const DirectorSetGatewayRequest = z
  .strictObject({
    id: requestId,
    cmd: z.literal("set_gateway").describe("Change the outer Ethernet destination and IPv4 source"),
    mac: MacAddress.describe("Router (gateway) MAC: outer Ethernet destination of every forwarded packet"),
    source_ip: Ipv4Address.describe("Outer IPv4 source address of every forwarded packet"),
  })
  .describe("set_gateway: change the outer Ethernet destination and outer IPv4 source at run time");
export type DirectorSetGatewayRequest = z.infer<typeof DirectorSetGatewayRequest>;

export const DirectorControlRequest = z
  .discriminatedUnion("cmd", [
    DirectorStatusRequest,
    DirectorLoadTableRequest,
    DirectorStatsRequest,
    DirectorExplainRequest,
    DirectorSetGatewayRequest,
  ])
  .describe("One request line: a JSON object with cmd and that command's arguments, nothing else")
  .meta({ id: "DirectorControlRequest" });
export type DirectorControlRequest = z.infer<typeof DirectorControlRequest>;

// ---------------------------------------------------------------------------------------------------
// Errors

export const DirectorControlErrorCode = z
  .enum([
    "bad_request",
    "unknown_command",
    "line_too_long",
    "invalid_table",
    "io_error",
    "no_bind",
    "no_table",
    "busy",
    "internal",
  ])
  .describe(
    "bad_request: not JSON, not an object, or a missing, wrong-typed or unknown field; " +
      "unknown_command: cmd names no command; line_too_long: request line over 64 KiB; " +
      "invalid_table: the GLBD file failed validation, the old table keeps serving; " +
      "io_error: cannot open or read the file; no_bind: explain found no pool binding the destination; " +
      "no_table: no table loaded yet; busy: another load is in progress; internal: a director bug",
  );
export type DirectorControlErrorCode = z.infer<typeof DirectorControlErrorCode>;

export const DirectorGlbdCode = z
  .enum([
    // packages/forwarding's GlbdErrorCode, same meanings
    "bad_magic",
    "bad_version",
    "bad_header",
    "bad_size",
    "too_many_backends",
    "no_backends",
    "too_many_binds",
    "bad_family",
    "bad_address",
    "bad_state",
    "bad_health",
    "bad_prefix",
    "bad_port_range",
    "bad_proto",
    "bad_reserved",
    "dirty_slot",
    "duplicate_backend",
    "backend_index_out_of_range",
    "bad_rows",
    "bad_hash_key",
    "bad_hash_fields",
    "bad_alt_hash_fields",
    // the director's own checks
    "ipv6_backend",
    "bind_overlap",
    "pool_names",
  ])
  .describe(
    "Why a GLBD file was refused: the GLBD codec's codes, plus the director's own: " +
      "ipv6_backend (the outer header is IPv4, so backends must be IPv4), " +
      "bind_overlap (two pools bind overlapping address/proto/port), " +
      "pool_names (pool_names count differs from the file's table count, or a name is empty or repeated)",
  );
export type DirectorGlbdCode = z.infer<typeof DirectorGlbdCode>;

export const DirectorInvalidTableDetail = z
  .strictObject({
    glbd_code: DirectorGlbdCode,
    table: z.int().min(0).nullable().describe("Index of the offending table in the file, or null"),
    slot: z.int().min(0).nullable().describe("Backend slot concerned, or null"),
    row: TableRow.nullable().describe("Table row concerned (0..65535), or null"),
    offset: z.int().min(0).nullable().describe("Byte offset in the file where the problem is, or null"),
  })
  .describe("Where a GLBD file failed validation");
export type DirectorInvalidTableDetail = z.infer<typeof DirectorInvalidTableDetail>;

const errorMessage = z.string().describe("What is wrong, for humans");

export const DirectorControlError = z
  .discriminatedUnion("code", [
    z
      .strictObject({
        code: z
          .literal("invalid_table")
          .describe("The GLBD file failed validation; the old table keeps serving"),
        message: errorMessage,
        detail: DirectorInvalidTableDetail,
      })
      .describe("A table refused by validation, with where"),
    z
      .strictObject({
        code: DirectorControlErrorCode.exclude(["invalid_table"]).describe("Error code (closed set)"),
        message: errorMessage,
        detail: z
          .record(z.string(), z.unknown())
          .optional()
          .describe("Optional machine-readable context, by code"),
      })
      .describe("Any other error"),
  ])
  .describe("Why a request failed: a code from a closed set, a message, and details for invalid_table");
export type DirectorControlError = z.infer<typeof DirectorControlError>;

// ---------------------------------------------------------------------------------------------------
// Results

const PoolBackend = z
  .strictObject({
    slot: z.int().min(0).describe("Index of the backend in the pool's table (what rows refer to)"),
    address: Ipv4Address.describe("Backend (proxy) IPv4 address: the outer GUE destination"),
    state: z
      .enum(["filling", "active", "draining", "inactive"])
      .describe(
        "Backend state in the table. The file stores draining and inactive alike (state 2); " +
          "a state-2 backend that no row uses is reported inactive, as packages/forwarding decodes it",
      ),
    healthy: z.boolean().describe("Health bit in the table"),
  })
  .describe("A backend of a loaded pool");

const PoolBind = z
  .strictObject({
    address: IpAddress.describe("VIP address or network address, IPv4 or IPv6"),
    prefix_bits: z.int().min(0).max(128).describe("Prefix length: 32 (IPv4) or 128 (IPv6) for one address"),
    proto: z.enum(["tcp", "udp"]).describe("Transport protocol of the bind"),
    port_start: U16.describe("First destination port of the range (inclusive)"),
    port_end: U16.describe("Last destination port of the range (inclusive)"),
  })
  .refine((b) => b.port_start <= b.port_end, {
    message: "port_start must not exceed port_end",
    path: ["port_end"],
  })
  .refine((b) => b.address.includes(":") || b.prefix_bits <= 32, {
    message: "an IPv4 prefix has at most 32 bits",
    path: ["prefix_bits"],
  })
  .describe("A VIP bind of a loaded pool: the packets it receives");

const tableHashFields = {
  hash_fields: z
    .array(HashField)
    .min(1)
    .describe(
      "Packet fields this table is hashed on, in hashing order: its own (GLBD v3 file) " +
        "or the director's configured default (v2 file)",
    ),
  alt_hash_fields: z
    .array(HashField)
    .describe(
      "This table's second field set while its hash fields migrate (its pair is added as hops); empty when none",
    ),
};

const LoadedPool = z
  .strictObject({
    index: TableIndex,
    name: PoolName,
    content_hash: ContentHash,
    ...tableHashFields,
  })
  .describe("A pool the director serves");

export const DirectorStatusResult = z
  .strictObject({
    version: z
      .string()
      .regex(/^\d+\.\d+\.\d+(?:[-+][0-9A-Za-z.+-]+)?$/, "must be a semantic version")
      .describe("tide-director version (semver, e.g. 0.1.0)"),
    pid: z.int().min(1).describe("Director process id"),
    started_at: Timestamp.describe("When the director started (RFC 3339, UTC)"),
    uptime_s: z.number().nonnegative().describe("Seconds since the director started"),
    hash_fields: z
      .array(HashField)
      .min(1)
      .describe(
        "Configured default hash fields, in hashing order: used by tables of GLBD v2 files only " +
          "(a v3 file carries each table's own; see pools[].hash_fields)",
      ),
    alt_hash_fields: z
      .array(HashField)
      .describe("Configured default second field set for v2 tables while they migrate; empty when none"),
    gateway: z
      .strictObject({
        mac: MacAddress.describe("Router (gateway) MAC: outer Ethernet destination"),
        source_ip: Ipv4Address.describe("Outer IPv4 source address"),
      })
      .describe("Outer headers of forwarded packets"),
    mtu: z.int().min(1).max(65535).describe("Largest outer IP packet the director emits, in bytes"),
    ports: z
      .array(
        z
          .strictObject({
            port_id: U16.describe("DPDK port id"),
            name: z.string().describe("Device name (PCI address or vdev name)"),
            mac: MacAddress.describe("The port's own MAC address"),
            link_up: z.boolean().describe("Link state"),
            rx_queues: U16.describe("Number of RX queues configured"),
            tx_queues: U16.describe("Number of TX queues configured"),
          })
          .describe("A DPDK port"),
      )
      .describe("DPDK ports the director uses"),
    lcores: z
      .array(
        z
          .strictObject({
            lcore_id: z.int().min(0).describe("DPDK lcore id"),
            port_id: U16.describe("DPDK port id it polls"),
            rx_queue: U16.describe("RX queue it polls"),
            tx_queue: U16.describe("TX queue it sends on"),
          })
          .describe("A worker lcore and the queues it owns"),
      )
      .describe("Worker lcores"),
    table: z
      .strictObject({
        path: z.string().describe("Path of the GLBD file loaded"),
        generation: z.int().min(1).describe("1 for the first load, +1 for each successful load"),
        loaded_at: Timestamp.describe("When it was swapped in (RFC 3339, UTC)"),
        load_ms: z.number().nonnegative().describe("Time to read, validate and swap it in, in milliseconds"),
      })
      .nullable()
      .describe("The loaded GLBD file, or null if none is loaded"),
    pools: z
      .array(
        LoadedPool.extend({
          loaded_at: Timestamp.describe("When this pool's table was swapped in (RFC 3339, UTC)"),
          backends: z.array(PoolBackend).describe("The table's backends, by slot"),
          binds: z.array(PoolBind).describe("The table's VIP binds"),
        }).describe("A pool the director serves, with its backends and binds"),
      )
      .describe("Pools served, one per table of the loaded file; empty if none is loaded"),
  })
  .describe("status result")
  .meta({ id: "DirectorStatusResult" });
export type DirectorStatusResult = z.infer<typeof DirectorStatusResult>;

export const DirectorLoadTableResult = z
  .strictObject({
    generation: z.int().min(1).describe("Generation now serving: 1 for the first load, +1 for each success"),
    load_ms: z.number().nonnegative().describe("Time to read, validate and swap it in, in milliseconds"),
    pools: z.array(LoadedPool).describe("Pools now served, one per table of the file"),
  })
  .describe("load_table result: the new table is serving")
  .meta({ id: "DirectorLoadTableResult" });
export type DirectorLoadTableResult = z.infer<typeof DirectorLoadTableResult>;

export const DirectorCounters = z
  .strictObject({
    rx_packets: Counter.describe("Packets received"),
    rx_bytes: Counter.describe("Bytes received"),
    forwarded_packets: Counter.describe("Packets encapsulated and sent to a proxy"),
    forwarded_bytes: Counter.describe("Bytes of forwarded packets"),
    forwarded_icmp_pmtu: Counter.describe("ICMP fragmentation-needed / packet-too-big messages forwarded"),
    forwarded_icmp_echo: Counter.describe("ICMP echo requests forwarded"),
    forwarded_ipv4: Counter.describe("Forwarded packets whose inner packet is IPv4"),
    forwarded_ipv6: Counter.describe("Forwarded packets whose inner packet is IPv6"),
    tx_failed: Counter.describe("Packets encapsulated but refused by the TX queue"),
    dropped: z
      .strictObject({
        no_bind: Counter.describe("No pool binds the destination"),
        malformed: Counter.describe("Headers inconsistent or invalid"),
        truncated: Counter.describe("Shorter than its headers say"),
        too_big: Counter.describe("Would exceed the MTU once encapsulated"),
        unsupported: Counter.describe("Protocol or packet kind the director does not forward"),
        no_table: Counter.describe("Arrived before any table was loaded"),
      })
      .describe("Packets dropped, by reason"),
  })
  .describe("Packet counters (u64; may exceed 2^53)")
  .meta({ id: "DirectorCounters" });
export type DirectorCounters = z.infer<typeof DirectorCounters>;

export const DirectorStatsResult = z
  .strictObject({
    totals: DirectorCounters.describe("Sum over all lcores"),
    ports: z
      .array(
        z
          .strictObject({
            port_id: U16.describe("DPDK port id"),
            rx_packets: Counter.describe("Packets received (rte_eth_stats ipackets)"),
            rx_bytes: Counter.describe("Bytes received (rte_eth_stats ibytes)"),
            tx_packets: Counter.describe("Packets sent (rte_eth_stats opackets)"),
            tx_bytes: Counter.describe("Bytes sent (rte_eth_stats obytes)"),
            rx_missed: Counter.describe("Packets dropped by the NIC, RX queues full (rte_eth_stats imissed)"),
            rx_errors: Counter.describe("Erroneous packets received (rte_eth_stats ierrors)"),
            tx_errors: Counter.describe("Failed transmissions (rte_eth_stats oerrors)"),
          })
          .describe("A port's NIC counters, from rte_eth_stats"),
      )
      .describe("Per DPDK port"),
    lcores: z
      .array(
        z
          .strictObject({
            lcore_id: z.int().min(0).describe("DPDK lcore id"),
            port_id: U16.describe("DPDK port id it polls"),
            rx_queue: U16.describe("RX queue it polls"),
            counters: DirectorCounters.describe("This lcore's counters"),
          })
          .describe("A worker lcore's counters"),
      )
      .describe("Per worker lcore"),
  })
  .describe("stats result")
  .meta({ id: "DirectorStatsResult" });
export type DirectorStatsResult = z.infer<typeof DirectorStatsResult>;

export const DirectorExplainResult = z
  .strictObject({
    pool: PoolName.describe("Name of the pool whose bind matched the destination"),
    pool_index: TableIndex,
    row: TableRow.describe("Table row the flow hashes to (low 16 bits of the digest)"),
    digest: z
      .string()
      .regex(/^[0-9a-f]{16}$/, "must be 16 lower-case hex digits")
      .describe("SipHash-2-4 flow digest, the u64 as 16 lower-case hex digits"),
    primary: Ipv4Address.describe("Primary backend of the row: the outer destination"),
    secondary: Ipv4Address.describe("Secondary backend of the row"),
    hops: z
      .array(Ipv4Address.describe("A hop address"))
      .min(1)
      .max(3)
      .describe(
        "GUE hop list: the secondary, then the alt row's primary and secondary while hash fields migrate",
      ),
    outer_source_port: z
      .int()
      .min(0x8000)
      .max(0xffff)
      .describe("UDP source port of the GUE packet: 0x8000 | ((digest ^ src_port) & 0x7fff)"),
    alt: z
      .strictObject({
        row: TableRow.describe("Row under alt_hash_fields"),
        primary: Ipv4Address.describe("Primary backend of the alt row"),
        secondary: Ipv4Address.describe("Secondary backend of the alt row"),
      })
      .nullable()
      .describe("The row under alt_hash_fields while hash fields migrate, else null"),
    ...tableHashFields,
  })
  .refine((r) => r.hops.length === (r.alt === null ? 1 : 3), {
    message: "hops holds the secondary, plus the alt pair when alt is set",
    path: ["hops"],
  })
  .refine((r) => (r.alt === null) === (r.alt_hash_fields.length === 0), {
    message: "alt is set exactly when the matched table has alt_hash_fields",
    path: ["alt"],
  })
  .describe("explain result: where the flow goes")
  .meta({ id: "DirectorExplainResult" });
export type DirectorExplainResult = z.infer<typeof DirectorExplainResult>;

export const DirectorSetGatewayResult = z
  .strictObject({
    mac: MacAddress.describe("Gateway MAC now in use"),
    source_ip: Ipv4Address.describe("Outer IPv4 source now in use"),
  })
  .describe("set_gateway result: the outer headers now in use")
  .meta({ id: "DirectorSetGatewayResult" });
export type DirectorSetGatewayResult = z.infer<typeof DirectorSetGatewayResult>;

/** Each command's result schema. */
export const directorControlResults = {
  status: DirectorStatusResult,
  load_table: DirectorLoadTableResult,
  stats: DirectorStatsResult,
  explain: DirectorExplainResult,
  set_gateway: DirectorSetGatewayResult,
} as const satisfies Record<DirectorControlCommand, z.ZodType>;

export type DirectorControlResultFor<C extends DirectorControlCommand> = z.infer<
  (typeof directorControlResults)[C]
>;

// ---------------------------------------------------------------------------------------------------
// Replies

export const DirectorControlFailure = controlFailure(DirectorControlError);
export type DirectorControlFailure = z.infer<typeof DirectorControlFailure>;

export const DirectorControlSuccess = controlSuccess(
  z
    .union([
      DirectorStatusResult,
      DirectorLoadTableResult,
      DirectorStatsResult,
      DirectorExplainResult,
      DirectorSetGatewayResult,
    ])
    .describe("The result of the request's command"),
);
export type DirectorControlSuccess = z.infer<typeof DirectorControlSuccess>;

export const DirectorControlReply = z
  .discriminatedUnion("ok", [DirectorControlSuccess, DirectorControlFailure])
  .describe("One reply line, in request order: ok with a result, or not ok with an error")
  .meta({ id: "DirectorControlReply" });
export type DirectorControlReply = z.infer<typeof DirectorControlReply>;

/** Each command's reply schema: its own result, or an error. */
export const directorControlReplies = {
  status: controlReply(DirectorStatusResult, DirectorControlFailure),
  load_table: controlReply(DirectorLoadTableResult, DirectorControlFailure),
  stats: controlReply(DirectorStatsResult, DirectorControlFailure),
  explain: controlReply(DirectorExplainResult, DirectorControlFailure),
  set_gateway: controlReply(DirectorSetGatewayResult, DirectorControlFailure),
} as const satisfies Record<DirectorControlCommand, z.ZodType>;

export type DirectorControlReplyFor<C extends DirectorControlCommand> = z.infer<
  (typeof directorControlReplies)[C]
>;

/** JSON Schema (draft 2020-12) of the protocol: a line is a request or a reply; $defs name each part. */
export function directorControlJsonSchema() {
  return z.toJSONSchema(
    z.union([DirectorControlRequest, DirectorControlReply]).meta({
      title: `tide-director control protocol v${DIRECTOR_CONTROL_PROTOCOL_VERSION}`,
      description:
        `Newline-delimited JSON over the UNIX socket ${DIRECTOR_CONTROL_SOCKET_PATH}: each line is one ` +
        "request or one reply. Generated from packages/contracts/src/director-control.ts; do not edit.",
    }),
  );
}
