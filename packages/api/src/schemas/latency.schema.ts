import { NetnsRef } from "@tide/contracts";
import { z } from "zod";
import { HostRef } from "./hosts.schema";

/** API shapes of a host's latency distributions (connect() per process, NET_RX per CPU). */

export const LatencyInput = z.object({
  hostId: HostRef,
  seconds: z.coerce
    .number()
    .int()
    .min(5)
    .max(3600)
    .default(60)
    .describe("Window ending at the host's newest sample, in seconds (5-3600, default 60)"),
});
export type LatencyInput = z.infer<typeof LatencyInput>;

export const LatencyBucket = z
  .object({
    loUs: z.number().min(0).describe("Lower bound, µs (inclusive)"),
    hiUs: z.number().min(0).describe("Upper bound, µs (exclusive)"),
    count: z.int().min(0).describe("Events in the window that fell in [loUs, hiUs)"),
  })
  .describe("One log2 bucket");
export type LatencyBucket = z.infer<typeof LatencyBucket>;

const Quantile = z
  .number()
  .nullable()
  .describe("µs, interpolated inside its log2 bucket; null with no events");

export const ConnectLatencySummary = z
  .object({
    netns: NetnsRef.nullable().describe("The process's namespace, if the sample still lists it"),
    pid: z.int().min(0),
    comm: z.string(),
    calls: z.int().min(0).describe("connect() calls in the window"),
    perSecond: z.number().min(0),
    p50Us: Quantile,
    p99Us: Quantile,
    eaddrnotavail: z.int().min(0).describe("connect() calls that failed with EADDRNOTAVAIL in the window"),
    evenPorts: z.int().min(0).describe("New connections that got an even source port"),
    oddPorts: z.int().min(0).describe("New connections that got an odd source port"),
    buckets: z.array(LatencyBucket).describe("Non-empty buckets, smallest first"),
  })
  .describe("connect() latency of one process over the window (connect_latency probe)");
export type ConnectLatencySummary = z.infer<typeof ConnectLatencySummary>;

export const NetRxSummary = z
  .object({
    cpu: z.int().min(0),
    runs: z.int().min(0).describe("NET_RX softirq runs in the window"),
    p50Us: Quantile,
    p99Us: Quantile,
    maxUs: z.number().min(0).nullable().describe("Longest single run reported in the window"),
    buckets: z.array(LatencyBucket).describe("Non-empty buckets, smallest first"),
  })
  .describe("NET_RX softirq run times of one CPU over the window (net_rx_softirq probe)");
export type NetRxSummary = z.infer<typeof NetRxSummary>;

export const HostLatency = z
  .object({
    hostId: z.string(),
    from: z.iso.datetime().nullable().describe("Oldest sample used"),
    to: z.iso.datetime().nullable().describe("Newest sample used"),
    seconds: z.number().min(0).describe("Time covered by the samples used"),
    probes: z
      .object({
        connectLatency: z.boolean().describe("connect_latency probe on in the newest sample"),
        netRxSoftirq: z.boolean().describe("net_rx_softirq probe on in the newest sample"),
      })
      .describe("Whether the probes behind these numbers are running"),
    connect: z.array(ConnectLatencySummary).describe("Processes that called connect(), most calls first"),
    netRx: z.array(NetRxSummary).describe("CPUs, by number"),
  })
  .describe("Latency distributions of a host over a window");
export type HostLatency = z.infer<typeof HostLatency>;
