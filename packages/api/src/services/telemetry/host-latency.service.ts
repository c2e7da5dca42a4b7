import type { NetnsRef, Observation } from "@tide/contracts";
import { latestSample, samplesBetween, type Db } from "@tide/db";
import { bucketBounds, histogramCount, histogramQuantile, windowRates } from "@tide/diagnostics";
import type { HostLatency, LatencyBucket, LatencyInput } from "../../schemas/latency.schema";
import { findHost } from "../fleet/host.service";

/** Processes listed at most: the ones with the most connect() calls in the window. */
export const LATENCY_MAX_PROCESSES = 50;

function buckets(histogram: readonly number[]): LatencyBucket[] {
  const out: LatencyBucket[] = [];
  histogram.forEach((count, i) => {
    if (count <= 0) return;
    const [loUs, hiUs] = bucketBounds(i);
    out.push({ loUs, hiUs, count });
  });
  return out;
}

/**
 * connect() latency per process and NET_RX run times per CPU over the window ending at the host's
 * newest sample. The probes report absolute log2 histograms since they loaded; the window's
 * distribution is the growth between consecutive samples (diagnostics' windowRates, which leaves
 * out intervals where a probe restarted), so a process that was slow an hour ago does not colour
 * the last minute.
 */
export async function hostLatency(db: Db, input: LatencyInput): Promise<HostLatency> {
  const host = await findHost(db, input.hostId);
  const newest = await latestSample(db, host.id);
  const empty: HostLatency = {
    hostId: host.id,
    from: null,
    to: null,
    seconds: 0,
    probes: { connectLatency: false, netRxSoftirq: false },
    connect: [],
    netRx: [],
  };
  if (!newest) return empty;
  const from = new Date(newest.sampledAt.getTime() - input.seconds * 1000);
  const samples = (await samplesBetween(db, host.id, from)).map((r) => r.payload as unknown as Observation);
  const last = samples[samples.length - 1];
  if (!last) return empty;
  const on = (probe: string) => last.probes.some((p) => p.probe === probe && p.state === "on");
  const r = windowRates(samples);
  const netns = new Map<number, NetnsRef>();
  for (const s of samples) for (const n of s.namespaces) netns.set(n.netns.inode, n.netns);

  const connect = [...(r?.connect.values() ?? [])]
    .map((c) => {
      const calls = histogramCount(c.latencyUs);
      return {
        netns: netns.get(c.netnsInode) ?? null,
        pid: c.pid,
        comm: c.comm,
        calls,
        perSecond: c.seconds > 0 ? calls / c.seconds : 0,
        p50Us: histogramQuantile(c.latencyUs, 0.5),
        p99Us: histogramQuantile(c.latencyUs, 0.99),
        eaddrnotavail: c.eaddrnotavail,
        evenPorts: c.evenPorts,
        oddPorts: c.oddPorts,
        buckets: buckets(c.latencyUs),
      };
    })
    .filter((c) => c.calls > 0 || c.eaddrnotavail > 0)
    .sort((a, b) => b.calls - a.calls || a.pid - b.pid)
    .slice(0, LATENCY_MAX_PROCESSES);

  // The first sample's intervalMaxUs covers the time before the window.
  const maxByCpu = new Map<number, number>();
  for (const s of samples.slice(1))
    for (const x of s.probeResults.netRxSoftirq)
      maxByCpu.set(x.cpu, Math.max(maxByCpu.get(x.cpu) ?? 0, x.intervalMaxUs));
  const netRx = [...(r?.netRx.entries() ?? [])]
    .map(([cpu, d]) => ({
      cpu,
      runs: histogramCount(d.durationUs),
      p50Us: histogramQuantile(d.durationUs, 0.5),
      p99Us: histogramQuantile(d.durationUs, 0.99),
      maxUs: maxByCpu.get(cpu) ?? null,
      buckets: buckets(d.durationUs),
    }))
    .sort((a, b) => a.cpu - b.cpu);

  return {
    hostId: host.id,
    from: samples[0]!.sampledAt,
    to: last.sampledAt,
    seconds: r?.seconds ?? 0,
    probes: { connectLatency: on("connect_latency"), netRxSoftirq: on("net_rx_softirq") },
    connect,
    netRx,
  };
}
