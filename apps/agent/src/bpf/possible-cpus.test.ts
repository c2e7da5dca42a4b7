import { describe, expect, it } from "vitest";
import { parseCpuList } from "./possible-cpus";

describe("parseCpuList", () => {
  it.each([
    ["0\n", 1],
    ["0-1\n", 2],
    ["0-3,5,7-8", 9], // gaps count: per-CPU maps are sized by the highest CPU + 1
    ["2", 3],
  ])("%j -> %i slots", (text, n) => {
    expect(parseCpuList(text)).toBe(n);
  });

  it("refuses what it cannot read", () => {
    expect(() => parseCpuList("")).toThrow(/bad CPU list/);
    expect(() => parseCpuList("0-x")).toThrow(/bad CPU list/);
  });
});
