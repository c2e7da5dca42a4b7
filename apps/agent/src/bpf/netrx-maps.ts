import { constants } from "node:os";
import type { NodeBpf } from "./node-bpf";
import { PinnedPerCpuArray } from "./pinned-map";
import { perCpuStride } from "./redirect-stats-map";

/**
 * tide-probes' NET_RX maps, pinned under its --pin-dir (dataplane/probes/tide_probes_maps.h):
 * tp_netrx (PERCPU_ARRAY, 1 entry, struct tp_netrx_stats: cumulative run/wait histograms) and
 * tp_netrx_peak (PERCPU_ARRAY, 1 entry, struct tp_netrx_peak: maxima the loader zeroes after
 * every sample). Only these two of the five pinned maps are read from Node: they feed the
 * net_rx_softirq probe result. tp_overflow, tp_connect and tp_icmp_fragnd stay on the JSON lines.
 */
export const NETRX_PIN_NAME = "tp_netrx";
export const NETRX_PEAK_PIN_NAME = "tp_netrx_peak";

/** TP_HIST_SLOTS (tide_probes_consts.h): log2 µs buckets per histogram. */
export const TP_HIST_SLOTS = 27;
/** sizeof(struct tp_netrx_stats): runs, total_ns, hist[27], waits, wait_total_ns, wait_hist[27]. */
export const NETRX_STATS_BYTES = (2 + TP_HIST_SLOTS) * 8 * 2;
/** sizeof(struct tp_netrx_peak): run_max_ns, wait_max_ns. */
export const NETRX_PEAK_BYTES = 16;

/**
 * One CPU's NET_RX figures with the loader's JSON field meanings (its `netrx` sample entries):
 * ns converted to µs by truncating division, as the loader does.
 */
export interface NetRxCpuRaw {
  cpu: number;
  runs: number;
  totalUs: number;
  /** Longest run since the loader's last sample (it zeroes tp_netrx_peak after each). */
  maxUs: number;
  hist: number[];
  waits: number;
  waitTotalUs: number;
  waitMaxUs: number;
  waitHist: number[];
}

/** A u64 as a Number without BigInt (4x cheaper to decode); exact below 2^53, as JSON numbers are. */
const u64 = (v: DataView, off: number): number =>
  v.getUint32(off, true) + v.getUint32(off + 4, true) * 2 ** 32;
const us = (ns: number): number => Math.floor(ns / 1000);

/**
 * Decode the per-CPU copies of tp_netrx and tp_netrx_peak (key 0) as the kernel copies them out:
 * `cpus` slots each, slot size rounded up to 8 (both structs already are). Little-endian hosts.
 */
export function decodeNetRx(stats: Uint8Array, peak: Uint8Array, cpus: number): NetRxCpuRaw[] {
  const s = new DataView(stats.buffer, stats.byteOffset, stats.byteLength);
  const p = new DataView(peak.buffer, peak.byteOffset, peak.byteLength);
  const sStride = perCpuStride(NETRX_STATS_BYTES);
  const pStride = perCpuStride(NETRX_PEAK_BYTES);
  if (stats.byteLength < sStride * cpus || peak.byteLength < pStride * cpus)
    throw new Error(`NET_RX map values too short for ${cpus} CPUs`);
  const hist = (base: number): number[] => {
    const h = new Array<number>(TP_HIST_SLOTS);
    for (let i = 0; i < TP_HIST_SLOTS; i++) h[i] = u64(s, base + i * 8);
    return h;
  };
  const out: NetRxCpuRaw[] = [];
  for (let c = 0; c < cpus; c++) {
    const b = c * sStride;
    const w = b + (2 + TP_HIST_SLOTS) * 8; // the wait half of struct tp_netrx_stats
    out.push({
      cpu: c,
      runs: u64(s, b),
      totalUs: us(u64(s, b + 8)),
      maxUs: us(u64(p, c * pStride)),
      hist: hist(b + 16),
      waits: u64(s, w),
      waitTotalUs: us(u64(s, w + 8)),
      waitMaxUs: us(u64(p, c * pStride + 8)),
      waitHist: hist(w + 16),
    });
  }
  return out;
}

const { ENOENT } = constants.errno;

/**
 * One pinned single-entry PERCPU_ARRAY (pinned-map.ts). Its buffer holds every possible CPU's slot:
 * the addon does not size it (see redirect-stats-map.ts).
 */
class PinnedPerCpuEntry {
  private readonly map: PinnedPerCpuArray;
  readonly value: Uint8Array;
  private readonly key = new Uint8Array(4); // key 0

  constructor(
    private readonly bpf: NodeBpf,
    readonly pinPath: string,
    valueSize: number,
    cpus: number,
  ) {
    this.map = new PinnedPerCpuArray(bpf, pinPath, { valueSize, maxEntries: 1, what: "the expected map" });
    this.value = new Uint8Array(perCpuStride(valueSize) * cpus);
  }

  read(): Uint8Array {
    const { ref } = this.map.open();
    const status = this.bpf.native.mapLookupElem(ref.fd, this.key, this.value, 0);
    if (status !== 0)
      throw new Error(
        `bpf_map_lookup_elem ${this.pinPath}[0]: errno ${-status}${-status === ENOENT ? " (ENOENT)" : ""}`,
      );
    return this.value;
  }

  close(): void {
    this.map.close();
  }
}

/** tp_netrx + tp_netrx_peak under one pin directory: two lookups per read, no reset (the loader owns it). */
export class NetRxMaps {
  private readonly stats: PinnedPerCpuEntry;
  private readonly peak: PinnedPerCpuEntry;

  constructor(
    bpf: NodeBpf,
    readonly pinDir: string,
    /** Slots per per-CPU value: the possible CPUs (see possible-cpus.ts). */
    private readonly cpus: number,
  ) {
    this.stats = new PinnedPerCpuEntry(bpf, `${pinDir}/${NETRX_PIN_NAME}`, NETRX_STATS_BYTES, cpus);
    this.peak = new PinnedPerCpuEntry(bpf, `${pinDir}/${NETRX_PEAK_PIN_NAME}`, NETRX_PEAK_BYTES, cpus);
  }

  /** Every possible CPU's figures; throws with the reason when a map cannot be read. */
  read(): NetRxCpuRaw[] {
    return decodeNetRx(this.stats.read(), this.peak.read(), this.cpus);
  }

  close(): void {
    this.stats.close();
    this.peak.close();
  }
}
