import { z } from "zod";
import { DirectorId, PoolId, ProxyId, TableVersionId } from "./ids";

export const ProxyState = z
  .enum(["active", "draining", "inactive", "filling"])
  .describe("Proxy state: active (serves), draining (no new flows), inactive (out of the table), filling");
export type ProxyState = z.infer<typeof ProxyState>;

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
    contentHash: z.string().describe("sha256 (hex) of the GLBD v2 file"),
    cause: z.string().describe("What produced this version, e.g. 'proxy.drain prx_…'"),
    reason: z.string().describe("Operator's reason, if given"),
    actor: z.string().describe("Who caused it (user email, token name or 'system')"),
    createdAt: z.string().datetime(),
  })
  .describe("An immutable forwarding table version");
export type TableVersionSummary = z.infer<typeof TableVersionSummary>;

export const PoolSummary = z
  .object({
    id: PoolId,
    name: z.string(),
    description: z.string(),
    hashFields: z.array(HashField),
    binds: z.array(Bind),
    proxyCounts: z
      .object({
        active: z.number().int(),
        draining: z.number().int(),
        inactive: z.number().int(),
        filling: z.number().int(),
        unhealthy: z.number().int(),
      })
      .describe("Number of proxies per state, and unhealthy ones"),
    directorIds: z.array(DirectorId),
    currentVersion: TableVersionSummary.nullable(),
  })
  .describe("A pool (service) without its secrets");
export type PoolSummary = z.infer<typeof PoolSummary>;

export const PoolDetail = PoolSummary.extend({
  proxies: z.array(Proxy),
  directors: z.array(Director),
});
export type PoolDetail = z.infer<typeof PoolDetail>;
