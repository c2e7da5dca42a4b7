import { HostRecordId, NetnsRef } from "@tide/contracts";
import { z } from "zod";
import { HostRef } from "./hosts.schema";

/** API shapes of a host's history over a range (issue 16; services/telemetry/host-history.plan.ts). */

export const HistoryInput = z.object({
  hostId: HostRef,
  // Plain strings, checked by the plan, so a bad value is refused with one plain sentence.
  range: z
    .string()
    .max(16)
    .optional()
    .describe("15m, 1h, 24h or 7d back from now; or give from and to instead"),
  from: z.string().max(64).optional().describe("Start of the range, ISO 8601 (e.g. 2026-11-27T03:00:00Z)"),
  to: z.string().max(64).optional().describe("End of the range, ISO 8601; after from"),
});

const Values = z.array(z.number().nullable());

export const CounterHistory = z
  .object({
    counter: z.string().describe("nstat counter name, e.g. TcpExtListenDrops"),
    min: Values.describe("Lowest per-second rate in each bucket; null: no data (a gap)"),
    avg: Values.describe("Average per-second rate in each bucket, weighted by time; null: a gap"),
    max: Values.describe("Highest per-second rate in each bucket; null: a gap"),
    last: Values.describe("Last per-second rate in each bucket; null: a gap"),
  })
  .describe(
    "One counter's rates per bucket (arrays are `points` long, bucket i starts at start + i * stepS)",
  );

export const NamespaceHistory = z
  .object({
    key: z.string().describe("Namespace key: root, name:<name> or inode:<n>"),
    netns: NetnsRef,
    series: z.array(CounterHistory),
  })
  .describe("A namespace's charted counters over the range");

export const HostHistory = z
  .object({
    hostId: HostRecordId,
    hostName: z.string(),
    range: z.string().nullable().describe("The named range asked for, or null for from/to"),
    from: z.iso.datetime(),
    to: z.iso.datetime(),
    tier: z
      .enum(["samples", "rollups"])
      .describe("samples: the 1 s tier (raw and chunks); rollups: the one-minute rollups"),
    resolutionS: z.int().describe("Resolution of the tier: 1 (samples) or 60 (rollups), s"),
    stepS: z
      .int()
      .describe("Bucket width, s (the resolution, or a multiple keeping a chart to ~1,500 points)"),
    label: z.string().describe('How a chart names it, e.g. "1 s samples", "1 min rollups, 10 min buckets"'),
    start: z.iso.datetime().describe("Start of the first bucket"),
    points: z.int().min(1).describe("Buckets per series"),
    sourcePoints: z.int().min(0).describe("Samples or rollup minutes read"),
    counters: z.array(z.string()).describe("The counters charted, in display order"),
    namespaces: z.array(NamespaceHistory),
  })
  .describe("A host's counter rates over a range, served from the tier that holds it");
export type HostHistory = z.infer<typeof HostHistory>;
