import { describe, expect, it } from "vitest";
import { deviations, formatDeviation } from "./share-deviation";

describe("share deviation", () => {
  it("measures each holder against an even split among the holders only", () => {
    // A drained proxy (0 rows) does not count: the other three split 65,536.
    const { even, items } = deviations([22_000, 21_768, 0, 21_768]);
    expect(even).toBeCloseTo(65_536 / 3);
    expect(items[0]!.deviation).toBeCloseTo(22_000 / (65_536 / 3) - 1);
    expect(items[2]).toEqual({ rows: 0, share: 0, deviation: null });
    expect(items[1]!.share).toBeCloseTo(21_768 / 65_536);
  });

  it("has no even share when nobody holds rows", () => {
    expect(deviations([0, 0]).even).toBeNull();
  });

  it("formats signed percentages with one decimal and a plain zero", () => {
    expect(formatDeviation(0.0123)).toBe("+1.2%");
    expect(formatDeviation(-0.004)).toBe("\u22120.4%");
    expect(formatDeviation(0.0004)).toBe("±0.0%");
    expect(formatDeviation(-0.0004)).toBe("±0.0%");
  });
});
