import { constants } from "node:os";
import { RedirectCounters } from "@tide/contracts";
import type { BpfMapRef, NodeBpf } from "./node-bpf";
import { PinnedPerCpuArray } from "./pinned-map";

/** The pinned stats map's file name inside tide-redirect's --pin-dir (REDIRECT_PIN_STATS). */
export const REDIRECT_STATS_PIN_NAME = "tide_redirect_stats";

/**
 * Counter names by map index. The contract lists them in the order of enum tide_redirect_counter
 * (dataplane/redirect/tide_redirect_structs.h, the X-macro that also names them on the control
 * socket); the lab test checks a map reading against the socket's stats reply.
 */
export const REDIRECT_COUNTER_NAMES = Object.keys(RedirectCounters.shape) as (keyof RedirectCounters)[];

/** Kernel map value slots are 8-byte aligned: a per-CPU value takes round_up(valueSize, 8) per CPU. */
export function perCpuStride(valueSize: number): number {
  return Math.ceil(valueSize / 8) * 8;
}

/**
 * Sum a run of per-CPU u64 values: `entries` entries, each `cpus` slots of `stride` bytes
 * (little-endian hosts only, as the agent's). Returns Numbers: a u64 over 2^53 loses its low bits,
 * as it does in the control socket's JSON.
 */
export function sumPerCpu(values: Uint8Array, entries: number, cpus: number, stride: number): number[] {
  const view = new DataView(values.buffer, values.byteOffset, values.byteLength);
  const out: number[] = [];
  for (let e = 0; e < entries; e++) {
    let sum = 0n;
    for (let c = 0; c < cpus; c++) sum += view.getBigUint64((e * cpus + c) * stride, true);
    out.push(Number(sum));
  }
  return out;
}

const { ENOENT } = constants.errno;

/**
 * tide-redirect's pinned stats map (BPF_MAP_TYPE_PERCPU_ARRAY of u64, one entry per counter),
 * read through the npm `bpf` module (kept open and reopened with the pin: pinned-map.ts).
 */
export class RedirectStatsMap {
  private readonly map: PinnedPerCpuArray;
  private values = new Uint8Array(0);
  private keys = new Uint8Array(0);
  private readonly cursor = new Uint8Array(4);

  constructor(
    private readonly bpf: NodeBpf,
    readonly pinPath: string,
    /** Slots per per-CPU value: the possible CPUs (see possible-cpus.ts). */
    private readonly cpus: number,
  ) {
    this.map = new PinnedPerCpuArray(bpf, pinPath, {
      valueSize: 8,
      maxEntries: REDIRECT_COUNTER_NAMES.length,
      what: "tide-redirect's stats map",
    });
  }

  /** The counters, summed over CPUs; throws with the reason when the map cannot be read. */
  read(): RedirectCounters {
    const ref = this.open();
    const stride = perCpuStride(ref.valueSize);
    const n = ref.maxEntries;
    // One syscall for every entry (Linux 5.6+); the array's end answers ENOENT with a full count.
    const [status, count] = this.bpf.native.mapLookupBatch(
      ref.fd,
      undefined,
      this.cursor,
      this.keys,
      this.values,
      n,
      {},
    );
    if (!((status === 0 || status === -ENOENT) && count === n)) this.readEach(ref, stride);
    const sums = sumPerCpu(this.values, n, this.cpus, stride);
    return Object.fromEntries(
      REDIRECT_COUNTER_NAMES.map((name, i) => [name, sums[i] ?? 0]),
    ) as RedirectCounters;
  }

  /** One lookup per entry (kernels without batch lookups). */
  private readEach(ref: BpfMapRef, stride: number): void {
    const key = new Uint8Array(4);
    const keyView = new DataView(key.buffer);
    const size = stride * this.cpus;
    for (let i = 0; i < ref.maxEntries; i++) {
      keyView.setUint32(0, i, true);
      const status = this.bpf.native.mapLookupElem(
        ref.fd,
        key,
        this.values.subarray(i * size, (i + 1) * size),
        0,
      );
      if (status !== 0) throw new Error(`bpf_map_lookup_elem ${this.pinPath}[${i}]: errno ${-status}`);
    }
  }

  /** The open map; buffers sized for it when it was (re)opened. */
  private open(): BpfMapRef {
    const { ref, reopened } = this.map.open();
    // Sized for the kernel's per-CPU copy-out: it writes every possible CPU's slot, no checks in the addon.
    if (reopened) {
      this.values = new Uint8Array(ref.maxEntries * perCpuStride(ref.valueSize) * this.cpus);
      this.keys = new Uint8Array(ref.maxEntries * 4);
    }
    return ref;
  }

  close(): void {
    this.map.close();
  }
}
