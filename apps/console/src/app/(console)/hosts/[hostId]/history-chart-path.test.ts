import { describe, expect, it } from "vitest";
import { historyPaths, runsOf } from "./history-chart-path";

const box = { width: 102, height: 12, pad: 1 };

describe("history chart paths", () => {
  it("finds runs between gaps", () => {
    expect(runsOf([1, 2, null, null, 3, null, 4, 5])).toEqual([
      [0, 1],
      [4, 4],
      [6, 7],
    ]);
    expect(runsOf([null, null])).toEqual([]);
  });
  it("breaks the line and the band at every gap, never drawing a gap as zero", () => {
    const avg = [0, 10, null, 5, 5];
    const p = historyPaths({ min: [0, 5, null, 5, 0], avg, max: [0, 10, null, 5, 10] }, box);
    expect(p.peak).toBe(10);
    expect(p.gaps).toBe(1);
    // Two sub-paths for the line (0..1 and 3..4) and two closed band polygons.
    expect(p.line.match(/M/g)).toHaveLength(2);
    expect(p.band.match(/Z/g)).toHaveLength(2);
    // x of bucket 3 of 5 is 1 + 3/4 * 100 = 76; the line starts a new run there.
    expect(p.line).toContain("M76.0,");
    // The band's top at bucket 4 is the max (10 -> y = 1), its bottom the min (0 -> y = 11).
    expect(p.band).toContain("101.0,1.0");
    expect(p.band).toContain("101.0,11.0");
  });
  it("draws a lone bucket as a tick and nothing at all for no data", () => {
    expect(
      historyPaths({ min: [null, 3, null], avg: [null, 3, null], max: [null, 3, null] }, box).line,
    ).toMatch(/^M50\.0,\d+\.\d h2$/);
    expect(historyPaths({ min: [null], avg: [null], max: [null] }, box)).toEqual({
      line: "",
      band: "",
      peak: 0,
      gaps: 1,
    });
  });
});
