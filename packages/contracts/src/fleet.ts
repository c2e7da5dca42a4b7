import { z } from "zod";
import { jsonBoolean } from "./boolean";
import { DirectorId, PoolId, ProxyId, TableVersionId } from "./ids";
import { PoolHealthCheck } from "./proxy-health";
import { ProxyAction, ProxyState } from "./proxy-state-machine";

export const HashField = z
  .enum(["src_addr", "dst_addr", "src_port", "dst_port"])
  .describe("A packet field hashed to pick a table row");
export type HashField = z.infer<typeof HashField>;

export const BindProto = z.enum(["tcp", "udp"]).describe("Transport protocol of a VIP bind");

export const Bind = z
  .object({
    id: z.string().describe("Bind id"),
    address: z.string().describe("VIP address or CIDR network (IPv4 or IPv6)"),
    prefixBits: z.number().int().describe("Prefix length: 32/128 for a single address"),
    proto: BindProto,
    portStart: z.number().int().min(0).max(65535).describe("First port of the range (inclusive)"),
    portEnd: z.number().int().min(0).max(65535).describe("Last port of the range (inclusive)"),
  })
  .describe("A VIP bind: the packets a pool receives");
export type Bind = z.infer<typeof Bind>;

export const ProxyHealth = z.object({
  healthy: z.boolean().describe("Health check result (all checks must pass)"),
  reason: z.string().describe("Why the proxy is (un)healthy, from the last health change"),
  changedAt: z.string().datetime().describe("When health last changed (ISO 8601)"),
  pinned: z
    .boolean()
    .nullable()
    .describe("An operator's pin: health held healthy (true) or unhealthy (false); null = the checks decide"),
});

export const Proxy = z
  .object({
    id: ProxyId,
    poolId: PoolId,
    address: z.string().describe("IPv4 address used as the outer GUE destination"),
    hostname: z.string().describe("Host name of the proxy"),
    state: ProxyState,
    stateChangedAt: z.string().datetime().describe("When the state last changed (ISO 8601)"),
    health: ProxyHealth,
    slot: z.number().int().describe("Index of the proxy in the pool's backend list"),
  })
  .describe("A proxy (backend) of a pool");
export type Proxy = z.infer<typeof Proxy>;

export const Director = z
  .object({
    id: DirectorId,
    hostname: z.string().describe("Host name of the director"),
    poolIds: z.array(PoolId).describe("Pools this director serves"),
  })
  .describe("A director: receives VIP packets and forwards them to proxies by the pool's table");
export type Director = z.infer<typeof Director>;

export const TableVersionSummary = z
  .object({
    id: TableVersionId,
    poolId: PoolId,
    version: z.number().int().describe("Per-pool version number, 1, 2, 3…"),
    contentHash: z.string().describe("sha256 (hex) of the GLBD file (v3: carries the hash fields)"),
    cause: z.string().describe("What produced this version, e.g. 'proxy.drain prx_…'"),
    reason: z.string().describe("Operator's reason, if given"),
    actor: z.string().describe("Who caused it (user email, token name or 'system')"),
    createdAt: z.string().datetime().describe("When the version was written (ISO 8601)"),
  })
  .describe("An immutable forwarding table version");
export type TableVersionSummary = z.infer<typeof TableVersionSummary>;

export const HashMigration = z
  .object({
    from: z.array(HashField).describe("The fields the pool hashed on before (the tables' alt_hash_fields)"),
    to: z.array(HashField).describe("The fields it hashes on now"),
    startedAt: z.string().datetime().describe("When the change was made (ISO 8601)"),
  })
  .describe(
    "A hash-field change in progress: every table carries the old fields as alt_hash_fields, so a flow " +
      "that hashes to another row now still reaches its old proxy as an extra hop, until it is finished",
  );
export type HashMigration = z.infer<typeof HashMigration>;

export const PoolSummary = z
  .object({
    id: PoolId,
    name: z.string().describe("Pool name (unique)"),
    description: z.string().describe("What the pool serves, for humans"),
    hashFields: z.array(HashField).describe("Fields hashed to pick a row, in hashing order"),
    hashMigration: HashMigration.nullable().describe(
      "A hash-field change still migrating (established flows reach their old proxy); null = none",
    ),
    healthCheck: PoolHealthCheck.describe("How the directors check this pool's proxies"),
    binds: z.array(Bind).describe("The VIP binds whose packets this pool receives"),
    proxyCounts: z
      .object({
        active: z.number().int().describe("Active proxies"),
        draining: z.number().int().describe("Draining proxies"),
        inactive: z.number().int().describe("Inactive proxies"),
        filling: z.number().int().describe("Filling proxies"),
        unhealthy: z.number().int().describe("Unhealthy proxies (any state)"),
      })
      .describe("Number of proxies per state, and unhealthy ones"),
    directorIds: z.array(DirectorId).describe("Directors serving this pool"),
    currentVersion: TableVersionSummary.nullable().describe(
      "The newest table version; null until the pool first has a usable proxy",
    ),
  })
  .describe("A pool (service) without its secrets");
