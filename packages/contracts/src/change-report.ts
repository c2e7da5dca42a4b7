import { z } from "zod";
import { DirectorId, PoolId, ProxyId, TableVersionId } from "./ids";
import { ConnectionImpact } from "./tables";

/**
 * What a table change did to a pool's connections, measured (issue 26 item 2): GLB's promise that
 * a drain, a fill or a hash-field change breaks nothing, checked against tide-redirect's own records
 * on every proxy of the pool. Opened with each table version; measured from the change until its
 * directors serve it plus a settle time (or a newer version, or the longest window); written once
 * every proxy's readings cover the window. Connections are flows (distinct TCP 4-tuples), counted
 * from tide-redirect's `flows` records; packets are its per-VIP counters, for scale.
 */

/** Flows listed per kind in a report (the counts are complete; the list is for naming them). */
export const CHANGE_REPORT_MAX_LISTED_FLOWS = 50;

export const ChangeReportStatus = z
  .enum(["measuring", "closing", "done"])
  .describe(
    "measuring: the window is open (directors taking the version up, then the settle time); " +
      "closing: the window ended and the report waits for the proxies' readings to cover it; " +
      "done: written",
  );
export type ChangeReportStatus = z.infer<typeof ChangeReportStatus>;

export const FlowKind = z
  .enum(["secondChance", "alternateHash", "lastResort"])
  .describe(
    "secondChance: accepted by its proxy after arriving as a hop (its first hop is another proxy); " +
      "alternateHash: of those, through the old hash fields of a hash-field migration; lastResort: no " +
      "proxy owned it and no hop was left, so the kernel reset it (a broken connection)",
  );
export type FlowKind = z.infer<typeof FlowKind>;

export const ChangeReportFlow = z
  .object({
    hostname: z.string().describe("The proxy whose tide-redirect recorded it"),
    clientAddress: z.string().describe("Client address as the client sends"),
    clientPort: z.int().min(0).max(65535),
    address: z.string().describe("The VIP"),
    port: z.int().min(0).max(65535).describe("The VIP port"),
    packets: z.number().min(0).describe("Packets of this kind the flow's record holds (since it was made)"),
    lastAt: z.iso.datetime().describe("Its last packet of this kind"),
  })
  .describe("One flow of a kind, named");
export type ChangeReportFlow = z.infer<typeof ChangeReportFlow>;

const PerKind = <T extends z.ZodType>(t: T) => z.object({ secondChance: t, alternateHash: t, lastResort: t });

export const ChangeReportBody = z
  .object({
    windowStart: z.iso.datetime().describe("When the change was made"),
    windowEnd: z.iso.datetime().describe("When the window ended"),
    ended: z
      .string()
      .describe('Why it ended, for humans, e.g. "served by 2/2 directors for 20 s" or "v9 replaced it"'),
    directors: z
      .array(
        z.object({
          directorId: DirectorId,
          hostname: z.string(),
          servedAt: z.iso
            .datetime()
            .nullable()
            .describe("When its agent first reported serving this version; null = not by the window's end"),
        }),
      )
      .describe("The directors assigned to the pool at the window's end"),
    proxies: z
      .array(
        z.object({
          proxyId: ProxyId.nullable().describe("null: no longer in the pool"),
          hostname: z.string(),
          reported: z.boolean().describe("Whether its readings (counters and flows) cover the whole window"),
          reason: z.string().nullable().describe("Why not, for humans; null when reported"),
          packets: PerKind(z.number().min(0))
            .nullable()
            .describe("tide-redirect's per-VIP packet counters on the pool's VIPs over the window"),
          flows: PerKind(z.int().min(0)).describe(
            "Distinct flows of each kind on the pool's VIPs in the window",
          ),
        }),
      )
      .describe("Each proxy the pool had at the change or has at the window's end"),
    flows: PerKind(z.int().min(0)).describe("Distinct flows of each kind, over every proxy"),
    listed: PerKind(z.array(ChangeReportFlow).max(CHANGE_REPORT_MAX_LISTED_FLOWS)).describe(
      `Up to ${CHANGE_REPORT_MAX_LISTED_FLOWS} flows of each kind, most recent first`,
    ),
    atLeast: z
      .boolean()
      .describe("A proxy's flow readings were capped during the window: the flow counts are lower bounds"),
    broken: z
      .int()
      .min(0)
      .nullable()
      .describe("Connections broken (lastResort flows); null = unknown (a proxy did not report)"),
    verdict: z
      .enum(["none_broken", "broken", "unknown"])
      .describe('none_broken: every proxy reported and no flow was reset ("0 connections broken")'),
  })
  .describe("The measured outcome of one table change");
export type ChangeReportBody = z.infer<typeof ChangeReportBody>;

export const ChangeReport = z
  .object({
    tableVersionId: TableVersionId,
    poolId: PoolId,
    version: z.int().min(1),
    status: ChangeReportStatus,
    openedAt: z.iso.datetime(),
    closedAt: z.iso.datetime().nullable(),
    predicted: ConnectionImpact.nullable().describe("What the change's preview predicted, when it made one"),
    report: ChangeReportBody.nullable().describe("null until done"),
  })
  .describe("A table version's change report")
  .meta({ id: "ChangeReport" });
export type ChangeReport = z.infer<typeof ChangeReport>;
