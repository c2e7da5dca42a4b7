import { z } from "zod";

/**
 * Live traffic of a pool's proxies (issue 12 item 3, issue 26 item 5), from their hosts' agents:
 * tide-redirect's rates on the pool's own VIPs (a proxy in two pools shows each pool its figures)
 * and the ESTABLISHED connections to them, with the open findings of each proxy's host.
 * GET /api/v1/pools/{id}/traffic; the pool page is pushed an update after each batch.
 */

const PerSecond = z
  .number()
  .min(0)
  .nullable()
  .describe("Per second over the agent's last interval; null = unknown");

export const FindingCounts = z
  .strictObject({ critical: z.int().min(0), warn: z.int().min(0), info: z.int().min(0) })
  .describe("Open (and acknowledged) findings by severity");
export type FindingCounts = z.infer<typeof FindingCounts>;

export const ProxyTraffic = z
  .strictObject({
    proxyId: z.string(),
    hostname: z.string(),
    hostId: z
      .string()
      .nullable()
      .describe("The host whose agent reports for this proxy (same name); null = none"),
    at: z.iso.datetime().nullable().describe("When these figures were sampled; null = never"),
    stale: z.boolean().describe("No figures in the last PROXY_TRAFFIC_STALE_AFTER_MS"),
    late: z
      .boolean()
      .describe(
        "The host's last reading is late (its interval was over twice the expected one, or none has " +
          "come for that long): the rates are null, not zeros; lateReason says why",
      ),
    lateReason: z
      .string()
      .nullable()
      .describe("Why the figures are late, for humans; null when they are not"),
    scope: z
      .enum(["pool", "host"])
      .describe(
        "pool: the rates count only this pool's VIPs (tide-redirect's VIP counters); host: the host's " +
          "totals, from an older tide-redirect or agent (a proxy in two pools shows the same on both)",
      ),
    newConnectionsPerS: PerSecond.describe("tide-redirect accepted_syn: new connections landing here"),
    forwardedToAlternatePerS: PerSecond.describe(
      "forwarded_to_alternate: packets sent on to the row's other proxy",
    ),
    acceptedEstablishedPerS: PerSecond.describe(
      "accepted_established: packets of flows a local socket owns (first hop or not)",
    ),
    acceptedSecondChancePerS: PerSecond.describe(
      "accepted_second_chance: packets accepted here for a flow whose first hop is another proxy",
    ),
    acceptedAlternateHashPerS: PerSecond.describe(
      "accepted_alternate_hash: of those, the packets that came through a hash-field migration's old fields",
    ),
    acceptedLastResortPerS: PerSecond.describe(
      "accepted_last_resort: packets with no owner and no hop left (the kernel resets them); null with scope host",
    ),
    secondChancePerS: PerSecond.describe(
      "Packets this proxy forwarded or accepted because of a second chance: forwarded_to_alternate + " +
        "accepted_second_chance; null from a tide-redirect without accepted_second_chance",
    ),
    established: z
      .int()
      .min(0)
      .nullable()
      .describe("ESTABLISHED connections to the pool's VIPs; null = unknown"),
    establishedFallingPerS: z
      .number()
      .nullable()
      .describe("How fast the established connections fall over the last 10 s (negative: rising)"),
    findings: FindingCounts.describe("The host's open findings"),
  })
  .describe("One proxy's live traffic");
export type ProxyTraffic = z.infer<typeof ProxyTraffic>;

export const PoolTraffic = z
  .strictObject({
    poolId: z.string(),
    proxies: z.array(ProxyTraffic),
    totals: z.strictObject({
      newConnectionsPerS: z.number().min(0).nullable(),
      established: z.int().min(0).nullable(),
      findings: FindingCounts,
    }),
  })
  .describe("A pool's proxies' live traffic, and totals");
export type PoolTraffic = z.infer<typeof PoolTraffic>;

/** A proxy whose host sent nothing for this long shows stale figures. */
export const PROXY_TRAFFIC_STALE_AFTER_MS = 10_000;

export const FleetLive = z
  .strictObject({
    pools: z.array(
      z.strictObject({
        poolId: z.string(),
        newConnectionsPerS: z.number().min(0).nullable(),
        established: z.int().min(0).nullable(),
        findings: FindingCounts.describe("Open findings of the pool's proxies' hosts"),
      }),
    ),
    findings: FindingCounts.describe("Every open (and acknowledged) finding of the fleet"),
  })
  .describe("Per pool live totals and the fleet's open findings (the fleet page and the nav)");
export type FleetLive = z.infer<typeof FleetLive>;
