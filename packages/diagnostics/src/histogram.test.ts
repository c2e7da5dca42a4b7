import { describe, expect, it } from "vitest";
import { bucketBounds, histogramQuantile } from "./histogram";

describe("histogramQuantile", () => {
  it("returns null for an empty histogram", () => {
    expect(histogramQuantile([], 0.99)).toBeNull();
    expect(histogramQuantile([0, 0, 0], 0.5)).toBeNull();
  });

  it("interpolates inside the bucket that holds the rank", () => {
    // 100 calls in [16, 32) µs: p50 is half way, p99 near the top.
    const h = [0, 0, 0, 0, 100];
    expect(histogramQuantile(h, 0.5)).toBe(24);
    expect(histogramQuantile(h, 0.99)).toBeCloseTo(31.84, 2);
  });

  it("puts p99 in the slow tail when more than 1% is slow", () => {
    // 97 fast calls (16-32 µs), 3 slow (64-128 µs): the 99th call is slow.
    const h = [0, 0, 0, 0, 97, 0, 3];
    const p99 = histogramQuantile(h, 0.99)!;
    expect(p99).toBeGreaterThanOrEqual(64);
    expect(p99).toBeLessThan(128);
  });

  it("bucket 0 covers 0 and 1 µs", () => {
    expect(bucketBounds(0)).toEqual([0, 2]);
    expect(bucketBounds(5)).toEqual([32, 64]);
  });
});