export type PoolSummary = z.infer<typeof PoolSummary>;

export const ProxyActionOption = z
  .object({
    proxyId: ProxyId,
    action: ProxyAction,
    label: z.string().describe('The action\'s name in the console, e.g. "Drain", "Abort drain"'),
    from: ProxyState,
    to: ProxyState,
    abort: z.boolean().describe("Undoes the change in progress"),
    allowed: z.boolean().describe("The API would accept it now (the same check the action makes)"),
    refusal: z
      .object({
        code: z.string().describe("The error code the action would answer with, e.g. conflict"),
        message: z.string().describe("Why it is refused, in the API's words"),
        blockingProxyId: ProxyId.nullable().describe("The proxy whose change in progress blocks it"),
        blockingHostname: z.string().nullable().describe("That proxy's host name"),
      })
      .nullable()
      .describe("Why not, when not allowed"),
  })
  .describe("An action a proxy's state offers, and whether the pool's invariants allow it now");
export type ProxyActionOption = z.infer<typeof ProxyActionOption>;

export const PoolChangeInProgress = z
  .object({
    proxyId: ProxyId,
    hostname: z.string().describe("Host name of the proxy that is not active"),
    state: ProxyState,
    since: z.string().datetime().describe("When it entered that state (ISO 8601)"),
  })
  .describe("The pool's one proxy that is not active: other proxies wait until it is active again");
export type PoolChangeInProgress = z.infer<typeof PoolChangeInProgress>;

export const PoolDetail = PoolSummary.extend({
  proxies: z.array(Proxy).describe("The pool's proxies in slot order"),
  directors: z.array(Director).describe("Directors serving this pool"),
  actions: z
    .array(ProxyActionOption)
    .describe("Per proxy, the actions its state offers and whether each is allowed now, or why not"),
  changeInProgress: PoolChangeInProgress.nullable().describe(
    "The proxy that is not active (draining, inactive or filling), if any",
  ),
}).describe("A pool with its proxies and directors (never its secrets)");
export type PoolDetail = z.infer<typeof PoolDetail>;

// ---------------------------------------------------------------------------------------------------
// Fleet changes (pools, binds, hash fields, directors). Services re-check everything these schemas
// check, and more (CIDR syntax, overlaps), answering with field-level errors in `details.fields`.

export const PoolName = z
  .string()
  .regex(/^[a-z0-9][a-z0-9-]{0,62}$/, "must be 1-63 lower-case letters, digits and dashes")
  .describe("Pool name: 1-63 lower-case letters, digits and dashes, unique");

export const BindInput = z
  .object({
    address: z
      .string()
      .min(2)
      .max(64)
      .describe('VIP address or CIDR network: "203.0.113.10", "203.0.113.64/26", "2001:db8::10"'),
    proto: BindProto,
    portStart: z.number().int().min(0).max(65535).describe("First port of the range (inclusive)"),
    portEnd: z
      .number()
      .int()
      .min(0)
      .max(65535)
      .optional()
      .describe("Last port of the range (inclusive); defaults to portStart"),
  })
  .describe("A VIP bind to create");
export type BindInput = z.infer<typeof BindInput>;

/** GLBD limit: 256 binds per table. */
export const MAX_POOL_BINDS = 256;

export const BindList = z
  .array(BindInput)
  .min(1)
  .max(MAX_POOL_BINDS)
  .describe("The pool's binds (1-256, none overlapping)");

export const HashFieldList = z
  .array(HashField)
  .min(1)
  .max(4)
  .describe("Fields hashed to pick a row, e.g. [src_addr] or [src_addr, src_port]; no duplicates");

export const ChangeReason = z
  .string()
  .max(500)
  .optional()
  .describe("Why (kept in the audit log and the table version)");

export const CreatePoolInput = z
  .object({
    name: PoolName,
    description: z.string().max(500).optional().describe("What the pool serves, for humans"),
    hashFields: HashFieldList.optional().describe("Fields hashed to pick a row; defaults to [src_addr]"),
    binds: BindList,
  })
  .describe("A new pool: no proxies and no table version until its first proxy joins");
export type CreatePoolInput = z.infer<typeof CreatePoolInput>;

export const UpdatePoolInput = z
  .object({
    poolId: PoolId,
    name: PoolName.optional(),
    description: z.string().max(500).optional().describe("What the pool serves, for humans"),
  })
  .describe("Rename or re-describe a pool (no table change)");

export const SetBindsInput = z
  .object({ poolId: PoolId, binds: BindList, reason: ChangeReason })
  .describe("Replace a pool's binds (a new table version; no row moves)");

export const SetHealthCheckInput = z
  .object({ poolId: PoolId, healthCheck: PoolHealthCheck, reason: ChangeReason })
  .describe("Set how the directors check a pool's proxies (no table change until health changes)");

