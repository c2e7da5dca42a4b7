import { describe, expect, it } from "vitest";
import { boundedBatch, jsonBytes } from "./batch-size";

describe("boundedBatch", () => {
  const sizes = (xs: number[]) => boundedBatch(xs, 100, (x) => x);

  it("takes the longest prefix within the byte bound", () => {
    expect(sizes([40, 40, 40])).toEqual([40, 40]);
    expect(sizes([50, 50, 1])).toEqual([50, 50]);
    expect(sizes([10, 20, 30])).toEqual([10, 20, 30]);
  });

  it("sends one oversized item alone rather than nothing, and nothing from nothing", () => {
    expect(sizes([500, 1])).toEqual([500]);
    expect(sizes([])).toEqual([]);
  });

  it("measures items as the JSON bytes they add to a body", () => {
    expect(jsonBytes({ a: "é" })).toBe(Buffer.byteLength('{"a":"é"}'));
    const samples = Array.from({ length: 10 }, (_, i) => ({ i, pad: "x".repeat(1000) }));
    const batch = boundedBatch(samples, 3 * jsonBytes(samples[0]), jsonBytes);
    expect(batch.map((s) => s.i)).toEqual([0, 1, 2]);
  });
});
