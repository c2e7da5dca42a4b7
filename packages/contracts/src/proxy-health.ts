import { z } from "zod";
import { jsonBoolean } from "./boolean";
import { Ipv4Address } from "./control-socket";
import { HealthcheckKind } from "./healthcheck-wire";

/**
 * Health checks of proxies (issue 12), as glb-healthcheck does them: the agent on every director host
 * checks each proxy of the pools its director serves, through the GUE path a client packet takes
 * (tide-healthcheck's `gue` check) and, as the pool says, by HTTP or TCP to the proxy's own address.
 * A proxy is up on a director after `rise` passing rounds in a row and down after `fall` failing
 * ones; a round passes when every check of it passes. Directors report; the console combines the
 * reports of all directors (services/health/proxy-health.plan.ts) and sets the proxy's table health.
 */

export const HEALTH_DEFAULTS = {
  intervalMs: 2_000,
  timeoutMs: 1_000,
  rise: 3,
  fall: 3,
} as const;

export const HealthService = z
  .discriminatedUnion("kind", [
    z.strictObject({
      kind: z.literal("http"),
      port: z.int().min(1).max(65535).describe("Port on the proxy's own address"),
      path: z
        .string()
        .regex(/^\/[\x21-\x7e]{0,255}$/, "must be an absolute path of printable characters")
        .default("/")
        .describe("Path to GET"),
      expectStatus: z.int().min(100).max(599).default(200).describe("Status that means up"),
    }),
    z.strictObject({
      kind: z.literal("tcp"),
      port: z.int().min(1).max(65535).describe("Port on the proxy's own address to connect to"),
    }),
  ])
  .describe("The service check besides the GUE check: HTTP GET or TCP connect");
export type HealthService = z.infer<typeof HealthService>;

export const PoolHealthCheck = z
  .strictObject({
    enabled: jsonBoolean().default(true).describe("Off: directors do not check this pool's proxies"),
    intervalMs: z.int().min(500).max(60_000).default(HEALTH_DEFAULTS.intervalMs).describe("One round every"),
    timeoutMs: z
      .int()
      .min(100)
      .max(30_000)
      .default(HEALTH_DEFAULTS.timeoutMs)
      .describe("A check fails after this long (less than the interval)"),
    rise: z.int().min(1).max(10).default(HEALTH_DEFAULTS.rise).describe("Passing rounds in a row to be up"),
    fall: z.int().min(1).max(10).default(HEALTH_DEFAULTS.fall).describe("Failing rounds in a row to be down"),
    gue: jsonBoolean().default(true).describe("Check the GUE path (an ICMP echo inside GUE)"),
    service: HealthService.nullable().default(null).describe("HTTP or TCP check; null = GUE only"),
  })
  .refine((c) => c.timeoutMs < c.intervalMs, {
    message: "timeoutMs must be less than intervalMs",
    path: ["timeoutMs"],
  })
  .refine((c) => !c.enabled || c.gue || c.service !== null, {
    message: "an enabled health check needs the GUE check or a service check",
    path: ["gue"],
  })
  .describe("How directors check a pool's proxies");
export type PoolHealthCheck = z.infer<typeof PoolHealthCheck>;

/**
 * A pool's stored settings. Never configured ({}) means checks off: a pool's proxies are checked
 * once an operator says how (HAProxy's `check` is per server too). A value that no longer parses
 * counts as off as well, never as an error on every pool read.
 */
export function poolHealthCheck(stored: unknown): PoolHealthCheck {
  const configured = typeof stored === "object" && stored !== null && Object.keys(stored).length > 0;
  const r = configured ? PoolHealthCheck.safeParse(stored) : null;
  return r?.success ? r.data : PoolHealthCheck.parse({ enabled: false });
}

/** What the console asks a director host's agent to check, per pool (in DesiredState). */
export const HealthCheckJob = z
  .object({
    poolId: z.string(),
    pool: z.string().describe("Pool name (logs)"),
    guePort: z.int().min(1).max(65535),
    check: PoolHealthCheck,
    proxies: z
      .array(z.strictObject({ proxyId: z.string(), address: Ipv4Address, hostname: z.string() }))
      .describe("The pool's proxies in its table (every state but inactive)"),
  })
  .describe("The proxies of one pool this director host checks");
export type HealthCheckJob = z.infer<typeof HealthCheckJob>;