export const SetHealthPinInput = z
  .object({
    proxyId: ProxyId,
    pinned: jsonBoolean()
      .nullable()
      .describe("true: hold healthy, false: hold unhealthy, null: the health checks decide again"),
    reason: z.string().min(1).max(500).describe("Why (kept in the audit log)"),
  })
  .describe("Pin a proxy's health whatever the checks say, or unpin it");

export const SetHashFieldsInput = z
  .object({ poolId: PoolId, hashFields: HashFieldList, reason: ChangeReason })
  .describe("Replace a pool's hash fields (a new table version; flows move, see the preview)");

export const FinishHashMigrationInput = z
  .object({ poolId: PoolId, reason: ChangeReason })
  .describe(
    "Finish a hash-field migration: the tables drop the old fields; a flow still on its old proxy " +
      "through them is reset (see the pool's alternate-hash traffic first)",
  );

export const PreviewHashFieldsInput = z
  .object({
    poolId: PoolId,
    hashFields: z
      .string()
      .min(1)
      .max(64)
      .describe("Comma-separated hash fields to compare with the pool's, e.g. src_addr,src_port"),
  })
  .describe("Which share of client flows would change primary proxy with other hash fields");

export const HashFieldsPreview = z
  .object({
    poolId: PoolId,
    from: z.array(HashField).describe("The pool's hash fields now"),
    to: z.array(HashField).describe("The proposed hash fields (in hashing order)"),
    tableVersionId: TableVersionId.nullable().describe(
      "Version the sample was mapped through; null when the pool has no table yet",
    ),
    sampleFlows: z
      .number()
      .int()
      .describe("Number of sample client flows (deterministic: the same sample on every call)"),
    flowsMoved: z.number().int().describe("Sample flows whose primary proxy changes"),
    fractionMoved: z
      .number()
      .min(0)
      .max(1)
      .nullable()
      .describe("flowsMoved / sampleFlows (0..1); null when the pool has no table yet"),
    migrates: z
      .boolean()
      .describe(
        "The change migrates: the tables keep the old fields as alt_hash_fields, so established flows " +
          "keep their proxy (false: no director serves the pool or it has no table; nothing to keep)",
      ),
    refusal: z
      .string()
      .nullable()
      .describe("Why the change would be refused now (a migration in progress); null = allowed"),
  })
  .describe("How many flows move when the hash fields change, and whether connections are kept");
export type HashFieldsPreview = z.infer<typeof HashFieldsPreview>;

export const PoolChangeResult = z
  .object({
    pool: PoolDetail,
    tableVersion: TableVersionSummary.nullable().describe(
      "The version written by the change; null when the pool has no usable proxy to build one from",
    ),
  })
  .describe("A pool after a change, with the table version it produced");

export const RemovePoolInput = z.object({ poolId: PoolId, reason: ChangeReason });

/** A DNS host name: dot-separated labels of 1-63 letters, digits and inner dashes, 253 at most. */
export const HOSTNAME_PATTERN =
  /^(?=.{1,253}$)[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?(\.[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)*$/i;

export const DirectorHostname = z
  .string()
  .regex(HOSTNAME_PATTERN, "must be a host name (letters, digits, dashes and dots)")
  .describe("Host name the director's tide-agent reports (the host token's host)");

export const RegisterDirectorInput = z
  .object({ hostname: DirectorHostname })
  .describe("Register a director by the host name its agent reports");

export const DirectorIdInput = z.object({ directorId: DirectorId });
export const DirectorPoolInput = z
  .object({ directorId: DirectorId, poolId: PoolId })
  .describe("A director and a pool it serves (or should serve)");

export const DirectorDetail = Director.extend({
  createdAt: z.string().datetime().describe("When the director was registered (ISO 8601)"),
  pools: z
    .array(z.object({ id: PoolId, name: z.string().describe("Pool name") }))
    .describe("Pools this director serves, by name"),
}).describe("A director with the pools it serves");
export type DirectorDetail = z.infer<typeof DirectorDetail>;

export const PoolRemoved = z
  .object({
    removed: z
      .object({ id: PoolId, name: z.string().describe("Pool name") })
      .describe("The pool that was removed"),
  })
  .describe("A removed pool (its history stays in the audit log)");

export const ProxyCreated = Proxy.extend({
  tableVersion: TableVersionSummary.nullable().describe(
    "Version written because the proxy joined active (pool carried no traffic); null when it joined inactive",
  ),
}).describe("A new proxy, and the table version its joining wrote");
export type ProxyCreated = z.infer<typeof ProxyCreated>;

export const ProxyRemoved = z
  .object({
    removed: Proxy.describe("The proxy that was removed"),
    tableVersion: TableVersionSummary.nullable().describe(
      "Version without it; null when no proxy is left in rotation to build one",
    ),
  })
  .describe("A removed proxy and the table version that dropped it");

export const DirectorRemoved = z
  .object({ removed: DirectorDetail.describe("The director that was removed, with the pools it served") })
  .describe("A removed director");
