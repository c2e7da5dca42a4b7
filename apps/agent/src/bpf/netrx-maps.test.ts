import { describe, expect, it } from "vitest";
import { decodeNetRx, NETRX_PEAK_BYTES, NETRX_STATS_BYTES, TP_HIST_SLOTS } from "./netrx-maps";

/** struct tp_netrx_stats + tp_netrx_peak per CPU, as the kernel copies them out (u64 words). */
function values(cpus: { stats: bigint[]; peak: [bigint, bigint] }[]): {
  stats: Uint8Array;
  peak: Uint8Array;
} {
  const words = NETRX_STATS_BYTES / 8;
  const stats = new BigUint64Array(words * cpus.length);
  const peak = new BigUint64Array(2 * cpus.length);
  cpus.forEach((c, i) => {
    stats.set(c.stats, i * words);
    peak.set(c.peak, i * 2);
  });
  return { stats: new Uint8Array(stats.buffer), peak: new Uint8Array(peak.buffer) };
}

/** runs, total_ns, hist[27], waits, wait_total_ns, wait_hist[27] */
function statsWords(
  runs: bigint,
  totalNs: bigint,
  hist: bigint[],
  waits: bigint,
  waitNs: bigint,
  waitHist: bigint[],
) {
  const pad = (h: bigint[]) => [...h, ...new Array<bigint>(TP_HIST_SLOTS - h.length).fill(0n)];
  return [runs, totalNs, ...pad(hist), waits, waitNs, ...pad(waitHist)];
}

describe("decodeNetRx", () => {
  it("has the C layouts' sizes: 464 and 16 bytes", () => {
    expect(NETRX_STATS_BYTES).toBe(464);
    expect(NETRX_PEAK_BYTES).toBe(16);
  });

  it("decodes each CPU's slot with the loader's JSON meanings (ns -> µs truncated)", () => {
    const { stats, peak } = values([
      { stats: statsWords(5n, 20_999n, [1n, 2n, 2n], 3n, 4_500n, [0n, 3n]), peak: [7_999n, 1_000n] },
      { stats: statsWords(0n, 0n, [], 0n, 0n, []), peak: [0n, 0n] },
    ]);
    const [c0, c1] = decodeNetRx(stats, peak, 2);
    expect(c0).toMatchObject({
      cpu: 0,
      runs: 5,
      totalUs: 20,
      maxUs: 7,
      waits: 3,
      waitTotalUs: 4,
      waitMaxUs: 1,
    });
    expect(c0!.hist.slice(0, 4)).toEqual([1, 2, 2, 0]);
    expect(c0!.hist).toHaveLength(TP_HIST_SLOTS);
    expect(c0!.waitHist.slice(0, 3)).toEqual([0, 3, 0]);
    expect(c1).toMatchObject({ cpu: 1, runs: 0, maxUs: 0 });
  });

  it("reads the last histogram bucket and u64s past 2^32", () => {
    const hist = new Array<bigint>(TP_HIST_SLOTS).fill(0n);
    hist[TP_HIST_SLOTS - 1] = 2n ** 40n;
    const { stats, peak } = values([{ stats: statsWords(2n ** 40n, 0n, hist, 0n, 0n, []), peak: [0n, 0n] }]);
    const [c0] = decodeNetRx(stats, peak, 1);
    expect(c0!.runs).toBe(2 ** 40);
    expect(c0!.hist[TP_HIST_SLOTS - 1]).toBe(2 ** 40);
  });

  it("refuses buffers too short for the CPUs", () => {
    const { stats, peak } = values([{ stats: statsWords(1n, 1n, [], 0n, 0n, []), peak: [0n, 0n] }]);
    expect(() => decodeNetRx(stats, peak, 2)).toThrow(/too short/);
  });
});
