import { describe, expect, it } from "vitest";
import { perCpuStride, REDIRECT_COUNTER_NAMES, sumPerCpu } from "./redirect-stats-map";

describe("REDIRECT_COUNTER_NAMES", () => {
  it("is the map's index order (enum tide_redirect_counter): total first, the why counters last", () => {
    expect(REDIRECT_COUNTER_NAMES).toHaveLength(17);
    expect(REDIRECT_COUNTER_NAMES[0]).toBe("total");
    expect(REDIRECT_COUNTER_NAMES[10]).toBe("not_gue");
    expect(REDIRECT_COUNTER_NAMES[14]).toBe("decap_failed");
    expect(REDIRECT_COUNTER_NAMES[15]).toBe("accepted_second_chance");
    expect(REDIRECT_COUNTER_NAMES[16]).toBe("accepted_alternate_hash");
  });
});

describe("sumPerCpu", () => {
  it("sums each entry's CPU slots", () => {
    const cpus = 3;
    const values = new BigUint64Array([1n, 2n, 3n, 10n, 0n, 5n]); // entry 0: CPUs 0..2, entry 1: CPUs 0..2
    expect(sumPerCpu(new Uint8Array(values.buffer), 2, cpus, 8)).toEqual([6, 15]);
  });

  it("rounds value slots up to 8 bytes", () => {
    expect(perCpuStride(8)).toBe(8);
    expect(perCpuStride(4)).toBe(8);
    expect(perCpuStride(12)).toBe(16);
  });

  it("keeps u64 sums past 2^32", () => {
    const values = new BigUint64Array([2n ** 40n, 2n ** 40n]);
    expect(sumPerCpu(new Uint8Array(values.buffer), 1, 2, 8)).toEqual([2 ** 41]);
  });
});
