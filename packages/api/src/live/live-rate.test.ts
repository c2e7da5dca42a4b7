import { describe, expect, it } from "vitest";
import { liveRate } from "./host-live";

describe("liveRate (live charts)", () => {
  it("is the per-second growth of a counter", () => {
    expect(liveRate(1_500, 1_000, 2)).toBe(250);
  });

  it("is null, never Infinity or NaN, for resets, gaps, non-counters and a zero interval", () => {
    expect(liveRate(10, 1_000, 1)).toBeNull(); // reset
    expect(liveRate(undefined, 1_000, 1)).toBeNull();
    expect(liveRate(5, undefined, 1)).toBeNull();
    expect(liveRate(1e300, 0, 1)).toBeNull(); // above any 64-bit counter
    expect(liveRate(5, 1, 0)).toBeNull();
    expect(liveRate(5, 1, Number.NaN)).toBeNull();
    const huge = liveRate(2 ** 64 - 1, 0, 1e-300);
    expect(huge === null || Number.isFinite(huge)).toBe(true);
  });
});
