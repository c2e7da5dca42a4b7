import type { CpuObservation } from "@tide/contracts";

export interface SoftnetRow {
  cpu: number;
  processed: number;
  dropped: number;
  timeSqueeze: number;
}

/**
 * Parse /proc/net/softnet_stat: one line per online CPU, hex columns; column 1 processed, 2 dropped,
 * 3 time_squeeze. Kernels since 5.10 put the CPU number in column 13; older ones list CPUs in order.
 */
export function parseSoftnetStat(text: string): SoftnetRow[] {
  const rows: SoftnetRow[] = [];
  text
    .split("\n")
    .filter((l) => l.trim() !== "")
    .forEach((line, index) => {
      const cols = line.trim().split(/\s+/);
      const hex = (i: number): number => {
        const raw = cols[i];
        return raw !== undefined && /^[0-9a-fA-F]+$/.test(raw) ? parseInt(raw, 16) : 0;
      };
      rows.push({
        cpu: cols.length >= 13 ? hex(12) : index,
        processed: hex(0),
        dropped: hex(1),
        timeSqueeze: hex(2),
      });
    });
  return rows;
}

/** Parse /proc/softirqs: the NET_RX count per CPU (the header names the CPUs: CPU0 CPU1 ...). */
export function parseSoftirqsNetRx(text: string): Map<number, number> {
  const lines = text.split("\n");
  const header = lines[0] ?? "";
  const cpus = header
    .trim()
    .split(/\s+/)
    .map((c) => Number(c.replace(/^CPU/, "")));
  const out = new Map<number, number>();
  const line = lines.find((l) => l.trim().startsWith("NET_RX:"));
  if (line === undefined) return out;
  const values = line.trim().slice("NET_RX:".length).trim().split(/\s+/);
  values.forEach((v, i) => {
    const cpu = cpus[i];
    if (cpu !== undefined && Number.isInteger(cpu) && /^\d+$/.test(v)) out.set(cpu, Number(v));
  });
  return out;
}

/** Join softnet_stat rows and NET_RX counts into the contract's per-CPU observations. */
export function cpuObservations(
  softnet: readonly SoftnetRow[],
  netRx: ReadonlyMap<number, number>,
): CpuObservation[] {
  return softnet.map((r) => ({
    cpu: r.cpu,
    softnetProcessed: r.processed,
    softnetDropped: r.dropped,
    softnetTimeSqueeze: r.timeSqueeze,
    netRxSoftirqs: netRx.get(r.cpu) ?? 0,
  }));
}
