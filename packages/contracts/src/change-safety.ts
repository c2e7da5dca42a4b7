import { z } from "zod";
import { DirectorId, PoolId, ProxyId } from "./ids";
import { safeText } from "./text";

/**
 * Whether a fleet change breaks established connections (issue 26 item 1): a bind change, a
 * director unassigned from a pool or removed. GLB directors are stateless and forward by the
 * pool's binds; routers spread flows over the directors (ECMP). So:
 *
 * - removing a bind, or narrowing its address or port range, stops the forwarding of those
 *   packets: every established connection to the VIP:ports no longer covered breaks;
 * - unassigning a director breaks nothing while another one serves the pool (same table, the
 *   routers move its flows); unassigning the last one stops the pool's VIPs: all of its
 *   established connections break. Removing a director is unassigning it from each of its pools;
 * - adding binds and assigning a director break nothing.
 *
 * Counts come from the proxies' agents (ESTABLISHED sockets per local address:port, TCP). A
 * proxy without a fresh report is unknown, never 0; the API refuses a change only when the
 * reported counts say it breaks connections, and then only without a reason.
 */

export const SafetyReason = safeText()
  .max(500)
  .optional()
  .describe(
    "Why (kept in the audit log); required when the change is predicted to break established " +
      "connections (422 without one)",
  );

export const BrokenEndpoint = z
  .object({
    address: z.string().describe("VIP address the connections are to"),
    port: z.int().min(0).max(65535).describe("VIP port"),
    count: z.int().min(1).describe("Established connections to it that break, over the reporting proxies"),
  })
  .describe("A VIP address:port whose established connections break");

export const ChangeSafety = z
  .object({
    breaks: z
      .boolean()
      .nullable()
      .describe(
        "true: breaks established connections the proxies reported (refused without a reason); " +
          "false: breaks none; null: it could, but a proxy it would cut sent no fresh report",
      ),
    broken: z
      .int()
      .min(0)
      .describe(
        "Established connections that break, over the proxies with a fresh report; at least this " +
          "many when `unknown` is not empty",
      ),
    proxies: z
      .array(
        z.object({
          proxyId: ProxyId,
          hostname: z.string(),
          broken: z.int().min(1).nullable().describe("Its connections that break; null = unknown"),
        }),
      )
      .describe("The proxies whose connections break (or may: null), in slot order"),
    endpoints: z.array(BrokenEndpoint).describe("The VIP address:ports whose connections break, most first"),
    unknown: z
      .array(
        z.object({
          proxyId: ProxyId,
          hostname: z.string(),
          reason: z.string().describe('Why there is no fresh figure, e.g. "no report for 12 s"'),
        }),
      )
      .describe("Proxies the change would cut whose established count is unknown"),
    message: z.string().describe("The prediction in a sentence or two, for humans"),
  })
  .describe("What a fleet change does to established connections, predicted from the proxies' reports");
export type ChangeSafety = z.infer<typeof ChangeSafety>;

export const PreviewBindsInput = z
  .object({
    poolId: PoolId,
    binds: z
      .string()
      .min(1)
      .max(16_384)
      .describe(
        "The proposed binds, comma separated, each PROTO/ADDRESS[/BITS]:PORT[-PORT] as the audit " +
          "log names them, e.g. tcp/203.0.113.10:443,tcp/203.0.113.64/26:8000-8099,udp/2001:db8::10:53",
      ),
  })
  .describe("What replacing a pool's binds would do to its established connections");

export const BindsPreview = ChangeSafety.extend({
  poolId: PoolId,
  served: z
    .boolean()
    .describe("A director serves the pool and it has a table: only then do its binds forward anything"),
  uncovered: z
    .array(z.string())
    .describe(
      "The pool's binds (PROTO/ADDRESS:PORTS) the new list does not cover in full: removed or " +
        "narrowed, their packets stop being forwarded",
    ),
}).describe("Replacing a pool's binds: which binds stop being forwarded and the connections that break");
export type BindsPreview = z.infer<typeof BindsPreview>;

export const DirectorRef = z.object({ id: DirectorId, hostname: z.string() });

export const UnassignPreview = ChangeSafety.extend({
  directorId: DirectorId,
  poolId: PoolId,
  poolName: z.string(),
  last: z.boolean().describe("No other director serves the pool: its VIPs stop being forwarded"),
  stillServedBy: z
    .array(DirectorRef)
    .describe("The other directors that serve the pool with the same table (they take its flows)"),
}).describe("Unassigning a director from a pool: nothing breaks unless it is the pool's last director");
export type UnassignPreview = z.infer<typeof UnassignPreview>;

export const DirectorRemovalPreview = z
  .object({
    directorId: DirectorId,
    hostname: z.string(),
    breaks: ChangeSafety.shape.breaks,
    broken: ChangeSafety.shape.broken,
    pools: z.array(UnassignPreview).describe("Each pool it serves, as if unassigned from it"),
    message: z.string().describe("The prediction in a sentence or two, for humans"),
  })
  .describe("Removing a director: unassigning it from each of its pools");
export type DirectorRemovalPreview = z.infer<typeof DirectorRemovalPreview>;

export const UnassignDirectorInput = z
  .object({ directorId: DirectorId, poolId: PoolId, reason: SafetyReason })
  .describe("Stop a director serving a pool");

export const RemoveDirectorInput = z
  .object({ directorId: DirectorId, reason: SafetyReason })
  .describe("Remove a director: it stops serving each of its pools");