export const HealthCheckOutcome = z
  .strictObject({
    kind: HealthcheckKind,
    ok: jsonBoolean(),
    latencyUs: z.int().min(0).nullable(),
    detail: z.string().max(300),
    at: z.iso.datetime().describe("When the check finished"),
  })
  .describe("The last outcome of one check of a proxy");
export type HealthCheckOutcome = z.infer<typeof HealthCheckOutcome>;

export const ProxyHealthView = z
  .strictObject({
    poolId: z.string(),
    proxyId: z.string(),
    up: jsonBoolean().nullable().describe("After rise/fall; null until rise or fall rounds have been seen"),
    since: z.iso.datetime().nullable().describe("When `up` last changed on this director"),
    checks: z.array(HealthCheckOutcome).describe("The last outcome of each check"),
  })
  .describe("One director's view of one proxy");
export type ProxyHealthView = z.infer<typeof ProxyHealthView>;

/**
 * POST /api/v1/agent/health: a director host's views of the proxies it checks. Sent at once when a
 * view changes (up/down) and every HEALTH_REPORT_EVERY_MS otherwise, so the console can tell a
 * silent director from a healthy one.
 */
export const AgentHealthReport = z
  .strictObject({
    views: z.array(ProxyHealthView).max(4096),
  })
  .describe("A director host's views of the proxies it checks");
export type AgentHealthReport = z.infer<typeof AgentHealthReport>;

export const HealthChange = z
  .strictObject({
    proxyId: z.string(),
    healthy: z.boolean(),
    reason: z.string().describe("Why, naming the directors and the failing checks"),
  })
  .describe("A proxy's table health changed");
export type HealthChange = z.infer<typeof HealthChange>;

export const AgentHealthReply = z
  .strictObject({
    accepted: z.int().min(0).describe("Views stored"),
    ignored: z
      .array(z.strictObject({ proxyId: z.string(), reason: z.string() }))
      .describe("Views not stored: proxies this director does not serve"),
    changed: z.array(HealthChange).describe("Health changes this report caused"),
  })
  .describe("The console's answer to a health report");
export type AgentHealthReply = z.infer<typeof AgentHealthReply>;

export const HEALTH_REPORT_EVERY_MS = 5_000;
/**
 * Flaps counted over this window: each automatic health change of a proxy in it doubles the hold
 * before the proxy may return to healthy (services/health/proxy-health.plan.ts). Here, not in the plan,
 * because the pool page says it too ("flapped 3 times in the last 10 min").
 */
export const FLAP_WINDOW_MS = 10 * 60_000;
/** A director's view older than this is not counted (its agent went silent). */
export const HEALTH_VIEW_STALE_AFTER_MS = 3 * HEALTH_REPORT_EVERY_MS;

export const DirectorHealthView = z
  .strictObject({
    director: z.string().describe("The director's host name"),
    up: z.boolean().nullable(),
    since: z.iso.datetime().nullable(),
    reportedAt: z.iso.datetime().describe("When the console last heard this view"),
    stale: z.boolean().describe("Older than HEALTH_VIEW_STALE_AFTER_MS: not counted"),
    checks: z.array(HealthCheckOutcome),
  })
  .describe("One director's view of a proxy, as the console last heard it");
export type DirectorHealthView = z.infer<typeof DirectorHealthView>;

export const PoolHealth = z
  .strictObject({
    poolId: z.string(),
    check: PoolHealthCheck.describe("How the directors check this pool's proxies"),
    failOpen: z.boolean().describe("Every proxy in rotation is unhealthy: the table serves them all"),
    proxies: z.array(
      z.strictObject({
        proxyId: z.string(),
        hostname: z.string(),
        healthy: z.boolean(),
        pinned: z.boolean().nullable(),
        reason: z.string(),
        changedAt: z.iso.datetime(),
        recentFlips: z
          .int()
          .min(0)
          .describe("Automatic health changes in the last FLAP_WINDOW_MS; each doubles the recovery hold"),
        held: z
          .boolean()
          .describe(
            "Unhealthy, its checks pass on a majority of directors, but it waits out a recovery hold after flapping",
          ),
        heldUntil: z.iso
          .datetime()
          .nullable()
          .describe("When held: the time it returns to healthy if its checks still pass; null when not held"),
        holdReason: z
          .string()
          .nullable()
          .describe(
            "When held, why: 'up on 2 of 2 directors (…), held until …: flapped 3 times in the last 10 min'",
          ),
        views: z.array(DirectorHealthView).describe("Each serving director's view"),
      }),
    ),
  })
  .describe("A pool's proxies' health with every director's view");
export type PoolHealth = z.infer<typeof PoolHealth>;
